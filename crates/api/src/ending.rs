//! How a run ended, turned into what a front end shows: the warnings the
//! reader gave (damage it skipped), the outcome beside a report (`complete`,
//! `damage`), and, when the run did not end cleanly, the error whose text
//! says what was read, what the printed output covers and why it stopped.
//! A run with skipped damage ends in [`Error::Damaged`]: its output stands,
//! the exit is not 0.

use tramp_core::{Damage, Outcome, Run, Stop, Warning};

use crate::Error;
use crate::input::Opened;

/// The end of one run: its warnings, then its error if it had one.
#[derive(Debug)]
pub struct Ended {
    /// The source's warnings (the first `tramp_core::MAX_WARNINGS`), each
    /// about the trace named `name`.
    pub warnings: Vec<Warning>,
    pub name: String,
    /// Why the run did not end cleanly.
    pub error: Option<Error>,
}

impl Ended {
    /// `Ok` for a clean end, else the error.
    pub fn into_result(self) -> Result<(), Error> {
        self.error.map_or(Ok(()), Err)
    }
}

/// The end of `run` over the trace `o`; `out` names the run's output, if
/// it wrote one (`-` else), and `covers` says what the printed output
/// covers when the run stopped early ("; statistics above cover the
/// records before the error").
pub fn end(run: Run, o: &Opened, out: Option<&str>, covers: &'static str) -> Ended {
    end_named(run, &o.name, o.format, out, covers)
}

/// [`end`] of a run of the input `name` in `format` (a job that read a
/// recording's index has no opened source).
pub fn end_named(
    run: Run,
    name: &str,
    format: tramp_formats::Format,
    out: Option<&str>,
    covers: &'static str,
) -> Ended {
    let trace = format!("{name} ({format})");
    let damage = run.damage();
    let error = match run.stop {
        None => damage.map(|damage| Error::Damaged {
            trace,
            covers,
            damage: Box::new(damage),
        }),
        Some(stop) => Some(stopped(stop, trace, run.records, out, covers)),
    };
    Ended {
        warnings: run.warnings,
        name: name.to_string(),
        error,
    }
}

fn stopped(
    stop: Stop,
    trace: String,
    records: u64,
    out: Option<&str>,
    covers: &'static str,
) -> Error {
    let path = out.unwrap_or("-").to_string();
    match stop {
        // An I/O error has no position of its own: say where the trace stops.
        Stop::Read(source @ tramp_core::Error::Io(_)) => Error::ReadIo {
            trace,
            records,
            covers,
            source: Box::new(source),
        },
        Stop::Read(source) | Stop::Analysis(source) => Error::Read {
            trace,
            covers,
            source: Box::new(source),
        },
        Stop::Write(source) => Error::Write { path, source },
        Stop::Finish(source) => Error::Finish { path, source },
    }
}

/// The end of a read that gave its warnings apart from a [`Run`] (Heph's
/// packet reader): damage if it skipped any.
pub fn end_warnings(name: &str, format: &str, warnings: &[Warning]) -> Option<Error> {
    Damage::of(warnings, warnings.len() as u64).map(|damage| Error::Damaged {
        trace: format!("{name} ({format})"),
        covers: "",
        damage: Box::new(damage),
    })
}

/// `report` with how much of several runs over several traces it covers
/// (a comparison of two): complete when every run was, the first damage.
pub fn outcome_of<'a, R: serde::Serialize>(report: &'a R, runs: &[&Run]) -> Outcome<'a, R> {
    Outcome {
        report,
        complete: runs
            .iter()
            .all(|r| r.stop.is_none() && r.warning_count == 0),
        damage: runs.iter().find_map(|r| r.reported_damage()),
    }
}
