//! tramp's errors as Python exceptions: `tramp.TraceError` (defined in
//! `tramp/_errors.py`) carries the CLI's message, every cause in it
//! (what was read, where it stopped: byte offset, record number), and,
//! where a report covers the records before the damage, that partial
//! report; a refused value is a `ValueError`.

use pyo3::prelude::*;

/// The error and its causes, as the CLI prints them after `tramp: error:`.
pub fn message(e: &(dyn std::error::Error + 'static)) -> String {
    tramp_api::error::message(e)
}

fn trace_error(message: String, report: Option<String>) -> PyErr {
    Python::attach(|py| {
        let made = py
            .import("tramp._errors")
            .and_then(|m| m.getattr("TraceError"))
            .and_then(|class| class.call1((message.clone(), report)));
        match made {
            Ok(exc) => PyErr::from_value(exc),
            Err(e) => e,
        }
    })
}

/// The exception of a library error.
pub fn raise(e: tramp_api::Error) -> PyErr {
    trace_error(message(&e), None)
}

/// The exception of a library error after a partial report (`json`).
pub fn raise_partial(e: tramp_api::Error, json: String) -> PyErr {
    trace_error(message(&e), Some(json))
}

/// `json` if the read ended cleanly (or, unless `strict`, with damage it
/// skipped), else the error with `json` as the partial report.
pub fn ended(json: String, error: Option<tramp_api::Error>, strict: bool) -> PyResult<String> {
    match error {
        Some(e) if strict || !matches!(e, tramp_api::Error::Damaged { .. }) => {
            Err(raise_partial(e, json))
        }
        _ => Ok(json),
    }
}

/// A value Python gave that tramp refuses (a policy, a size).
pub fn invalid(why: impl Into<String>) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(why.into())
}
