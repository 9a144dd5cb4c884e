//! A trace's reports for `tramp.Trace`: each returned as the JSON the
//! CLI prints with `--json`, which the Python side decodes.

use pyo3::prelude::*;

use crate::errors::{raise, raise_partial};

pub fn spec(path: &str, format: Option<String>) -> tramp_api::TraceSpec {
    tramp_api::TraceSpec {
        format,
        ..tramp_api::TraceSpec::path(path)
    }
}

/// `tramp stats --json` of the trace; `strict`: damage raises (with the
/// statistics before it), else it is reported in `complete`/`damage`.
#[pyfunction]
#[pyo3(signature = (path, format=None, strict=true))]
pub fn stats_json(
    py: Python<'_>,
    path: &str,
    format: Option<String>,
    strict: bool,
) -> PyResult<String> {
    let s = py
        .detach(|| tramp_api::stats::statistics(&spec(path, format), None))
        .map_err(raise)?;
    let json = tramp_core::render(&s.outcome(), true);
    match s.ended.error {
        Some(e) if strict || !matches!(e, tramp_api::Error::Damaged { .. }) => {
            Err(raise_partial(e, json))
        }
        _ => Ok(json),
    }
}
