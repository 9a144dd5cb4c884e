//! tramp's errors as Python exceptions: `tramp.TraceError` carries the
//! CLI's message (what was read, where it stopped: byte offset, record
//! number) and, where a report covers the records before the damage, that
//! partial report as JSON.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    tramp,
    TraceError,
    PyException,
    "A trace could not be read whole, or a job was refused; the message says what and where."
);

/// The exception of a library error.
pub fn raise(e: tramp_api::Error) -> PyErr {
    TraceError::new_err(e.to_string())
}

/// The exception of a library error after a partial report (`json`).
pub fn raise_partial(e: tramp_api::Error, json: String) -> PyErr {
    TraceError::new_err((e.to_string(), json))
}

/// A value Python gave that tramp refuses (a policy, a size).
pub fn invalid(why: impl Into<String>) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(why.into())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("TraceError", m.py().get_type::<TraceError>())
}
