//! How long objects live: a histogram of lifetimes (time from allocation
//! to free, in the trace's clock: ns in recordings) in power-of-two
//! buckets, by objects and by bytes, and the objects still live at the end.
//! Constant memory; needs a view that keeps each object's birth.

use std::fmt;

use serde::{Deserialize, Serialize};
use tramp_core::{Analysis, Error};

use crate::view::{Heap, HeapEvent, HeapStep, Keep};

/// Lifetimes in `[low, high]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bucket {
    pub low: u64,
    pub high: u64,
    pub objects: u64,
    pub bytes: u64,
}

/// The analysis.
pub struct Lifetimes {
    buckets: [(u64, u64); 65],
    live_objects: u64,
    live_bytes: u64,
}

impl Default for Lifetimes {
    fn default() -> Self {
        Lifetimes {
            buckets: [(0, 0); 65],
            live_objects: 0,
            live_bytes: 0,
        }
    }
}

impl Lifetimes {
    pub fn new() -> Lifetimes {
        Lifetimes::default()
    }

    fn add(&mut self, lifetime: u64, size: u64) {
        let b = (64 - lifetime.leading_zeros()) as usize;
        self.buckets[b].0 += 1;
        self.buckets[b].1 = self.buckets[b].1.saturating_add(size);
    }
}

/// The report: non-empty buckets from the shortest lifetimes up, and what
/// was never freed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    pub buckets: Vec<Bucket>,
    pub live_objects_at_end: u64,
    pub live_bytes_at_end: u64,
}

impl<K: Keep> Analysis<Heap<K>> for Lifetimes {
    type Report = Report;

    fn observe(&mut self, step: &HeapStep<K>) -> Result<(), Error> {
        match &step.event {
            HeapEvent::Alloc { object, .. } => {
                self.live_objects += 1;
                self.live_bytes = self.live_bytes.saturating_add(object.size);
            }
            HeapEvent::Free {
                object: Some(object),
                cx,
                ..
            } => {
                self.live_objects = self.live_objects.saturating_sub(1);
                self.live_bytes = self.live_bytes.saturating_sub(object.size);
                if let Some(birth) = object.extra.birth() {
                    self.add(cx.time.saturating_sub(birth), object.size);
                }
            }
            HeapEvent::Displaced { object, .. } => {
                self.live_objects = self.live_objects.saturating_sub(1);
                self.live_bytes = self.live_bytes.saturating_sub(object.size);
            }
            HeapEvent::Realloc {
                resized: Some((object, before)),
                ..
            } => {
                self.live_bytes = self
                    .live_bytes
                    .saturating_sub(*before)
                    .saturating_add(object.size);
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(self) -> Report {
        let buckets = self
            .buckets
            .iter()
            .enumerate()
            .filter(|(_, b)| b.0 > 0)
            .map(|(i, b)| Bucket {
                low: if i == 0 { 0 } else { 1u64 << (i - 1) },
                high: if i == 0 {
                    0
                } else if i == 64 {
                    u64::MAX
                } else {
                    (1u64 << i) - 1
                },
                objects: b.0,
                bytes: b.1,
            })
            .collect();
        Report {
            buckets,
            live_objects_at_end: self.live_objects,
            live_bytes_at_end: self.live_bytes,
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "lifetime (time units)   objects   bytes")?;
        for b in &self.buckets {
            writeln!(
                f,
                "{:>10}..{:<10} {:>9} {:>9}",
                b.low, b.high, b.objects, b.bytes
            )?;
        }
        writeln!(
            f,
            "live at the end: {} objects, {} bytes",
            self.live_objects_at_end, self.live_bytes_at_end
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::{Context, Live};
    use crate::{Lived, Object};

    fn object(address: u64, size: u64, birth: u64) -> Object<Lived> {
        Object {
            address,
            size,
            extra: Lived {
                site: Default::default(),
                birth,
            },
        }
    }

    fn at(time: u64) -> Context {
        Context {
            thread: 0,
            heap: 0,
            time,
        }
    }

    #[test]
    fn lifetimes_fall_in_their_power_of_two_buckets() {
        // Worked by hand: a (16 B) lives 0..5 = 5 (bucket 4..7), b (8 B)
        // lives 2..3 = 1 (bucket 1..1), c (4 B) lives 4..12 = 8 (8..15),
        // d (2 B) is never freed.
        let mut l = Lifetimes::new();
        let mut feed = |event| {
            Analysis::<crate::Heap<Lived>>::observe(
                &mut l,
                &HeapStep {
                    event,
                    live: Live::default(),
                    sampling: None,
                    attached: false,
                    selected: crate::event::Selected::No,
                },
            )
            .unwrap()
        };
        let alloc = |o: Object<Lived>| HeapEvent::Alloc {
            object: o,
            displaced: 0,
            implied: false,
            cx: at(o.extra.birth),
        };
        let free = |o: Object<Lived>, t: u64| HeapEvent::Free {
            address: o.address,
            object: Some(o),
            implied: false,
            temporary: false,
            cx: at(t),
        };
        let (a, b, c, d) = (
            object(0x100, 16, 0),
            object(0x200, 8, 2),
            object(0x300, 4, 4),
            object(0x400, 2, 6),
        );
        feed(alloc(a));
        feed(alloc(b));
        feed(free(b, 3));
        feed(alloc(c));
        feed(free(a, 5));
        feed(alloc(d));
        feed(free(c, 12));
        let r = Analysis::<crate::Heap<Lived>>::finish(l);
        let got: Vec<(u64, u64, u64, u64)> = r
            .buckets
            .iter()
            .map(|b| (b.low, b.high, b.objects, b.bytes))
            .collect();
        assert_eq!(got, vec![(1, 1, 1, 8), (4, 7, 1, 16), (8, 15, 1, 4)]);
        assert_eq!((r.live_objects_at_end, r.live_bytes_at_end), (1, 2));
    }
}
