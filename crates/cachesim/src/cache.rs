//! A policy with its bookkeeping: what a buffer pool reports.

use std::fmt;

use rustc_hash::FxHashSet;
use serde::Serialize;

use crate::policy::{Access, Fifo, Lru, Policy, PolicyKind, PolicySpec};
use crate::request::{Op, Request};

/// What capacity counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// Objects, each of size 1 (libCacheSim's `ignore_obj_size`).
    Objects,
    /// Bytes: each object charges its size.
    Bytes,
}

impl Unit {
    /// What `req` charges against capacity.
    #[inline]
    pub fn charge(self, req: &Request) -> u64 {
        match self {
            Unit::Objects => 1,
            Unit::Bytes => req.size as u64,
        }
    }
}

/// Counts for one cache.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    pub reads: u64,
    pub writes: u64,
    pub read_hits: u64,
    pub write_hits: u64,
    /// Bytes requested and bytes missed (object sizes, whatever the unit).
    pub bytes: u64,
    pub bytes_missed: u64,
    pub evictions: u64,
    /// Evictions of objects written since they were loaded.
    pub write_backs: u64,
    pub prefetches: u64,
}

impl Stats {
    pub fn requests(&self) -> u64 {
        self.reads + self.writes
    }
    pub fn hits(&self) -> u64 {
        self.read_hits + self.write_hits
    }
    pub fn misses(&self) -> u64 {
        self.requests() - self.hits()
    }
    /// Misses per request (0 for no requests).
    pub fn miss_ratio(&self) -> f64 {
        ratio(self.misses(), self.requests())
    }
    /// Bytes missed per byte requested.
    pub fn byte_miss_ratio(&self) -> f64 {
        ratio(self.bytes_missed, self.bytes)
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// A cache: a policy, its capacity unit, its statistics and which cached
/// objects are dirty (in the policy's entries when it keeps that, else in a
/// set here).
pub struct Cache {
    policy: Held,
    /// The policy as `--policy` spells it, parameters and filter included.
    label: String,
    unit: Unit,
    stats: Stats,
    /// Whether the policy keeps the dirty bits (`Policy::write_backs`).
    policy_dirty: bool,
    dirty: FxHashSet<u64>,
    evicted: Vec<u64>,
    /// Requests still to come before counting starts, and the policy's
    /// own write-back count when it did.
    warmup: u64,
    write_backs_before: u64,
}

impl Cache {
    /// The first `n` requests warm the cache and are not counted (its
    /// contents stay).
    pub fn with_warmup(mut self, n: u64) -> Cache {
        self.warmup = n;
        self
    }

    /// A cache of `kind` holding `capacity` units.
    pub fn new(kind: PolicyKind, capacity: u64, unit: Unit) -> Cache {
        Cache::of(&PolicySpec::from(kind), capacity, unit)
    }

    /// A cache of `spec` (parameters, admission filter) holding `capacity`
    /// units.
    pub fn of(spec: &PolicySpec, capacity: u64, unit: Unit) -> Cache {
        let label = spec.to_string();
        let plain = *spec == PolicySpec::from(spec.kind);
        match spec.kind {
            PolicyKind::Lru if plain => Cache::held(Held::Lru(Lru::new(capacity)), unit, label),
            PolicyKind::Fifo if plain => Cache::held(Held::Fifo(Fifo::new(capacity)), unit, label),
            _ => Cache::held(Held::Other(spec.build(capacity)), unit, label),
        }
    }

    /// A cache around any policy.
    pub fn with_policy(policy: Box<dyn Policy>, unit: Unit) -> Cache {
        let label = policy.name().to_string();
        Cache::held(Held::Other(policy), unit, label)
    }

    fn held(policy: Held, unit: Unit, label: String) -> Cache {
        Cache {
            label,
            policy_dirty: policy.write_backs().is_some(),
            policy,
            unit,
            stats: Stats::default(),
            dirty: FxHashSet::default(),
            evicted: Vec::new(),
            warmup: 0,
            write_backs_before: 0,
        }
    }

    /// Serves one request; true on a hit.
    #[inline]
    pub fn access(&mut self, req: &Request) -> bool {
        if self.warmup != 0 {
            self.warm();
        }
        let a = Access {
            id: req.id,
            charge: self.unit.charge(req),
            next_access: req.next_access,
            write: req.op == Op::Write,
        };
        let hit = self.policy.get(a, &mut self.evicted);
        let s = &mut self.stats;
        s.bytes += req.size as u64;
        if !hit {
            s.bytes_missed += req.size as u64;
        }
        match req.op {
            Op::Read => {
                s.reads += 1;
                s.read_hits += hit as u64;
            }
            Op::Write => {
                s.writes += 1;
                s.write_hits += hit as u64;
            }
        }
        self.settle(req.op == Op::Write, req.id);
        hit
    }

    /// Ends the warm-up at the end of the trace: a trace no longer than
    /// it leaves nothing counted.
    pub fn end_warmup(&mut self) {
        if self.warmup != 0 {
            self.stats = Stats::default();
            self.write_backs_before = self.policy.write_backs().unwrap_or(0);
            self.warmup = 0;
        }
    }

    /// Counts down the warm-up; at its end the counts start afresh.
    #[cold]
    fn warm(&mut self) {
        if self.stats.requests() == self.warmup {
            self.stats = Stats::default();
            self.write_backs_before = self.policy.write_backs().unwrap_or(0);
            self.warmup = 0;
        }
    }

    /// Loads an object without counting a request.
    pub fn prefetch(&mut self, req: &Request) {
        let a = Access {
            id: req.id,
            charge: self.unit.charge(req),
            next_access: req.next_access,
            write: false,
        };
        self.stats.prefetches += 1;
        self.policy.as_dyn_mut().prefetch(a, &mut self.evicted);
        self.settle(false, req.id);
    }

    /// Counts the evictions of the last request and what they wrote back.
    /// Policies that keep their own dirty bits (LRU, FIFO, …) are settled
    /// here in line; the others, whose dirty objects are in this cache's
    /// set, out of line.
    #[inline(always)]
    fn settle(&mut self, write: bool, id: u64) {
        if self.policy_dirty {
            if !self.evicted.is_empty() {
                self.stats.evictions += self.evicted.len() as u64;
                self.evicted.clear();
                if let Some(w) = self.policy.write_backs() {
                    self.stats.write_backs = w - self.write_backs_before;
                }
            }
            return;
        }
        self.settle_dirty_set(write, id);
    }

    #[inline(never)]
    fn settle_dirty_set(&mut self, write: bool, id: u64) {
        self.stats.evictions += self.evicted.len() as u64;
        if !self.dirty.is_empty() {
            for v in self.evicted.drain(..) {
                if self.dirty.remove(&v) {
                    self.stats.write_backs += 1;
                }
            }
        } else {
            self.evicted.clear();
        }
        if write && self.policy.as_dyn().contains(id) {
            self.dirty.insert(id);
        }
    }

    /// Whether `id` is cached.
    pub fn contains(&self, id: u64) -> bool {
        self.policy.as_dyn().contains(id)
    }
    pub fn stats(&self) -> &Stats {
        &self.stats
    }
    /// The policy as `--policy` spells it.
    pub fn label(&self) -> &str {
        &self.label
    }
    pub fn policy(&self) -> &dyn Policy {
        self.policy.as_dyn()
    }
    pub fn unit(&self) -> Unit {
        self.unit
    }
    /// Objects written and still cached (they would be written back at a
    /// flush).
    pub fn dirty(&self) -> usize {
        self.policy().dirty_len().unwrap_or(self.dirty.len())
    }

    /// A report of this cache.
    pub fn report(&self) -> CacheReport {
        let policy = self.policy();
        CacheReport {
            policy: self.label.clone(),
            capacity: policy.capacity(),
            unit: self.unit,
            cached: policy.len() as u64,
            occupied: policy.occupied(),
            dirty: self.dirty() as u64,
            miss_ratio: self.stats.miss_ratio(),
            byte_miss_ratio: self.stats.byte_miss_ratio(),
            stats: self.stats.clone(),
        }
    }
}

/// A cache's policy: the two commonest held by value, so that their
/// requests inline into [`Cache::access`] (no call through a trait object
/// per request), any other behind the trait.
enum Held {
    Lru(Lru),
    Fifo(Fifo),
    Other(Box<dyn Policy>),
}

impl Held {
    /// [`Policy::get`], called directly for the policies held by value.
    #[inline]
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        match self {
            Held::Lru(p) => p.get(a, evicted),
            Held::Fifo(p) => p.get(a, evicted),
            Held::Other(p) => p.get(a, evicted),
        }
    }
    /// [`Policy::write_backs`], likewise (asked after every eviction).
    #[inline]
    fn write_backs(&self) -> Option<u64> {
        match self {
            Held::Lru(p) => p.write_backs(),
            Held::Fifo(p) => p.write_backs(),
            Held::Other(p) => p.write_backs(),
        }
    }
    fn as_dyn(&self) -> &dyn Policy {
        match self {
            Held::Lru(p) => p,
            Held::Fifo(p) => p,
            Held::Other(p) => &**p,
        }
    }
    fn as_dyn_mut(&mut self) -> &mut dyn Policy {
        match self {
            Held::Lru(p) => p,
            Held::Fifo(p) => p,
            Held::Other(p) => &mut **p,
        }
    }
}

/// One cache's result.
#[derive(Clone, Debug, Serialize)]
pub struct CacheReport {
    pub policy: String,
    pub capacity: u64,
    pub unit: Unit,
    /// Objects cached at the end, the charge they hold, and how many are
    /// dirty.
    pub cached: u64,
    pub occupied: u64,
    pub dirty: u64,
    pub miss_ratio: f64,
    pub byte_miss_ratio: f64,
    #[serde(flatten)]
    pub stats: Stats,
}

impl fmt::Display for CacheReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.stats;
        let unit = match self.unit {
            Unit::Objects => "objects",
            Unit::Bytes => "bytes",
        };
        writeln!(
            f,
            "{} {} {unit}: {} requests, {} misses (miss ratio {:.6}, byte miss ratio {:.6})",
            self.policy,
            self.capacity,
            s.requests(),
            s.misses(),
            self.miss_ratio,
            self.byte_miss_ratio
        )?;
        write!(
            f,
            "  reads {} (hits {}), writes {} (hits {}), evictions {}, write-backs {}, prefetches {}, dirty at end {}",
            s.reads,
            s.read_hits,
            s.writes,
            s.write_hits,
            s.evictions,
            s.write_backs,
            s.prefetches,
            self.dirty
        )
    }
}
