//! Miss-ratio curves of any policy by miniature simulation (Waldspurger,
//! Saemundsson, Ahmad and Park, "Cache Modeling and Optimization using
//! Miniature Simulations", USENIX ATC '17): only the requests whose hashed
//! object id falls under a threshold — a fraction R of the objects, the
//! same hash and threshold as SHARDS — are fed to caches R times the size
//! of each point of the curve, and the miniature cache's miss ratio stands
//! for the full one's. Any policy, the cost of 1/R of the trace.
//!
//! The sample's share of the requests varies with the popularity of the
//! objects it happens to hold (on the Twitter fixture at 1%, 1.0% of the
//! objects drew 3.6% of the requests), so its miss ratio is taken as
//! SHARDS-adj takes it (Waldspurger et al., FAST '15): misses over the
//! requests a sample at rate R is expected to see, R times the trace's,
//! as if the surplus (or shortfall) were hits; bytes alike.
//!
//! A miniature cache that holds few objects follows its full-size cache
//! poorly: points whose scaled cache holds fewer than [`MIN_OBJECTS`]
//! objects (by bytes: the scaled size over the sampled objects' mean size)
//! are marked, and left out of the error against full simulation.

use std::fmt;

use rustc_hash::FxHashSet;
use serde::Serialize;

use crate::cache::{Cache, Unit};
use crate::mrc::Spatial;
use crate::policy::spec::SpecError;
use crate::policy::{PolicyKind, PolicySpec};
use crate::request::Request;

/// Objects a scaled cache needs for its point to count as reliable.
pub const MIN_OBJECTS: f64 = 100.0;

/// Which curves a `--mrc` list asks for: whether LRU's (exact, from
/// stack distances) and the other policies' (miniature). OPT is refused:
/// its miniature would need the sample's own future.
pub fn curve_policies(list: &[String]) -> Result<(bool, Vec<PolicySpec>), SpecError> {
    let lru = PolicySpec::from(PolicyKind::Lru);
    let mut exact_lru = false;
    let mut others = Vec::new();
    for p in list {
        let spec: PolicySpec = p.parse()?;
        if spec == lru {
            exact_lru = true;
        } else if spec.needs_future() {
            return Err(SpecError::Refused(format!(
                "{spec}: no miniature curve (it would need the sample's own future); -p {spec} at the sizes wanted gives its points"
            )));
        } else {
            others.push(spec);
        }
    }
    Ok((exact_lru, others))
}

/// `n` points spread evenly on a log scale from 0.1% to 100% of a
/// working set of `ws` units (distinct, at least 1 each).
pub fn log_points(ws: u64, n: usize) -> Vec<u64> {
    let mut out: Vec<u64> = (0..n)
        .map(|i| {
            let f = i as f64 / (n.max(2) - 1) as f64;
            ((ws as f64 * 10f64.powf(-3.0 + 3.0 * f)).round() as u64).max(1)
        })
        .collect();
    out.dedup();
    out
}

/// Caches of each policy at each point, scaled down, fed the sampled
/// requests.
pub struct Miniature {
    sample: Spatial,
    unit: Unit,
    /// (policy, full size, the scaled cache).
    caches: Vec<(usize, u64, Cache)>,
    policies: Vec<PolicySpec>,
    /// Sampled objects seen, and the bytes of their first requests.
    seen: FxHashSet<u64>,
    seen_bytes: u64,
    requests: u64,
    sampled: u64,
    warmup: u64,
    /// Requests and bytes of the whole trace counted (after the warm-up).
    counted: u64,
    counted_bytes: u64,
}

impl Miniature {
    /// Curves of `policies` at `sizes` (full sizes, in `unit`), sampled at
    /// `rate` (0 < rate ≤ 1); the first `warmup` requests fill the caches
    /// uncounted.
    pub fn new(
        policies: &[PolicySpec],
        sizes: &[u64],
        unit: Unit,
        rate: f64,
        warmup: u64,
    ) -> Miniature {
        let sample = Spatial::new(rate);
        let r = sample.rate();
        let mut caches = Vec::new();
        for (i, p) in policies.iter().enumerate() {
            for &s in sizes {
                let scaled = ((s as f64 * r).round() as u64).max(1);
                let mut c = Cache::of(p, scaled, unit);
                if warmup > 0 {
                    // Ended by request number of the whole trace, below.
                    c = c.with_warmup(u64::MAX);
                }
                caches.push((i, s, c));
            }
        }
        Miniature {
            sample,
            unit,
            caches,
            policies: policies.to_vec(),
            seen: FxHashSet::default(),
            seen_bytes: 0,
            requests: 0,
            sampled: 0,
            warmup,
            counted: 0,
            counted_bytes: 0,
        }
    }

    /// The sampling rate used (the threshold's, rounded).
    pub fn rate(&self) -> f64 {
        self.sample.rate()
    }

    /// Feeds one request of the whole trace.
    #[inline]
    pub fn access(&mut self, req: &Request) {
        self.requests += 1;
        if self.requests > self.warmup {
            if self.requests == self.warmup + 1 && self.warmup > 0 {
                for (_, _, c) in &mut self.caches {
                    c.end_warmup();
                }
            }
            self.counted += 1;
            self.counted_bytes += req.size as u64;
        }
        if !self.sample.keeps(req.id) {
            return;
        }
        self.sampled += 1;
        if self.seen.insert(req.id) {
            self.seen_bytes += req.size as u64;
        }
        for (_, _, c) in &mut self.caches {
            c.access(req);
        }
    }

    /// The curves; `full`, when given, holds each point's miss ratio by
    /// full simulation (same order: policies outermost, then sizes), for
    /// the error.
    pub fn finish(mut self, full: Option<&[f64]>) -> MiniReport {
        if self.requests <= self.warmup {
            for (_, _, c) in &mut self.caches {
                c.end_warmup();
            }
        }
        let rate = self.rate();
        // What one sampled object charges on average, in the unit.
        let mean_charge = match self.unit {
            Unit::Objects => 1.0,
            Unit::Bytes if self.seen.is_empty() => 1.0,
            Unit::Bytes => self.seen_bytes as f64 / self.seen.len() as f64,
        };
        let mut curves: Vec<MiniCurve> = self
            .policies
            .iter()
            .map(|p| MiniCurve {
                policy: p.to_string(),
                points: Vec::new(),
                mean_absolute_error: None,
                reliable_points: 0,
            })
            .collect();
        for (k, (i, size, c)) in self.caches.iter().enumerate() {
            let scaled = c.policy().capacity();
            let st = c.stats();
            let expected = (self.counted as f64 * rate).max(1.0);
            let expected_bytes = (self.counted_bytes as f64 * rate).max(1.0);
            curves[*i].points.push(MiniPoint {
                size: *size,
                scaled,
                miss_ratio: (st.misses() as f64 / expected).min(1.0),
                byte_miss_ratio: (st.bytes_missed as f64 / expected_bytes).min(1.0),
                sampled_miss_ratio: st.miss_ratio(),
                reliable: scaled as f64 / mean_charge >= MIN_OBJECTS,
                full: full.and_then(|f| f.get(k).copied()),
            });
        }
        for c in &mut curves {
            let reliable: Vec<&MiniPoint> = c.points.iter().filter(|p| p.reliable).collect();
            c.reliable_points = reliable.len();
            let errors: Vec<f64> = reliable
                .iter()
                .filter_map(|p| p.full.map(|f| (p.miss_ratio - f).abs()))
                .collect();
            if !errors.is_empty() {
                c.mean_absolute_error = Some(errors.iter().sum::<f64>() / errors.len() as f64);
            }
        }
        MiniReport {
            unit: self.unit,
            rate,
            requests: self.requests,
            sampled: self.sampled,
            sampled_objects: self.seen.len() as u64,
            curves,
        }
    }
}

/// Curves by miniature simulation.
#[derive(Clone, Debug, Serialize)]
pub struct MiniReport {
    pub unit: Unit,
    pub rate: f64,
    pub requests: u64,
    /// Requests, and distinct objects, the sample kept.
    pub sampled: u64,
    pub sampled_objects: u64,
    pub curves: Vec<MiniCurve>,
}

/// One policy's curve.
#[derive(Clone, Debug, Serialize)]
pub struct MiniCurve {
    pub policy: String,
    pub points: Vec<MiniPoint>,
    /// Points whose scaled cache holds at least [`MIN_OBJECTS`] objects.
    pub reliable_points: usize,
    /// Mean |miniature − full| over the reliable points, when full
    /// simulation ran beside.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_absolute_error: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct MiniPoint {
    /// The full cache's size, and the miniature's.
    pub size: u64,
    pub scaled: u64,
    /// Misses over the requests expected in the sample (see the module's
    /// text); bytes alike.
    pub miss_ratio: f64,
    pub byte_miss_ratio: f64,
    /// Misses over the requests the sample held.
    pub sampled_miss_ratio: f64,
    /// Whether the scaled cache holds at least [`MIN_OBJECTS`] objects.
    pub reliable: bool,
    /// The full simulation's miss ratio, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full: Option<f64>,
}

impl MiniReport {
    /// Each curve as (size, miss ratio) points, for plots.
    pub fn curves(&self) -> Vec<(String, Vec<(u64, f64)>)> {
        self.curves
            .iter()
            .map(|c| {
                (
                    format!("{} (miniature)", c.policy),
                    c.points.iter().map(|p| (p.size, p.miss_ratio)).collect(),
                )
            })
            .collect()
    }
}

impl fmt::Display for MiniReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = match self.unit {
            Unit::Objects => "objects",
            Unit::Bytes => "bytes",
        };
        writeln!(
            f,
            "Miss-ratio curves by miniature simulation (rate {}: {} of {} requests, {} objects sampled)",
            crate::mrc::rate_text(self.rate),
            self.sampled,
            self.requests,
            self.sampled_objects
        )?;
        for c in &self.curves {
            writeln!(f, "{}:", c.policy)?;
            let check = c.points.iter().any(|p| p.full.is_some());
            write!(
                f,
                "{:>14} {:>12} {:>10} {:>10}",
                format!("size ({unit})"),
                "miniature",
                "miss ratio",
                "byte m.r."
            )?;
            if check {
                write!(f, " {:>10} {:>8}", "full", "error")?;
            }
            writeln!(f)?;
            for p in &c.points {
                write!(
                    f,
                    "{:>14} {:>12} {:>10.6} {:>10.6}",
                    p.size, p.scaled, p.miss_ratio, p.byte_miss_ratio
                )?;
                if let Some(full) = p.full {
                    write!(f, " {:>10.6} {:>8.4}", full, p.miss_ratio - full)?;
                }
                writeln!(f, "{}", if p.reliable { "" } else { "  (few objects)" })?;
            }
            let few = c.points.len() - c.reliable_points;
            if few > 0 {
                writeln!(
                    f,
                    "  {few} point(s) marked: the scaled cache holds fewer than {MIN_OBJECTS} objects"
                )?;
            }
            if let Some(e) = c.mean_absolute_error {
                writeln!(
                    f,
                    "  mean absolute error against full simulation: {e:.4} ({} points)",
                    c.reliable_points
                )?;
            }
        }
        Ok(())
    }
}
