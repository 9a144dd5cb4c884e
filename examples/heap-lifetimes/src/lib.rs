//! Object lifetimes: how long each freed object lived, in the trace's time
//! (or in records, for a trace without time), as a power-of-two
//! histogram. The worked answer to "where do I add an analysis":
//!
//! 1. Say what the analysis subscribes to: here heap events whose objects
//!    carry their [`Born`] (id, site, birth), `Analysis<Heap<Born>>`. The
//!    heap view keeps what the analyses it feeds ask for and nothing more.
//! 2. Observe one event at a time; keep only totals (traces are large).
//! 3. Finish into a report that is `Serialize + Display`.
//!
//! `main.rs` runs it through the pipeline: `tramp_formats::pipeline::open`
//! detects and opens any trace, a `HeapFlow` turns its records into heap
//! events once, and `Opened::run` drives it and reports damage.

use std::fmt;

use serde::Serialize;
use tramp_core::{Analysis, Error};
use tramp_heap::{Born, Heap, HeapEvent, HeapStep};

/// What the analysis keeps: totals only.
pub struct Lifetimes {
    freed: u64,
    total: u128,
    /// `buckets[k]`: lifetimes in `[2^(k-1), 2^k)`; `buckets[0]`: 0.
    buckets: [u64; 65],
    live_at_end: u64,
}

impl Default for Lifetimes {
    fn default() -> Self {
        Lifetimes {
            freed: 0,
            total: 0,
            buckets: [0; 65],
            live_at_end: 0,
        }
    }
}

/// The report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub objects_freed: u64,
    pub mean_lifetime: f64,
    /// (low, high, objects) for each bucket with objects.
    pub histogram: Vec<(u64, u64, u64)>,
    pub live_at_end: u64,
}

impl Analysis<Heap<Born>> for Lifetimes {
    type Report = Report;

    fn observe(&mut self, step: &HeapStep<Born>) -> Result<(), Error> {
        if let HeapEvent::Free {
            object: Some(o),
            cx,
            ..
        } = step.event
        {
            let life = cx.time.saturating_sub(o.extra.birth);
            self.freed += 1;
            self.total += u128::from(life);
            self.buckets[(64 - life.leading_zeros()) as usize] += 1;
        }
        self.live_at_end = step.live.objects;
        Ok(())
    }

    fn finish(self) -> Report {
        let histogram = self
            .buckets
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(k, n)| match k {
                0 => (0, 0, *n),
                64 => (1 << 63, u64::MAX, *n),
                _ => (1 << (k - 1), (1 << k) - 1, *n),
            })
            .collect();
        Report {
            objects_freed: self.freed,
            mean_lifetime: if self.freed == 0 {
                0.0
            } else {
                self.total as f64 / self.freed as f64
            },
            histogram,
            live_at_end: self.live_at_end,
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "objects freed  {}", self.objects_freed)?;
        writeln!(f, "mean lifetime  {:.1}", self.mean_lifetime)?;
        writeln!(f, "live at end    {}", self.live_at_end)?;
        for (low, high, n) in &self.histogram {
            writeln!(f, "  {low:>10} - {high:<10} {n}")?;
        }
        Ok(())
    }
}
