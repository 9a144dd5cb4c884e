//! `tramp.record`: a command recorded as `tramp record` records it,
//! through the capture library this package carries.

use pyo3::prelude::*;

use crate::errors::raise;

/// Records `argv` into `output` (named after the program when `None`)
/// with `stack` frames per event, sampling one allocation per `sample`
/// bytes if given: the trace's path, the program's exit status (128 +
/// the signal that ended it) and the notes `tramp record` prints (the
/// processes recorded; a warning when nothing was).
#[pyfunction]
#[pyo3(signature = (argv, output=None, stack=64, sample=None))]
pub fn record(
    py: Python<'_>,
    argv: Vec<String>,
    output: Option<String>,
    stack: usize,
    sample: Option<u64>,
) -> PyResult<(String, u8, Vec<String>)> {
    let r = tramp_api::record::Request {
        command: argv.iter().map(Into::into).collect(),
        output,
        stack: Some(stack),
        index: true,
        sample,
        temp_limit: tramp_api::record::TEMP_LIMIT_MIB,
        ..Default::default()
    };
    let (rec, output) = py
        .detach(|| tramp_api::record::record(&r, tramp_bundled::CAPTURE_LIBRARY))
        .map_err(raise)?;
    let mut notes: Vec<String> = rec.notes().into_iter().map(|n| n.to_string()).collect();
    let program = tramp_record::launch::program_name(None, r.command.first());
    if let Some(why) = rec.nothing_captured(&program, false) {
        notes.push(format!("warning: {why}"));
    }
    Ok((output, rec.exit_code(), notes))
}

/// `tramp replay --json` of the trace over `allocators` (`glibc` or a
/// shared library's path; glibc when empty), `repeat` runs each; a
/// replay that did not do what the trace did raises.
#[pyfunction]
#[pyo3(signature = (path, allocators, format=None, repeat=1))]
pub fn replay_json(
    py: Python<'_>,
    path: &str,
    allocators: Vec<String>,
    format: Option<String>,
    repeat: usize,
) -> PyResult<String> {
    use tramp_record::replay::{Allocator, ReplayOptions};
    let spec = crate::trace::spec(path, format);
    py.detach(|| {
        let mut chosen = Vec::new();
        for a in &allocators {
            chosen.extend(Allocator::parse_list(a)?);
        }
        if chosen.is_empty() {
            chosen.push(Allocator::glibc());
        }
        let opts = ReplayOptions {
            allocators: chosen,
            repeat: repeat.max(1),
            no_touch: false,
            serial: false,
            memory_limit: tramp_record::replay::default_memory_limit(),
            wait_limit: tramp_api::replay::WAIT_LIMIT_SECONDS,
        };
        let driver = tramp_record::launch::install_replayer(tramp_bundled::REPLAY_DRIVER).map_err(
            |source| tramp_api::Error::Job {
                what: "installing the replay driver",
                source,
            },
        )?;
        let mut o = tramp_api::replay::open(&spec, false)?;
        let (study, run) = tramp_api::replay::study(&driver, &mut o, &opts, &mut |_, _, _| {})?;
        let json = tramp_core::render(&run.outcome(&study), true);
        let covers = "; the replay covers the records before the error";
        tramp_api::end(run, &o, None, covers).into_result()?;
        tramp_api::replay::fidelity(&study)?;
        Ok::<_, tramp_api::Error>(json)
    })
    .map_err(raise)
}
