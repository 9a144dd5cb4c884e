//! Analyses and the one driver that feeds them.
//!
//! An [`Analysis`] observes records one at a time and finishes into a
//! report that is both [`Serialize`] (for `--json`) and [`Display`] (for
//! people). [`drive`] runs a source through any number of analyses and
//! sinks with progress, keeping one contract: every record before damage
//! reaches every analysis and sink, the sinks are finished (so the output
//! keeps those records), and then the error is returned.

use std::fmt::{self, Display};

use serde::Serialize;

use crate::progress::Progress;
use crate::stream::{Item, Warning};
use crate::{Error, Record, Sink, Source};

/// Anything that consumes records and sums them up in a report.
pub trait Analysis {
    /// What the analysis finishes into.
    type Report: Serialize + Display;

    /// Accounts for one record. An error stops the run (the record is not
    /// one this analysis can read).
    fn observe(&mut self, rec: &Record<'_>) -> Result<(), Error>;

    /// Damage the source skipped before the next record.
    fn warning(&mut self, _warning: &Warning) {}

    /// The report.
    fn finish(self) -> Self::Report;
}

/// The object-safe half of [`Analysis`], so one driver runs analyses of
/// different report types together.
pub trait Observe {
    fn observe(&mut self, rec: &Record<'_>) -> Result<(), Error>;
    fn warning(&mut self, warning: &Warning);
}

impl<A: Analysis> Observe for A {
    #[inline]
    fn observe(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        Analysis::observe(self, rec)
    }

    fn warning(&mut self, warning: &Warning) {
        Analysis::warning(self, warning)
    }
}

/// Why a run stopped early.
#[derive(Debug, thiserror::Error)]
pub enum Stop {
    /// The source hit damage it cannot go past.
    #[error("{0}")]
    Read(#[source] Error),
    /// An analysis could not read a record.
    #[error("{0}")]
    Analysis(#[source] Error),
    /// A sink refused or failed to write a record.
    #[error("{0}")]
    Write(#[source] Error),
    /// A sink failed to finish its output.
    #[error("{0}")]
    Finish(#[source] Error),
}

impl Stop {
    /// The underlying error.
    pub fn error(&self) -> &Error {
        match self {
            Stop::Read(e) | Stop::Analysis(e) | Stop::Write(e) | Stop::Finish(e) => e,
        }
    }
}

/// How many warnings a run keeps (all are counted).
pub const MAX_WARNINGS: usize = 10_000;

/// What a run did.
#[derive(Debug)]
pub struct Run {
    /// Records delivered to the analyses and sinks.
    pub records: u64,
    /// Warnings the source gave (the first [`MAX_WARNINGS`]).
    pub warnings: Vec<Warning>,
    /// All warnings, counted.
    pub warning_count: u64,
    /// Why the run stopped before the end, if it did.
    pub stop: Option<Stop>,
}

impl Run {
    /// `Ok(records)` for a run that reached the end, else why it stopped.
    pub fn result(self) -> Result<u64, Stop> {
        match self.stop {
            None => Ok(self.records),
            Some(s) => Err(s),
        }
    }
}

/// Runs `source` through `analyses` and `sinks`: each record goes to every
/// analysis, then to every sink; warnings go to every analysis. At the end,
/// or at the first error, every sink is finished, so an output keeps every
/// record before the damage; the error is in [`Run::stop`].
pub fn drive(
    source: &mut dyn Source,
    analyses: &mut [&mut dyn Observe],
    mut sinks: Vec<Box<dyn Sink>>,
    progress: &mut Progress,
) -> Run {
    let mut run = Run {
        records: 0,
        warnings: Vec::new(),
        warning_count: 0,
        stop: None,
    };
    'read: loop {
        let item = match source.next_item() {
            Ok(Some(item)) => item,
            Ok(None) => break,
            Err(e) => {
                run.stop = Some(Stop::Read(e));
                break;
            }
        };
        match item {
            Item::Record(rec) => {
                for a in analyses.iter_mut() {
                    if let Err(e) = a.observe(&rec) {
                        run.stop = Some(Stop::Analysis(e));
                        break 'read;
                    }
                }
                for s in sinks.iter_mut() {
                    if let Err(e) = s.write_record(&rec) {
                        run.stop = Some(Stop::Write(e));
                        break 'read;
                    }
                }
                run.records += 1;
                progress.record(run.records);
            }
            Item::Warning(w) => {
                for a in analyses.iter_mut() {
                    a.warning(&w);
                }
                run.warning_count += 1;
                if run.warnings.len() < MAX_WARNINGS {
                    run.warnings.push(w);
                }
            }
        }
    }
    progress.finish();
    for s in sinks {
        if let Err(e) = s.finish()
            && run.stop.is_none()
        {
            run.stop = Some(Stop::Finish(e));
        }
    }
    run
}

/// A report rendered for people (its `Display`) or machines (pretty JSON),
/// ending in a newline.
pub fn render<R: Serialize + Display + ?Sized>(report: &R, json: bool) -> String {
    if json {
        let mut s = serde_json::to_string_pretty(report).expect("reports serialize");
        s.push('\n');
        s
    } else {
        report.to_string()
    }
}

/// Several reports shown as one: their texts one after another, their JSON
/// objects merged into one object (later keys win).
pub struct Merged<'a>(pub Vec<&'a dyn erased::Report>);

impl Display for Merged<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for r in &self.0 {
            r.fmt_text(f)?;
        }
        Ok(())
    }
}

impl Serialize for Merged<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = serde_json::Map::new();
        for r in &self.0 {
            match r.to_json() {
                serde_json::Value::Object(o) => map.extend(o),
                other => {
                    map.insert(r.key().to_string(), other);
                }
            }
        }
        map.serialize(s)
    }
}

/// Reports behind `dyn`, for commands that choose an analysis at run time.
pub mod erased {
    use std::fmt;

    use serde::Serialize;

    /// A finished report of any type.
    pub trait Report {
        /// Its text form.
        fn fmt_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
        /// Its JSON form.
        fn to_json(&self) -> serde_json::Value;
        /// The key its JSON takes when merged with others and it is not an
        /// object.
        fn key(&self) -> &'static str {
            "report"
        }
    }

    impl<R: Serialize + fmt::Display> Report for R {
        fn fmt_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            fmt::Display::fmt(self, f)
        }
        fn to_json(&self) -> serde_json::Value {
            serde_json::to_value(self).expect("reports serialize")
        }
    }

    /// A boxed report, printable as text or JSON.
    pub struct Boxed(pub Box<dyn Report + Send>);

    impl fmt::Display for Boxed {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            self.0.fmt_text(f)
        }
    }

    impl Serialize for Boxed {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            self.0.to_json().serialize(s)
        }
    }
}
