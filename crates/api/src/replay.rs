//! Allocator replay as a job: a heap trace opened for it (synthetic
//! addresses refused unless asked for), replayed through the driver into
//! `tramp_record::replay::Study`, its picture and mimalloc-bench lines
//! named after the trace, and its fidelity turned into an error when the
//! replay did not do what the trace did.

use tramp_core::Run;
use tramp_record::replay::{DriverReport, ReplayOptions, Study};

use crate::Error;
use crate::input::{Opened, TraceSpec};

/// Opens a heap trace for replay; a trace with synthetic addresses stops
/// at its note unless `synthetic_ok`.
pub fn open(spec: &TraceSpec, synthetic_ok: bool) -> Result<Opened, Error> {
    let mut o = crate::heap::open_heap(spec, "replay")?;
    if !synthetic_ok {
        o.refuse_synthetic("replay");
    }
    Ok(o)
}

/// Replays `o` through the driver at `driver` for every allocator and
/// repetition of `opts`; `each` hears of every driver run as it ends.
pub fn study(
    driver: &std::path::Path,
    o: &mut Opened,
    opts: &ReplayOptions,
    each: &mut dyn FnMut(&str, usize, &DriverReport),
) -> Result<(Study, Run), Error> {
    tramp_record::replay::study(driver, &mut *o.source, opts, &mut o.progress, each).map_err(
        |source| Error::Job {
            what: "replaying",
            source,
        },
    )
}

/// The trace's file name, which names the pictures and result lines.
pub fn stem(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map_or("trace".into(), |n| n.to_string_lossy().into_owned())
}

/// The memory over time of every allocator, as SVG.
pub fn svg(study: &Study, path: &str) -> String {
    study.svg(&format!("Memory while replaying {}", stem(path)))
}

/// mimalloc-bench's result lines of the study.
pub fn bench_lines(study: &Study, path: &str) -> String {
    let stem = stem(path);
    study.bench_lines(&format!(
        "replay-{}",
        stem.split('.').next().unwrap_or("trace")
    ))
}

/// `Ok` when the replay did what the trace did, else what differed.
pub fn fidelity(study: &Study) -> Result<(), Error> {
    if study.fidelity.ok {
        return Ok(());
    }
    let first = study
        .plan
        .first_free_before_alloc
        .as_ref()
        .map_or(String::new(), |f| {
            format!(
                ": thread {} freed {:#x} before thread {} allocated it",
                f.freed_by, f.address, f.allocated_by
            )
        });
    Err(Error::Differs(format!(
        "the replay differs from the trace (see the fidelity lines above){first}"
    )))
}

/// Seconds a replay thread may wait for another thread's operation before
/// the replay is abandoned as stuck, unless asked otherwise
/// (`--wait-limit`).
pub const WAIT_LIMIT_SECONDS: f64 = 60.0;
