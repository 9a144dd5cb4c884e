//! Sampled recordings (`tramp record --sample BYTES`): what a trace says
//! about its sampling, the weight of each sampled block, and estimated
//! totals with their standard errors.
//!
//! The capture draws the bytes between sample points from an exponential
//! distribution of mean `BYTES`, per thread; a block of `s < BYTES` bytes
//! is recorded when a point falls in it, which happens with probability
//! `p(s) = 1 − exp(−s / BYTES)`, independently of every other block
//! (disjoint stretches of a Poisson process); blocks of `BYTES` or more
//! are always recorded (`p = 1`). Sizes of 0 count as 1. Each recorded
//! block then stands for `1 / p(s)` blocks: summing `x / p` over the
//! recorded blocks estimates the total of `x` over all of them without bias
//! (Horvitz–Thompson), with variance estimated by `Σ x² (1 − p) / p²`.
//! This is jemalloc's and heapprofd's estimator; docs/heap-profile.md
//! ("Sampling") says what it covers.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::stats::{Activity, Report};
use crate::view::{Context, HeapEvent, HeapStep, Keep};

/// The comment a sampled trace carries before its first event.
const PREFIX: &str = "tramp:sampling ";

/// A trace's sampling: the mean bytes between sample points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sampling {
    pub mean_bytes: u64,
}

impl Sampling {
    /// The comment text (`tramp:sampling mean=BYTES`).
    pub fn to_comment(&self) -> String {
        format!("{PREFIX}mean={}", self.mean_bytes)
    }

    /// Parses [`to_comment`](Self::to_comment)'s text.
    pub fn parse(comment: &[u8]) -> Option<Sampling> {
        let s = std::str::from_utf8(comment).ok()?.strip_prefix(PREFIX)?;
        let mean_bytes = s.strip_prefix("mean=")?.parse().ok()?;
        (mean_bytes > 0).then_some(Sampling { mean_bytes })
    }

    /// Why an export into `what` (a format without estimates) is refused:
    /// its figures would be the sample's own, not the program's.
    pub fn export_refusal(&self, what: &str) -> String {
        format!(
            "the trace is sampled (one allocation every {} bytes on average): {what} would be \
             the sample's, not estimates of the program's; export --pprof scales them, and \
             `tramp stats --sites` and `tramp report` show the estimates",
            self.mean_bytes
        )
    }

    /// The probability that a block of `size` bytes was recorded.
    pub fn probability(&self, size: u64) -> f64 {
        if size >= self.mean_bytes {
            1.0
        } else {
            -(-(size.max(1) as f64) / self.mean_bytes as f64).exp_m1()
        }
    }

    /// How many blocks a recorded block of `size` bytes stands for.
    pub fn weight(&self, size: u64) -> f64 {
        1.0 / self.probability(size)
    }
}

/// An estimated total: the sum of `x / p` over recorded blocks and the
/// estimate of its variance. Blocks that end are taken out again (live
/// totals).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Estimate {
    sum: f64,
    var: f64,
}

impl Estimate {
    /// Counts `x` of a block recorded with weight `w` (`1 / p`).
    #[inline]
    pub fn add(&mut self, w: f64, x: f64) {
        self.sum += w * x;
        self.var += (w * w - w) * x * x;
    }

    /// Takes back what [`add`](Self::add) counted.
    #[inline]
    pub fn sub(&mut self, w: f64, x: f64) {
        self.sum -= w * x;
        self.var -= (w * w - w) * x * x;
    }

    pub fn value(&self) -> f64 {
        self.sum.max(0.0)
    }

    /// The estimate rounded to a whole count or byte total.
    pub fn rounded(&self) -> u64 {
        let v = self.value().round();
        if v >= u64::MAX as f64 {
            u64::MAX
        } else {
            v as u64
        }
    }

    pub fn standard_error(&self) -> f64 {
        self.var.max(0.0).sqrt()
    }
}

/// Standard errors of a sampled trace's estimated statistics, under the
/// names of the figures they belong to.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StandardErrors {
    pub total_allocs: f64,
    pub total_frees: f64,
    pub bytes_allocated: f64,
    pub live_objects_at_end: f64,
    pub live_bytes_at_end: f64,
    pub max_live_bytes: f64,
}

/// What `stats` says of a sampled trace beside its estimates.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SamplingReport {
    pub mean_bytes: u64,
    /// Allocations the trace recorded (the samples taken).
    pub samples: u64,
    /// Every count and byte total of the report is an estimate.
    pub estimated: bool,
    pub standard_errors: StandardErrors,
}

/// Estimated figures of a sampled trace, fed by the heap view's steps
/// beside the exact counts of what was recorded ([`crate::HeapTotals`]
/// keeps both and reports these).
#[derive(Default)]
pub struct Estimates {
    samples: u64,
    allocs: Estimate,
    implied_allocs: Estimate,
    frees: Estimate,
    implied_frees: Estimate,
    reallocs: Estimate,
    bytes: Estimate,
    live_objects: Estimate,
    live_bytes: Estimate,
    temporary: Estimate,
    /// The most live bytes estimated, and the estimate at that moment.
    max_bytes: Estimate,
    max_objects: f64,
    hist: Vec<Estimate>,
    per_thread: FxHashMap<u64, [Estimate; 4]>,
    per_heap: FxHashMap<u64, [Estimate; 4]>,
}

/// Activity columns: allocs, frees, reallocs, bytes allocated.
fn activity(rows: &mut FxHashMap<u64, [Estimate; 4]>, id: u64, col: usize, w: f64, x: f64) {
    rows.entry(id).or_default()[col].add(w, x);
}

impl Estimates {
    fn both(&mut self, cx: &Context, col: usize, w: f64, x: f64) {
        activity(&mut self.per_thread, cx.thread, col, w, x);
        activity(&mut self.per_heap, cx.heap, col, w, x);
    }

    fn live_add(&mut self, w: f64, size: u64) {
        self.live_objects.add(w, 1.0);
        self.live_bytes.add(w, size as f64);
        if self.live_bytes.value() > self.max_bytes.value() {
            self.max_bytes = self.live_bytes;
        }
        self.max_objects = self.max_objects.max(self.live_objects.value());
    }

    fn live_sub(&mut self, w: f64, size: u64) {
        self.live_objects.sub(w, 1.0);
        self.live_bytes.sub(w, size as f64);
    }

    /// Accounts for one heap event of a trace sampled as `s` says.
    pub fn step<K: Keep>(&mut self, s: Sampling, step: &HeapStep<K>) {
        match step.event {
            HeapEvent::Alloc {
                object,
                implied,
                cx,
                ..
            } => {
                let (size, w) = (object.size, s.weight(object.size));
                self.samples += 1;
                self.allocs.add(w, 1.0);
                if implied {
                    self.implied_allocs.add(w, 1.0);
                }
                self.bytes.add(w, size as f64);
                self.live_add(w, size);
                let b = if size == 0 {
                    0
                } else {
                    64 - size.leading_zeros() as usize
                };
                if self.hist.is_empty() {
                    self.hist.resize(65, Estimate::default());
                }
                self.hist[b].add(w, 1.0);
                self.both(&cx, 0, w, 1.0);
                self.both(&cx, 3, w, size as f64);
            }
            HeapEvent::Displaced { object, .. } => {
                self.live_sub(s.weight(object.size), object.size);
            }
            HeapEvent::Free {
                object,
                implied,
                temporary,
                cx,
                ..
            } => {
                let w = object.map_or(1.0, |o| s.weight(o.size));
                self.frees.add(w, 1.0);
                if implied {
                    self.implied_frees.add(w, 1.0);
                }
                if temporary {
                    self.temporary.add(w, 1.0);
                }
                if let Some(o) = object {
                    self.live_sub(w, o.size);
                }
                self.both(&cx, 1, w, 1.0);
            }
            HeapEvent::Realloc {
                size,
                resized,
                temporary,
                cx,
                ..
            } => {
                let w = s.weight(size);
                self.reallocs.add(w, 1.0);
                if temporary {
                    self.temporary.add(w, 1.0);
                }
                self.both(&cx, 2, w, 1.0);
                if let Some((_, before)) = resized {
                    // The object now weighs as its new size does.
                    self.live_sub(s.weight(before), before);
                    self.live_add(w, size);
                    if size > before {
                        self.bytes.add(w, (size - before) as f64);
                        self.both(&cx, 3, w, (size - before) as f64);
                    }
                }
            }
            _ => {}
        }
    }

    /// Puts the estimates into `r` (the exact counts of what was recorded)
    /// and says how they were made.
    pub fn apply(&self, s: Sampling, r: &mut Report) -> SamplingReport {
        let rows = |m: &FxHashMap<u64, [Estimate; 4]>| {
            m.iter()
                .map(|(id, e)| {
                    (
                        *id,
                        Activity {
                            allocs: e[0].rounded(),
                            frees: e[1].rounded(),
                            reallocs: e[2].rounded(),
                            bytes_allocated: u128::from(e[3].rounded()),
                        },
                    )
                })
                .collect()
        };
        r.total_allocs = self.allocs.rounded();
        r.total_frees = self.frees.rounded();
        r.total_reallocs = self.reallocs.rounded();
        r.realloc_calls = r.total_reallocs;
        r.malloc_calls = (self.allocs.value() - self.implied_allocs.value()).round() as u64;
        r.free_calls = (self.frees.value() - self.implied_frees.value()).round() as u64;
        r.bytes_allocated = u128::from(self.bytes.rounded());
        r.max_live_bytes = self.max_bytes.rounded();
        r.max_live_objects = self.max_objects.round() as u64;
        r.live_objects_at_end = self.live_objects.rounded();
        r.live_bytes_at_end = self.live_bytes.rounded();
        r.temporary_allocations = self.temporary.rounded();
        r.average_object_size = if self.allocs.value() > 0.0 {
            self.bytes.value() / self.allocs.value()
        } else {
            0.0
        };
        for b in &mut r.size_histogram {
            let k = if b.high == 0 {
                0
            } else {
                64 - b.high.leading_zeros() as usize
            };
            if let Some(e) = self.hist.get(k) {
                b.count = e.rounded();
            }
        }
        r.per_thread = rows(&self.per_thread);
        r.per_heap = rows(&self.per_heap);
        SamplingReport {
            mean_bytes: s.mean_bytes,
            samples: self.samples,
            estimated: true,
            standard_errors: StandardErrors {
                total_allocs: self.allocs.standard_error(),
                total_frees: self.frees.standard_error(),
                bytes_allocated: self.bytes.standard_error(),
                live_objects_at_end: self.live_objects.standard_error(),
                live_bytes_at_end: self.live_bytes.standard_error(),
                max_live_bytes: self.max_bytes.standard_error(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comment_round_trips() {
        let s = Sampling { mean_bytes: 4096 };
        assert_eq!(s.to_comment(), "tramp:sampling mean=4096");
        assert_eq!(Sampling::parse(s.to_comment().as_bytes()), Some(s));
        assert_eq!(Sampling::parse(b"tramp:sampling mean=0"), None);
        assert_eq!(Sampling::parse(b"tramp:sampling mean=x"), None);
    }

    #[test]
    fn weights_by_hand() {
        let s = Sampling { mean_bytes: 1000 };
        // p(1000) = 1: blocks of the mean or more are always taken.
        assert_eq!(s.weight(1000), 1.0);
        assert_eq!(s.weight(1 << 20), 1.0);
        // p(100) = 1 − e^(−0.1) = 0.0951625819…
        assert!((s.probability(100) - 0.095_162_581_964_040_43).abs() < 1e-15);
        // Size 0 counts as 1 byte: p = 1 − e^(−0.001).
        assert!((s.weight(0) - 1.0 / 0.000_999_500_166_624_96).abs() < 1e-6);
    }

    #[test]
    fn estimate_by_hand() {
        // Two blocks of 100 bytes (w = 1/0.0951625819 = 10.508331944) and
        // one of 2000 (w = 1): bytes = 2·100·w + 2000; variance =
        // 2·(w² − w)·100² (the sure block adds none).
        let s = Sampling { mean_bytes: 1000 };
        let mut e = Estimate::default();
        for size in [100u64, 100, 2000] {
            e.add(s.weight(size), size as f64);
        }
        let w = 10.508_331_944_775_5;
        assert!((e.value() - (200.0 * w + 2000.0)).abs() < 1e-6);
        let var = 2.0 * (w * w - w) * 10_000.0;
        assert!((e.standard_error() - var.sqrt()).abs() < 1e-6);
        e.sub(s.weight(2000), 2000.0);
        assert!((e.value() - 200.0 * w).abs() < 1e-6);
        assert_eq!(e.rounded(), (200.0 * w).round() as u64);
    }
}
