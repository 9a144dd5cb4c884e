//! A trace's reports for `tramp.Trace`: each returned as the JSON the
//! CLI prints with `--json` (the same library call, the same renderer),
//! which the Python side decodes; a page written whole or not at all.

use pyo3::prelude::*;

use crate::errors::{ended, raise};

/// The trace a Python call names.
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
    ended(json, s.ended.error, strict)
}

/// `tramp stats --sites --top TOP --json` (every site for `None`), from
/// the recording's profile index when it has one.
#[pyfunction]
#[pyo3(signature = (path, format=None, top=None, strict=true))]
pub fn sites_json(
    py: Python<'_>,
    path: &str,
    format: Option<String>,
    top: Option<usize>,
    strict: bool,
) -> PyResult<String> {
    let spec = spec(path, format);
    let read = tramp_api::indexed::IndexUse::Read;
    let (profile, p) = py
        .detach(|| tramp_api::heap::profile_of(&spec, "sites", read))
        .map_err(raise)?;
    let report = profile.with_sites(top.unwrap_or(usize::MAX), None);
    let json = tramp_core::render(&p.run.outcome(&report), true);
    let covers = "; the sites above cover the records before the error";
    let e = tramp_api::ending::end_named(p.run, &p.name, p.format, None, covers);
    ended(json, e.error, strict)
}

/// `tramp stats --timeline --json`: the heap per slice (512 slices).
#[pyfunction]
#[pyo3(signature = (path, format=None, strict=true))]
pub fn timeline_json(
    py: Python<'_>,
    path: &str,
    format: Option<String>,
    strict: bool,
) -> PyResult<String> {
    let spec = spec(path, format);
    let (json, e) = py
        .detach(|| {
            let mut o = tramp_api::heap::open_heap(&spec, "timeline")?;
            let (report, run, _) = tramp_api::heap::timeline(&mut o, 512);
            let json = tramp_core::render(&run.outcome(&report), true);
            let covers = "; the slices above cover the records before the error";
            Ok::<_, tramp_api::Error>((json, tramp_api::end(run, &o, None, covers)))
        })
        .map_err(raise)?;
    ended(json, e.error, strict)
}

/// `tramp report TRACE -o OUT`: the heap profile page, written whole
/// (a temporary file renamed) or not at all; damage raises after the
/// page of what came before it is written.
#[pyfunction]
#[pyo3(signature = (path, output, format=None))]
pub fn report(py: Python<'_>, path: &str, output: &str, format: Option<String>) -> PyResult<()> {
    let spec = spec(path, format);
    py.detach(|| {
        let out = tramp_api::output::create(output)?;
        let (page, p) = tramp_api::heap::report_page(&spec, tramp_api::indexed::IndexUse::Read)?;
        out.write(page.as_bytes())?;
        let covers = "; the report covers the records before the error";
        tramp_api::ending::end_named(p.run, &p.name, p.format, None, covers).into_result()
    })
    .map_err(raise)
}
