//! Analyses and the one driver that feeds them.
//!
//! An [`Analysis`] observes records one at a time and finishes into a
//! report that is both [`Serialize`] (for `--json`) and [`Display`] (for
//! people). [`drive`] runs a source through any number of analyses and
//! sinks with progress, keeping one contract: every record before damage
//! reaches every analysis and sink, the sinks are finished (so the output
//! keeps those records), and then the error is returned.

use std::fmt::{self, Display};
use std::ops::ControlFlow;

use serde::Serialize;

use crate::stream::{Item, Warning};
use crate::{Error, Record, Sink, Source};

/// What an analysis subscribes to: records, or the events a view makes of
/// them ([`Records`] here; heap and graph events in their crates). The
/// event may borrow from the record it was made of.
pub trait Events {
    type Event<'a>: ?Sized;
}

/// The records themselves, as a source gives them.
pub struct Records;

impl Events for Records {
    type Event<'a> = Record<'a>;
}

/// Anything that consumes a stream of events (records by default) and sums
/// them up in a report. Reports are [`Serialize`] (for `--json`) and
/// [`Display`] (for people) wherever they are rendered; the trait leaves
/// them open so analyses compose (a pair of analyses is one, reporting a
/// pair).
///
/// A view is an analysis of records that makes events and passes them to
/// the analyses it carries, as a type parameter: dispatch in the hot loop
/// is static (one `dyn` call per record at the driver, none per event).
pub trait Analysis<E: Events = Records> {
    /// What the analysis finishes into.
    type Report;

    /// Accounts for one event. An error stops the run (the event is not
    /// one this analysis can read).
    fn observe(&mut self, ev: &E::Event<'_>) -> Result<(), Error>;

    /// Damage the source skipped before the next record.
    fn warning(&mut self, _warning: &Warning) {}

    /// The report.
    fn finish(self) -> Self::Report;
}

/// Two analyses of one stream, fed in order: the way one view feeds
/// several analyses without a `dyn` call per event.
impl<E: Events, A: Analysis<E>, B: Analysis<E>> Analysis<E> for (A, B) {
    type Report = (A::Report, B::Report);

    #[inline(always)]
    fn observe(&mut self, ev: &E::Event<'_>) -> Result<(), Error> {
        self.0.observe(ev)?;
        self.1.observe(ev)
    }

    fn warning(&mut self, warning: &Warning) {
        self.0.warning(warning);
        self.1.warning(warning);
    }

    fn finish(self) -> Self::Report {
        (self.0.finish(), self.1.finish())
    }
}

/// The object-safe half of an analysis of records, so one driver runs
/// analyses of different report types together.
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
#[derive(Debug, Default)]
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

/// Damage a reader skipped and went on after: how many places, how many
/// bytes, and the first. Its text is the one wording every command uses
/// (the run's output stands; the exit is not 0).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Damage {
    pub places: u64,
    pub bytes: u64,
    /// The first place, as its warning reads.
    pub first: String,
    /// Where and why the read stopped before the end, if it did (the
    /// reason a report is not `complete` when nothing was skipped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

impl Damage {
    /// The damage of `warnings` (`places` counts all of them when only the
    /// first few were kept), or `None` if there was none.
    pub fn of(warnings: &[Warning], places: u64) -> Option<Damage> {
        let first = warnings.first()?;
        Some(Damage {
            places: places.max(warnings.len() as u64),
            bytes: warnings.iter().map(|w| w.skipped).sum(),
            first: first.to_string(),
            stopped: None,
        })
    }

    /// The damage of a read that stopped at `why` (with what it skipped
    /// before, if anything).
    pub fn stopped(skipped: Option<Damage>, why: String) -> Damage {
        Damage {
            stopped: Some(why),
            ..skipped.unwrap_or_default()
        }
    }
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(why) = &self.stopped {
            write!(f, "the read stopped before the end: {why}")?;
            if self.places == 0 {
                return Ok(());
            }
            f.write_str("; before it, ")?;
        }
        let one = self.places == 1;
        write!(
            f,
            "the trace is damaged: {} damaged place{} skipped ({} bytes); every whole record around {} was kept (the first: {})",
            self.places,
            if one { "" } else { "s" },
            self.bytes,
            if one { "it" } else { "them" },
            self.first
        )
    }
}

/// A report with how much of the trace it covers: what `--json` prints
/// (the report's own fields, then `complete`, false after damage or an
/// early stop, and `damage`, what a reader skipped). People read the
/// report alone, and the damage on stderr.
#[derive(Serialize)]
pub struct Outcome<'a, R: Serialize> {
    #[serde(flatten)]
    pub report: &'a R,
    pub complete: bool,
    pub damage: Option<Damage>,
}

impl<R: Serialize + Display> Display for Outcome<'_, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.report.fmt(f)
    }
}

impl Run {
    /// `report` with how much of the trace the run covered.
    pub fn outcome<'a, R: Serialize>(&self, report: &'a R) -> Outcome<'a, R> {
        Outcome {
            report,
            complete: self.stop.is_none() && self.warning_count == 0,
            damage: self.reported_damage(),
        }
    }

    /// The damage the source skipped, if any.
    pub fn damage(&self) -> Option<Damage> {
        Damage::of(&self.warnings, self.warning_count)
    }

    /// What a report says of the run's damage: what was skipped, and where
    /// the run stopped early, if it did (a report is never `complete:
    /// false` with `damage: null`).
    pub fn reported_damage(&self) -> Option<Damage> {
        let skipped = self.damage();
        match &self.stop {
            Some(s) => Some(Damage::stopped(skipped, s.to_string())),
            None => skipped,
        }
    }

    /// `Ok(records)` for a run that reached the end, else why it stopped.
    pub fn result(self) -> Result<u64, Stop> {
        match self.stop {
            None => Ok(self.records),
            Some(s) => Err(s),
        }
    }
}

/// What [`drive`] tells of its progress: the records delivered so far,
/// every [`METER_EVERY`] records (no call per record on the hot path), and
/// the end. tramp-io's progress bar is one; `()` tells no one.
pub trait Meter {
    fn show(&mut self, records: u64);
    fn finish(&mut self);
}

/// How many records [`drive`] delivers between two [`Meter::show`]s.
pub const METER_EVERY: u64 = 1 << 16;

impl Meter for () {
    fn show(&mut self, _: u64) {}
    fn finish(&mut self) {}
}

/// Runs `source` through `analyses` and `sinks`: each record goes to every
/// analysis, then to every sink; warnings go to every analysis. At the end,
/// or at the first error, every sink is finished, so an output keeps every
/// record before the damage; the error is in [`Run::stop`]. The exception
/// is a sink that fails to write a record: then no sink is finished (an
/// output must not look complete without that record).
pub fn drive(
    source: &mut dyn Source,
    analyses: &mut [&mut dyn Observe],
    mut sinks: Vec<Box<dyn Sink>>,
    progress: &mut dyn Meter,
) -> Run {
    let mut run = Run {
        records: 0,
        warnings: Vec::new(),
        warning_count: 0,
        stop: None,
    };
    let mut stop = None;
    let read = source.each_item(&mut |item| {
        match item {
            Item::Record(rec) => {
                for a in analyses.iter_mut() {
                    if let Err(e) = a.observe(rec) {
                        stop = Some(Stop::Analysis(e));
                        return ControlFlow::Break(());
                    }
                }
                for s in sinks.iter_mut() {
                    if let Err(e) = s.write_record(rec) {
                        stop = Some(Stop::Write(e));
                        return ControlFlow::Break(());
                    }
                }
                run.records += 1;
                if run.records.is_multiple_of(METER_EVERY) {
                    progress.show(run.records);
                }
            }
            Item::Warning(w) => {
                for a in analyses.iter_mut() {
                    a.warning(w);
                }
                run.warning_count += 1;
                if run.warnings.len() < MAX_WARNINGS {
                    run.warnings.push(w.clone());
                }
            }
        }
        ControlFlow::Continue(())
    });
    run.stop = stop.or(read.err().map(Stop::Read));
    progress.finish();
    if matches!(run.stop, Some(Stop::Write(_))) {
        // A sink that could not take a record would leave an output that
        // silently lacks it: the outputs are dropped unfinished (an
        // `Output` then removes its temporary file).
        return run;
    }
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

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;
    use std::sync::Arc;

    use super::*;
    use crate::{FieldDef, FieldType, Position, RecordBuf, RecordKind, Schema};

    /// Yields records numbered 0.., a warning before record `warn_at`,
    /// then fails at `fail_at` (or ends there).
    struct Script {
        schema: Arc<Schema>,
        buf: RecordBuf,
        next: u64,
        warn_at: u64,
        warned: bool,
        fail_at: u64,
        fail: bool,
    }

    impl Source for Script {
        fn schema(&self) -> &Arc<Schema> {
            &self.schema
        }
        fn next_record(&mut self) -> Result<Option<Record<'_>>, Error> {
            unreachable!("drivers read items")
        }
        fn next_item(&mut self) -> Result<Option<Item<'_>>, Error> {
            if self.next == self.warn_at && !self.warned {
                self.warned = true;
                return Ok(Some(Item::Warning(Warning {
                    format: "test",
                    offset: 7,
                    message: "skipped".into(),
                    skipped: 3,
                })));
            }
            if self.next == self.fail_at {
                return if self.fail {
                    Err(Error::decode("test", self.position(), "damaged"))
                } else {
                    Ok(None)
                };
            }
            self.buf.reset(&self.schema.types[0]);
            self.buf.set_u64(0, self.next);
            self.next += 1;
            Ok(Some(Item::Record(
                self.buf.as_record(&self.schema.types[0]),
            )))
        }
        fn position(&self) -> Position {
            Position::new(self.next * 8, self.next)
        }
    }

    fn script(warn_at: u64, fail_at: u64, fail: bool) -> Script {
        let mut s = Schema::new("test");
        s.add_type(
            "n",
            RecordKind::Other,
            vec![FieldDef::new("n", FieldType::U64, None)],
        );
        Script {
            schema: s.shared(),
            buf: RecordBuf::new(),
            next: 0,
            warn_at,
            warned: false,
            fail_at,
            fail,
        }
    }

    /// Sums the records it sees; refuses record `refuse`.
    #[derive(Default)]
    struct Sum {
        seen: Vec<u64>,
        warnings: u64,
        refuse: Option<u64>,
    }

    impl Analysis for Sum {
        type Report = u64;
        fn observe(&mut self, rec: &Record<'_>) -> Result<(), Error> {
            let n = rec.get(0).and_then(|v| v.as_u64()).unwrap();
            if Some(n) == self.refuse {
                return Err(Error::Usage(format!("refused {n}")));
            }
            self.seen.push(n);
            Ok(())
        }
        fn warning(&mut self, _: &Warning) {
            self.warnings += 1;
        }
        fn finish(self) -> u64 {
            self.seen.iter().sum()
        }
    }

    /// A sink that keeps what it is given and says when it is finished.
    #[derive(Clone, Default)]
    struct Keep {
        got: Rc<RefCell<Vec<u64>>>,
        finished: Rc<RefCell<bool>>,
        refuse: Option<u64>,
    }

    impl Sink for Keep {
        fn write_record(&mut self, rec: &Record<'_>) -> Result<(), Error> {
            let n = rec.get(0).and_then(|v| v.as_u64()).unwrap();
            if Some(n) == self.refuse {
                return Err(Error::encode("test", n, "cannot"));
            }
            self.got.borrow_mut().push(n);
            Ok(())
        }
        fn finish(self: Box<Self>) -> Result<(), Error> {
            *self.finished.borrow_mut() = true;
            Ok(())
        }
    }

    #[test]
    fn every_record_before_damage_reaches_analyses_and_sinks_then_the_error() {
        let mut src = script(3, 5, true);
        let (mut a, mut b) = (Sum::default(), Sum::default());
        let sink = Keep::default();
        let run = drive(
            &mut src,
            &mut [&mut a, &mut b],
            vec![Box::new(sink.clone())],
            &mut (),
        );
        assert_eq!(run.records, 5);
        assert_eq!(a.seen, vec![0, 1, 2, 3, 4]);
        assert_eq!(b.seen, a.seen);
        assert_eq!((a.warnings, run.warning_count), (1, 1));
        assert_eq!(
            run.warnings[0].to_string(),
            "byte offset 7: skipped (3 bytes skipped)"
        );
        assert_eq!(*sink.got.borrow(), vec![0, 1, 2, 3, 4]);
        assert!(
            *sink.finished.borrow(),
            "the output keeps the records before the damage"
        );
        let stop = run.stop.expect("damage stops the run");
        assert!(matches!(stop, Stop::Read(_)));
        assert_eq!(stop.error().position().map(|p| p.record), Some(5));
        assert_eq!(Analysis::finish(a), 10);
    }

    #[test]
    fn a_clean_run_ends_without_a_stop() {
        let mut src = script(99, 4, false);
        let mut a = Sum::default();
        let run = drive(&mut src, &mut [&mut a], Vec::new(), &mut ());
        assert_eq!(run.result().unwrap(), 4);
        assert_eq!(a.warnings, 0);
    }

    #[test]
    fn an_analysis_or_sink_that_refuses_stops_the_run_after_the_records_before() {
        let mut src = script(99, 10, false);
        let mut a = Sum {
            refuse: Some(6),
            ..Sum::default()
        };
        let sink = Keep::default();
        let run = drive(
            &mut src,
            &mut [&mut a],
            vec![Box::new(sink.clone())],
            &mut (),
        );
        assert!(matches!(run.stop, Some(Stop::Analysis(_))));
        assert_eq!(run.records, 6);
        assert_eq!(*sink.got.borrow(), vec![0, 1, 2, 3, 4, 5]);
        assert!(*sink.finished.borrow());

        let mut src = script(99, 10, false);
        let sink = Keep {
            refuse: Some(2),
            ..Keep::default()
        };
        let run = drive(&mut src, &mut [], vec![Box::new(sink.clone())], &mut ());
        assert!(matches!(run.stop, Some(Stop::Write(_))));
        assert_eq!(*sink.got.borrow(), vec![0, 1]);
        assert!(
            !*sink.finished.borrow(),
            "an output that could not take a record is not finished"
        );
    }

    #[test]
    fn reports_render_as_text_or_json() {
        assert_eq!(render(&42u64, false), "42");
        assert_eq!(render(&42u64, true), "42\n");
    }
}
