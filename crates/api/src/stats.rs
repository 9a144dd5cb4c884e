//! `tramp stats` without its views: the statistics that fit a trace's
//! domain (a heap trace's per image and total, PTF's per event type, a
//! Heph trace's spans, else the records by type), with how the read
//! ended. The CLI prints them; the Python package's `Trace.stats()`
//! returns the same JSON as a dict.

use std::fmt;

use serde::Serialize;
use tramp_core::{Damage, Outcome};

use crate::input::{TraceSpec, detect};
use crate::{Ended, Error};

/// The statistics of one trace, by what it holds.
#[derive(Serialize)]
#[serde(untagged)]
pub enum Statistics {
    /// A heap trace: a row per image (process or exec) and the totals.
    Heap(tramp_heap::processes::TraceStats),
    /// A PTF trace: events per type, objects per format, edges.
    Ptf(tramp_ptf::stats::Report),
    /// A Heph trace: its spans per description and the counter gaps.
    Spans(tramp_heph::summary::Summary),
    /// Any other trace: its records by type and what it holds.
    Records(tramp_heap::stats::RecordCounts),
}

impl fmt::Display for Statistics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Statistics::Heap(s) => s.fmt(f),
            Statistics::Ptf(s) => s.fmt(f),
            Statistics::Spans(s) => s.fmt(f),
            Statistics::Records(s) => s.fmt(f),
        }
    }
}

/// The statistics with how their read ended.
pub struct Stated {
    pub stats: Statistics,
    pub complete: bool,
    pub damage: Option<Damage>,
    /// The reader's warnings and the error, if the read did not end
    /// cleanly (the statistics then cover the records before it).
    pub ended: Ended,
}

impl Stated {
    /// The statistics with how much of the trace they cover (what
    /// `--json` prints).
    pub fn outcome(&self) -> Outcome<'_, Statistics> {
        Outcome {
            report: &self.stats,
            complete: self.complete,
            damage: self.damage.clone(),
        }
    }
}

/// The statistics of the trace `spec` names; a Heph trace's spans list
/// `top` descriptions (all for `None`).
pub fn statistics(spec: &TraceSpec, top: Option<usize>) -> Result<Stated, Error> {
    let d = detect(spec)?;
    if d.format.family == tramp_heph::records::FORMAT {
        let opts = tramp_heph::summary::Options {
            tree: None,
            max_ranges: 10,
            top: Some(top.unwrap_or(usize::MAX)),
        };
        let s = crate::heph::summarize(d, opts)?;
        let damage = Damage::of(&s.warnings, s.warnings.len() as u64);
        let ended = Ended {
            error: crate::ending::end_warnings(&s.name, "heph", &s.warnings),
            warnings: s.warnings,
            name: s.name,
        };
        return Ok(Stated {
            complete: damage.is_none(),
            damage,
            stats: Statistics::Spans(s.summary),
            ended,
        });
    }
    let mut o = d.open(spec, false, true)?;
    let schema = o.source.schema().clone();
    let domains = schema.domains();
    let (stats, run, covers) = if domains.heap {
        let (stats, run) = crate::heap::trace_stats(&mut o);
        let covers = "; statistics above cover the records before the error";
        (Statistics::Heap(stats), run, covers)
    } else if domains.objects && schema.format == tramp_ptf::records::FORMAT {
        let mut stats = tramp_ptf::stats::PtfStats::new();
        let run = o.run(&mut [&mut stats], Vec::new());
        let covers = "; statistics above cover the events before the error";
        (Statistics::Ptf(stats.report()), run, covers)
    } else {
        let (stats, run) = crate::heap::stats(&mut o);
        let counts = tramp_heap::stats::RecordCounts::new(&stats.report(), domains.describe());
        let covers = "; the counts above cover the records before the error";
        (Statistics::Records(counts), run, covers)
    };
    let outcome = run.outcome(&());
    let (complete, damage) = (outcome.complete, outcome.damage);
    Ok(Stated {
        stats,
        complete,
        damage,
        ended: crate::end(run, &o, None, covers),
    })
}
