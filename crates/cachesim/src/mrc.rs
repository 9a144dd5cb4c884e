//! Miss-ratio curves of LRU from stack distances.
//!
//! LRU has the inclusion property: a cache of capacity C holds exactly the
//! objects whose *stack depth* — the charge of the distinct objects
//! requested since the object's last request, plus its own — is at most C.
//! So one pass that measures each request's depth gives the miss ratio of
//! every capacity at once. In bytes, an object larger than a cache never
//! enters it (libCacheSim admits nothing larger than the cache) and so
//! evicts nothing, which no single stack models: the curve is exact for
//! capacities at least the largest object, an upper bound below. Depths come from a Fenwick tree over the
//! positions of each object's last request (O(log n) per request); the
//! positions are renumbered when they run out, so memory follows the
//! number of distinct objects, not the trace length. In bytes, this holds
//! while each object keeps one size.
//!
//! [`StackDistances`] with a sampling rate below 1 is SHARDS (Waldspurger et
//! al., FAST '15): only objects whose hashed id falls under a threshold are
//! tracked, depths are scaled by 1/rate, and the histogram is adjusted by
//! the difference between the expected and the sampled request counts
//! (SHARDS-adj).

use std::fmt;

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::cache::Unit;
use crate::request::Request;
use tramp_core::rng::mix;

/// Modulus of SHARDS' hash threshold.
const SHARDS_MODULUS: u64 = 1 << 24;

/// SHARDS' spatial sampling, which the miniature simulations share: an
/// object is kept when a 64-bit mix of its id, modulo 2^24, falls under
/// the rate's threshold (so the same objects at the same rate).
#[derive(Clone, Copy, Debug)]
pub struct Spatial {
    threshold: u64,
}

impl Spatial {
    /// At `rate` (0 < rate ≤ 1; at least one object in 2^24).
    pub fn new(rate: f64) -> Spatial {
        Spatial {
            threshold: ((rate.clamp(0.0, 1.0) * SHARDS_MODULUS as f64).round() as u64).max(1),
        }
    }
    /// The rate actually used (the threshold's).
    pub fn rate(self) -> f64 {
        self.threshold as f64 / SHARDS_MODULUS as f64
    }
    /// Whether every object is kept.
    pub fn all(self) -> bool {
        self.threshold >= SHARDS_MODULUS
    }
    #[inline]
    pub fn keeps(self, id: u64) -> bool {
        self.all() || mix(id) % SHARDS_MODULUS < self.threshold
    }
}

/// A Fenwick (binary indexed) tree of charges by position: the LRU
/// stack's marks, one at each object's last request (also tramp-analyze's).
pub struct Fenwick {
    tree: Vec<u64>,
}

impl Fenwick {
    /// `n` positions, all 0.
    pub fn new(n: usize) -> Fenwick {
        Fenwick {
            tree: vec![0; n + 1],
        }
    }
    /// Adds `v` at `pos`.
    #[inline]
    pub fn add(&mut self, pos: usize, v: i64) {
        let mut i = pos + 1;
        while i < self.tree.len() {
            self.tree[i] = self.tree[i].wrapping_add(v as u64);
            i += i & i.wrapping_neg();
        }
    }
    /// Sum of positions < pos.
    #[inline]
    pub fn prefix(&self, pos: usize) -> u64 {
        let mut i = pos;
        let mut s = 0u64;
        while i > 0 {
            s = s.wrapping_add(self.tree[i]);
            i &= i - 1;
        }
        s
    }
    /// Builds from charges by position in O(n), `n` positions.
    pub fn build(values: &[u64], n: usize) -> Fenwick {
        let mut tree = vec![0u64; n + 1];
        tree[1..=values.len()].copy_from_slice(values);
        for i in 1..=n {
            let j = i + (i & i.wrapping_neg());
            if j <= n {
                tree[j] = tree[j].wrapping_add(tree[i]);
            }
        }
        Fenwick { tree }
    }
}

/// The objects of a stack's positions in order, its emptied positions
/// (`u64::MAX`) left out: what a compaction renumbers 0..k.
pub fn live_ids(ids: &[u64]) -> Vec<u64> {
    ids.iter().copied().filter(|&id| id != u64::MAX).collect()
}

/// Measures the LRU stack depth of every request (of the sampled objects).
pub struct StackDistances {
    unit: Unit,
    sample: Spatial,
    /// id → (position of its last request, its charge).
    last: FxHashMap<u64, (u32, u64)>,
    /// id by position (u64::MAX: none).
    ids: Vec<u64>,
    fenwick: Fenwick,
    total: u64,
    next: usize,
    /// Histogram of depths (scaled to the full trace when sampling).
    hist: FxHashMap<u64, u64>,
    cold: u64,
    requests: u64,
    sampled: u64,
    /// Requests still to come before counting starts (the stack is kept).
    warmup: u64,
}

impl StackDistances {
    /// The first `n` requests warm the stack and are not counted.
    pub fn with_warmup(mut self, n: u64) -> StackDistances {
        self.warmup = n;
        self
    }

    /// Exact depths of every request.
    pub fn new(unit: Unit) -> StackDistances {
        StackDistances::sampled(unit, 1.0)
    }

    /// SHARDS at `rate` (0 < rate ≤ 1; 1 is exact).
    pub fn sampled(unit: Unit, rate: f64) -> StackDistances {
        let cap = 1024;
        StackDistances {
            unit,
            sample: Spatial::new(rate),
            last: FxHashMap::default(),
            ids: vec![u64::MAX; cap],
            fenwick: Fenwick::new(cap),
            total: 0,
            next: 0,
            hist: FxHashMap::default(),
            cold: 0,
            requests: 0,
            sampled: 0,
            warmup: 0,
        }
    }

    /// The sampling rate actually used.
    pub fn rate(&self) -> f64 {
        self.sample.rate()
    }

    fn sampled_id(&self, id: u64) -> bool {
        self.sample.keeps(id)
    }

    /// Accounts for one request.
    #[inline]
    pub fn access(&mut self, req: &Request) {
        if self.warmup != 0 && self.requests == self.warmup {
            // Warmed up: the counts start now.
            (self.requests, self.sampled, self.cold, self.warmup) = (0, 0, 0, 0);
            self.hist.clear();
        }
        self.requests += 1;
        if !self.sampled_id(req.id) {
            return;
        }
        self.sampled += 1;
        let charge = self.unit.charge(req);
        if self.next == self.ids.len() {
            self.compact();
        }
        let pos = self.next;
        self.next += 1;
        match self.last.insert(req.id, (pos as u32, charge)) {
            Some((p, c)) => {
                let p = p as usize;
                let depth = self.total - self.fenwick.prefix(p);
                let depth = if self.sample.all() {
                    depth
                } else {
                    // The others' charge stands for 1/rate as much; the
                    // object's own charge is its own.
                    ((depth - charge) as f64 / self.rate()).round() as u64 + charge
                };
                *self.hist.entry(depth).or_insert(0) += 1;
                self.fenwick.add(p, -(c as i64));
                self.ids[p] = u64::MAX;
                self.total -= c;
            }
            None => self.cold += 1,
        }
        self.fenwick.add(pos, charge as i64);
        self.ids[pos] = req.id;
        self.total += charge;
    }

    /// Renumbers the live positions 0..k in order and makes room for as
    /// many again.
    fn compact(&mut self) {
        let live = live_ids(&self.ids[..self.next]);
        let cap = (live.len() * 2).max(1024);
        let mut charges = Vec::with_capacity(live.len());
        for (i, id) in live.iter().enumerate() {
            let e = self.last.get_mut(id).expect("live id");
            e.0 = i as u32;
            charges.push(e.1);
        }
        self.fenwick = Fenwick::build(&charges, cap);
        self.ids = live;
        self.next = self.ids.len();
        self.ids.resize(cap, u64::MAX);
    }

    /// The stack distances seen, (depth, requests) by depth (a request
    /// hits in an LRU cache of at least its depth), and the first
    /// requests of objects (no depth).
    pub fn depths(&self) -> (Vec<(u64, u64)>, u64) {
        let mut d: Vec<(u64, u64)> = self.hist.iter().map(|(&d, &n)| (d, n)).collect();
        d.sort_unstable();
        (d, self.cold)
    }

    /// The curve.
    pub fn finish(&self) -> Mrc {
        if self.warmup != 0 {
            // The trace ended within the warm-up: nothing was counted.
            let mut none = StackDistances::sampled(self.unit, self.rate());
            none.requests = 0;
            return none.finish();
        }
        let mut depths: Vec<(u64, u64)> = self.hist.iter().map(|(&d, &n)| (d, n)).collect();
        depths.sort_unstable();
        let (scale, total) = if self.sample.all() {
            (1.0, self.requests as f64)
        } else {
            // SHARDS-adj: the expected sampled count is requests × rate;
            // the difference goes to the smallest depth.
            let expected = self.requests as f64 * self.rate();
            let diff = expected - self.sampled as f64;
            if let Some(first) = depths.first_mut() {
                first.1 = (first.1 as f64 + diff).max(0.0).round() as u64;
            }
            (1.0 / self.rate(), expected.max(1.0) / self.rate())
        };
        // misses(C) = cold + #(depth > C), scaled to the whole trace.
        let mut reuse: u64 = depths.iter().map(|d| d.1).sum();
        let mut steps = Vec::with_capacity(depths.len() + 1);
        let cold = self.cold as f64 * scale;
        steps.push((0, ((cold + reuse as f64 * scale) / total).min(1.0)));
        for (d, n) in depths {
            reuse -= n;
            let r = ((cold + reuse as f64 * scale) / total).min(1.0);
            match steps.last_mut() {
                Some(last) if last.0 == d => last.1 = r,
                _ => steps.push((d, r)),
            }
        }
        let charges: u64 = self.last.values().map(|v| v.1).sum();
        Mrc {
            summary: MrcSummary {
                unit: self.unit,
                requests: self.requests,
                sampled: self.sampled,
                rate: self.rate(),
                distinct: (self.last.len() as f64 * scale).round() as u64,
                cold_misses: cold.round() as u64,
                sampled_objects: self.last.len() as u64,
                mean_charge: if self.last.is_empty() {
                    0.0
                } else {
                    charges as f64 / self.last.len() as f64
                },
            },
            steps,
        }
    }
}

/// An LRU miss-ratio curve: a step function of capacity.
#[derive(Clone, Debug, Serialize)]
pub struct Mrc {
    #[serde(flatten)]
    pub summary: MrcSummary,
    /// (capacity, miss ratio from this capacity up to the next step).
    pub steps: Vec<(u64, f64)>,
}

impl Mrc {
    /// The miss ratio of an LRU cache of `capacity`.
    pub fn miss_ratio(&self, capacity: u64) -> f64 {
        let i = self.steps.partition_point(|s| s.0 <= capacity);
        if i == 0 { 1.0 } else { self.steps[i - 1].1 }
    }

    /// Misses of an LRU cache of `capacity` (exact when not sampled).
    pub fn misses(&self, capacity: u64) -> u64 {
        (self.miss_ratio(capacity) * self.summary.requests as f64).round() as u64
    }

    /// The curve at `sizes`.
    pub fn at(&self, sizes: &[u64]) -> Vec<(u64, f64)> {
        sizes.iter().map(|&s| (s, self.miss_ratio(s))).collect()
    }

    /// Up to `n` capacities spread evenly on a log scale from 1 to the
    /// largest depth (for plots and default tables).
    pub fn log_sizes(&self, n: usize) -> Vec<u64> {
        let max = self.steps.last().map_or(1, |s| s.0).max(1);
        let mut out: Vec<u64> = (0..n)
            .map(|i| {
                let f = i as f64 / (n.max(2) - 1) as f64;
                ((max as f64).powf(f)).round() as u64
            })
            .collect();
        out.dedup();
        out
    }
}

/// A sampling rate with four significant digits, however small (not
/// `0.0000` for 10^-5).
pub fn rate_text(rate: f64) -> String {
    if rate >= 0.001 {
        format!("{rate:.4}")
    } else {
        format!("{rate:.3e}")
    }
}

/// The curve at chosen sizes, for reports.
#[derive(Clone, Debug, Serialize)]
pub struct MrcReport {
    #[serde(flatten)]
    pub summary: MrcSummary,
    pub points: Vec<MrcPoint>,
}

/// What a curve was measured over.
#[derive(Clone, Debug, Serialize)]
pub struct MrcSummary {
    pub unit: Unit,
    pub requests: u64,
    /// Requests whose object was sampled (all of them when exact).
    pub sampled: u64,
    pub rate: f64,
    /// Distinct objects (estimated when sampling).
    pub distinct: u64,
    pub cold_misses: u64,
    /// Distinct objects in the sample, and their mean charge (1 by
    /// objects, their mean size by bytes).
    pub sampled_objects: u64,
    pub mean_charge: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct MrcPoint {
    pub size: u64,
    pub miss_ratio: f64,
    /// Whether the point stands on enough of the sample: exact, or the
    /// cache scaled by the rate holds at least [`crate::mini::MIN_OBJECTS`]
    /// sampled objects (the rule of the miniature curves).
    pub reliable: bool,
}

impl MrcReport {
    pub fn new(mrc: &Mrc, sizes: &[u64]) -> MrcReport {
        let s = &mrc.summary;
        let reliable = |size: u64| {
            s.rate >= 1.0
                || (s.mean_charge > 0.0
                    && size as f64 * s.rate / s.mean_charge >= crate::mini::MIN_OBJECTS)
        };
        MrcReport {
            summary: s.clone(),
            points: mrc
                .at(sizes)
                .into_iter()
                .map(|(size, miss_ratio)| MrcPoint {
                    size,
                    miss_ratio,
                    reliable: reliable(size),
                })
                .collect(),
        }
    }

    /// Why no curve can be drawn: a sample that holds no request.
    pub fn refusal(&self) -> Option<String> {
        let s = &self.summary;
        (s.requests > 0 && s.sampled == 0).then(|| {
            format!(
                "the SHARDS sample at rate {} holds none of the {} requests: no curve from it",
                rate_text(s.rate),
                s.requests
            )
        })
    }
}

impl fmt::Display for MrcReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.summary;
        let unit = match s.unit {
            Unit::Objects => "objects",
            Unit::Bytes => "bytes",
        };
        if s.rate < 1.0 {
            writeln!(
                f,
                "LRU miss-ratio curve (SHARDS, rate {}: {} of {} requests, {} objects sampled)",
                rate_text(s.rate),
                s.sampled,
                s.requests,
                s.sampled_objects
            )?;
        } else {
            writeln!(
                f,
                "LRU miss-ratio curve (exact, stack distances): {} requests",
                s.requests
            )?;
        }
        writeln!(
            f,
            "distinct objects {}, cold misses {}",
            s.distinct, s.cold_misses
        )?;
        writeln!(f, "{:>14} {:>10}", format!("size ({unit})"), "miss ratio")?;
        for p in &self.points {
            writeln!(
                f,
                "{:>14} {:>10.6}{}",
                p.size,
                p.miss_ratio,
                if p.reliable { "" } else { "  (few objects)" }
            )?;
        }
        let few = self.points.iter().filter(|p| !p.reliable).count();
        if few > 0 {
            writeln!(
                f,
                "  {few} point(s) marked: the cache scaled by the rate holds fewer than {} sampled objects",
                crate::mini::MIN_OBJECTS
            )?;
        }
        Ok(())
    }
}
