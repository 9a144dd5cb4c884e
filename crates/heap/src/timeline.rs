//! The heap over time: live bytes (highest and at the end of each slice),
//! allocations, bytes allocated and frees per slice of the trace, in
//! constant memory whatever its length. Slices start one time unit wide;
//! when the next would pass the capacity, neighbours merge in pairs and the
//! width doubles, so a trace always ends in between half and all of the
//! slices. Time is the trace's (ns in recordings) when any event has one,
//! else the count of heap events.

use std::fmt;

use serde::{Deserialize, Serialize};
use tramp_core::{Analysis, Error};

use crate::view::{Heap, HeapEvent, HeapStep, Keep};

/// One slice of the trace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slice {
    /// First time of the slice (inclusive) and the next slice's.
    pub start: u64,
    pub end: u64,
    pub max_live_bytes: u64,
    /// Live bytes after the slice's last event.
    pub live_bytes: u64,
    pub allocations: u64,
    /// In 128 bits, as every sum of sizes (blocks reach 2^63 − 1 bytes).
    pub bytes_allocated: u128,
    pub frees: u64,
}

#[derive(Clone, Copy, Default)]
struct Bucket {
    seen: bool,
    max: u64,
    end: u64,
    allocs: u64,
    bytes: u128,
    frees: u64,
}

impl Bucket {
    fn merge(a: Bucket, b: Bucket) -> Bucket {
        Bucket {
            seen: a.seen || b.seen,
            max: a.max.max(b.max),
            end: if b.seen { b.end } else { a.end },
            allocs: a.allocs + b.allocs,
            bytes: a.bytes + b.bytes,
            frees: a.frees + b.frees,
        }
    }
}

/// Slices over one clock.
struct Slices {
    t0: Option<u64>,
    width: u64,
    buckets: Vec<Bucket>,
}

impl Slices {
    fn new(cap: usize) -> Slices {
        Slices {
            t0: None,
            width: 1,
            buckets: vec![Bucket::default(); cap.max(2)],
        }
    }

    fn at(&mut self, t: u64) -> &mut Bucket {
        let t0 = *self.t0.get_or_insert(t);
        let cap = self.buckets.len() as u64;
        // An earlier time (a thread's late event) goes to the first slice.
        let mut i = t.saturating_sub(t0) / self.width;
        while i >= cap {
            let half = self.buckets.len() / 2;
            for k in 0..half {
                self.buckets[k] = Bucket::merge(self.buckets[2 * k], self.buckets[2 * k + 1]);
            }
            for b in &mut self.buckets[half..] {
                *b = Bucket::default();
            }
            self.width = self.width.saturating_mul(2);
            i = t.saturating_sub(t0) / self.width;
        }
        &mut self.buckets[i as usize]
    }

    fn slices(&self) -> Vec<Slice> {
        let t0 = self.t0.unwrap_or(0);
        self.buckets
            .iter()
            .enumerate()
            .filter(|(_, b)| b.seen)
            .map(|(i, b)| Slice {
                start: t0.saturating_add(i as u64 * self.width),
                end: t0.saturating_add((i as u64 + 1) * self.width),
                max_live_bytes: b.max,
                live_bytes: b.end,
                allocations: b.allocs,
                bytes_allocated: b.bytes,
                frees: b.frees,
            })
            .collect()
    }
}

/// The analysis: slices by the trace's time and by event count, kept
/// both (each is constant memory); the report takes time when the trace
/// has it.
pub struct Timeline {
    by_time: Slices,
    by_event: Slices,
    events: u64,
    timed: bool,
}

impl Timeline {
    /// At most `slices` slices.
    pub fn new(slices: usize) -> Timeline {
        Timeline {
            by_time: Slices::new(slices),
            by_event: Slices::new(slices),
            events: 0,
            timed: false,
        }
    }
}

/// What a timeline's slices divide: the trace's clock, or its events
/// (a trace without times).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Clock {
    Time,
    Events,
}

impl std::fmt::Display for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Clock::Time => "time",
            Clock::Events => "events",
        })
    }
}

/// The report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// `time` (the trace's clock, ns in recordings) or `events`.
    pub clock: Clock,
    pub slices: Vec<Slice>,
}

impl<K: Keep> Analysis<Heap<K>> for Timeline {
    type Report = Report;

    fn observe(&mut self, step: &HeapStep<K>) -> Result<(), Error> {
        let (cx, alloc, free) = match &step.event {
            HeapEvent::Alloc { object, cx, .. } => (*cx, Some(object.size), false),
            HeapEvent::Free { object, cx, .. } => (*cx, None, object.is_some()),
            HeapEvent::Realloc { cx, .. }
            | HeapEvent::Displaced { cx, .. }
            | HeapEvent::HeapCreate { cx }
            | HeapEvent::HeapDestroy { cx }
            | HeapEvent::ThreadCreate { cx }
            | HeapEvent::ThreadDestroy { cx } => (*cx, None, false),
        };
        self.timed |= cx.time != 0;
        let events = self.events;
        self.events += 1;
        for b in [self.by_time.at(cx.time), self.by_event.at(events)] {
            b.seen = true;
            b.max = b.max.max(step.live.bytes);
            b.end = step.live.bytes;
            if let Some(size) = alloc {
                b.allocs += 1;
                b.bytes += u128::from(size);
            }
            if free {
                b.frees += 1;
            }
        }
        Ok(())
    }

    fn finish(self) -> Report {
        if self.timed {
            Report {
                clock: Clock::Time,
                slices: self.by_time.slices(),
            }
        } else {
            Report {
                clock: Clock::Events,
                slices: self.by_event.slices(),
            }
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let top = self
            .slices
            .iter()
            .map(|s| s.max_live_bytes)
            .max()
            .unwrap_or(0)
            .max(1);
        // Each slice from its start to the next's, in the trace's time
        // unit (`time`: ns in recordings) or in heap events.
        let unit = if self.clock == Clock::Time {
            "time"
        } else {
            "event"
        };
        use crate::stats::human as h;
        writeln!(
            f,
            "{:>16} {:>16} {:>18} {:>12} {:>18} {:>10}  live bytes (highest)",
            format!("from ({unit})"),
            format!("to ({unit})"),
            "max live bytes",
            "allocations",
            "bytes allocated",
            "frees"
        )?;
        for s in &self.slices {
            let bar = "#".repeat(((s.max_live_bytes as u128 * 30).div_ceil(top as u128)) as usize);
            writeln!(
                f,
                "{:>16} {:>16} {:>18} {:>12} {:>18} {:>10}  {bar}",
                h(s.start),
                h(s.end),
                h(s.max_live_bytes),
                h(s.allocations),
                h(s.bytes_allocated),
                h(s.frees)
            )?;
        }
        if self.clock == Clock::Time {
            writeln!(
                f,
                "(times in the trace's unit: nanoseconds in tramp's recordings)"
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::testing::Trace;
    use crate::view::{HeapFlow, Slot};
    use tramp_core::Record;

    /// Six events of a trace without times, four slices at most: worked
    /// out by hand. Live bytes after each: 10, 30, 20, 25, 5, 0. The fifth
    /// event passes the fourth slice: pairs merge ([0,2) and [2,4)) and it
    /// lands in [4,6) with the sixth.
    #[test]
    fn slices_merge_in_pairs_and_keep_maxima() {
        let mut flow: HeapFlow<Timeline, Slot> = HeapFlow::new(Timeline::new(4));
        let mut t = Trace::new();
        let mut feed = |r: &Record<'_>| Analysis::observe(&mut flow, r).unwrap();
        t.alloc(10, 0x10, 0, &mut feed);
        t.alloc(20, 0x20, 0, &mut feed);
        t.free(0x10, 0, &mut feed);
        t.alloc(5, 0x30, 0, &mut feed);
        t.free(0x20, 0, &mut feed);
        t.free(0x30, 0, &mut feed);
        let r = flow.finish();
        assert_eq!(r.clock, Clock::Events);
        let got: Vec<[u64; 7]> = r
            .slices
            .iter()
            .map(|s| {
                [
                    s.start,
                    s.end,
                    s.max_live_bytes,
                    s.live_bytes,
                    s.allocations,
                    s.bytes_allocated as u64,
                    s.frees,
                ]
            })
            .collect();
        assert_eq!(
            got,
            vec![
                [0, 2, 30, 30, 2, 30, 0],
                [2, 4, 25, 25, 1, 5, 1],
                [4, 6, 5, 0, 0, 0, 2]
            ]
        );
    }
}
