//! The Python package's native module, `tramp._tramp`: thin bindings of
//! the run-and-report contract (`tramp_api`), so that every number Python
//! sees is the one the `tramp` binary prints. The Python side
//! (`python/tramp/__init__.py`) wraps these in the public API.

use pyo3::prelude::*;

mod cache;
mod errors;
mod events;
mod record;
mod trace;

#[pymodule]
fn _tramp(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(trace::stats_json, m)?)?;
    m.add_function(wrap_pyfunction!(trace::sites_json, m)?)?;
    m.add_function(wrap_pyfunction!(trace::timeline_json, m)?)?;
    m.add_function(wrap_pyfunction!(trace::report, m)?)?;
    m.add_function(wrap_pyfunction!(cache::simulate_json, m)?)?;
    m.add_function(wrap_pyfunction!(cache::policy_parts, m)?)?;
    m.add_function(wrap_pyfunction!(cache::analyze_json, m)?)?;
    m.add_class::<cache::Cache>()?;
    m.add_function(wrap_pyfunction!(record::record, m)?)?;
    m.add_function(wrap_pyfunction!(record::replay_json, m)?)?;
    m.add_function(wrap_pyfunction!(events::events_stream, m)?)?;
    Ok(())
}
