//! Replacement policies behind one trait: a new policy is one file that
//! implements [`Policy`], a variant of [`PolicyKind`], its row of
//! [`POLICIES`] (name, aliases, needs, about) and its arm of
//! `PolicySpec::build` (with its parameters in `spec.rs`).
//!
//! Every policy follows libCacheSim 0.3.5's definition of it (the order of
//! lookups, where new objects go, queue sizes truncated from ratios), so
//! miss counts agree with libCacheSim exactly; docs/cachesim.md lists the
//! parameters. Capacity and object charges share one unit: bytes, or 1 per
//! object when a cache counts objects.

// The bookkeeping every policy answers the same way, written once (as
// libCacheSim's `*_default` functions are): its name and capacity, and
// what its store of entries holds.

/// `fn name` and `fn capacity` of a policy whose capacity is the field
/// `$cap`.
macro_rules! named {
    ($name:literal, $cap:ident) => {
        fn name(&self) -> &'static str {
            $name
        }
        fn capacity(&self) -> u64 {
            self.$cap
        }
    };
}

/// `fn contains`, `fn occupied` and `fn len` of a policy whose entries are
/// in a `table` (found by id), a `map` (a hash map by id) or a `pool`
/// (libCacheSim's hash table), with the charge held in `$occupied` (a sum
/// of fields where the policy keeps one per queue); `queue` adds the
/// write-back counts of a policy held in one [`queue::Queue`].
macro_rules! held_in {
    (table $t:ident, $($occupied:ident).+ $(+ $($more:ident).+)*) => {
        fn contains(&self, id: u64) -> bool {
            self.$t.find(id).is_some()
        }
        fn occupied(&self) -> u64 {
            self.$($occupied).+ $(+ self.$($more).+)*
        }
        fn len(&self) -> usize {
            self.$t.len()
        }
    };
    (map $m:ident, $($occupied:ident).+) => {
        fn contains(&self, id: u64) -> bool {
            self.$m.contains_key(&id)
        }
        fn occupied(&self) -> u64 {
            self.$($occupied).+
        }
        fn len(&self) -> usize {
            self.$m.len()
        }
    };
    (queue $q:ident) => {
        fn contains(&self, id: u64) -> bool {
            self.$q.find(id).is_some()
        }
        fn occupied(&self) -> u64 {
            self.$q.occupied()
        }
        fn len(&self) -> usize {
            self.$q.len()
        }
        fn write_backs(&self) -> Option<u64> {
            Some(self.$q.write_backs)
        }
        fn dirty_len(&self) -> Option<usize> {
            Some(self.$q.dirty_len())
        }
    };
    (pool $p:ident, $($occupied:ident).+) => {
        fn contains(&self, id: u64) -> bool {
            self.$p.contains(id)
        }
        fn occupied(&self) -> u64 {
            self.$($occupied).+
        }
        fn len(&self) -> usize {
            self.$p.len()
        }
    };
}

mod adaptsize;
pub mod admission;
mod arc;
mod beladysize;
mod cacheus;
mod clock;
mod clock2qplus;
mod clockpro;
mod flashprob;
mod gdsf;
mod ghost;
mod groups;
mod hyperbolic;
mod lecar;
mod lfu;
mod lfuda;
mod lhd;
mod lirs;
mod lruk;
mod lruprob;
mod mq;
mod opt;
mod pool;
mod pqueue;
mod queue;
mod random;
mod s3fifo;
mod sieve;
mod size;
mod slru;
pub mod spec;
mod sublru;
mod twoq;
mod wtinylfu;

pub use arc::Arc;
pub use beladysize::BeladySize;
pub use cacheus::Cacheus;
pub use clock::Clock;
pub use clock2qplus::Clock2QPlus;
pub use clockpro::ClockPro;
pub use flashprob::FlashProb;
pub use gdsf::Gdsf;
pub use hyperbolic::Hyperbolic;
pub use lecar::LeCaR;
pub use lfu::Lfu;
pub use lfuda::Lfuda;
pub use lhd::Lhd;
pub use lirs::Lirs;
pub use lruk::LruK;
pub use lruprob::LruProb;
pub use mq::Mq;
pub use opt::Opt;
pub use queue::{Fifo, Lru, SingleQueue};
pub use random::Random;
pub use s3fifo::S3Fifo;
pub use sieve::Sieve;
pub use size::Size;
pub use slru::Slru;
pub use spec::PolicySpec;
pub use twoq::TwoQ;
pub use wtinylfu::WTinyLfu;

use std::fmt;
use std::str::FromStr;

/// One request as a policy sees it.
#[derive(Clone, Copy, Debug)]
pub struct Access {
    pub id: u64,
    /// What the object costs against capacity (bytes, or 1).
    pub charge: u64,
    /// The request number of its next request ([`crate::NEVER`] if none).
    pub next_access: u64,
    /// The request writes the object (policies that keep dirty bits mark
    /// it, see [`Policy::write_backs`]).
    pub write: bool,
}

/// A replacement policy.
pub trait Policy: Send {
    /// The policy's name, as `--policy` spells it.
    fn name(&self) -> &'static str;
    /// Capacity, in the cache's unit.
    fn capacity(&self) -> u64;
    /// Serves a request: true on a hit. On a miss the object is admitted if
    /// it can be, after evicting what must go; every evicted id is pushed to
    /// `evicted`.
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool;
    /// Whether the object is cached (ghost entries do not count); no
    /// metadata changes.
    fn contains(&self, id: u64) -> bool;
    /// Charge of the cached objects.
    fn occupied(&self) -> u64;
    /// Number of cached objects.
    fn len(&self) -> usize;
    /// Whether nothing is cached.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Loads an object without a reference from the program (the TRAMP
    /// paper's prefetch routine). Policies without a notion of their own
    /// treat it as a request; the caller does not count it as one.
    fn prefetch(&mut self, a: Access, evicted: &mut Vec<u64>) {
        if !self.contains(a.id) {
            self.get(a, evicted);
        }
    }
    /// Write-back bookkeeping kept in the policy's own entries (no set
    /// lookups per request): a policy that keeps it marks an object dirty
    /// when a request with `write` finds or admits it, and answers the dirty
    /// objects evicted so far here. `None`: the policy does not keep it, and
    /// the cache keeps a set of dirty ids instead.
    fn write_backs(&self) -> Option<u64> {
        None
    }
    /// With `write_backs`: dirty objects cached now (a walk over them).
    fn dirty_len(&self) -> Option<usize> {
        None
    }
}

/// The policies by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PolicyKind {
    Lru,
    Fifo,
    /// CLOCK with an n-bit counter per object (libCacheSim's default: 1).
    Clock {
        bits: u8,
    },
    Sieve,
    S3Fifo,
    Arc,
    TwoQ,
    Lfu,
    /// Belady's MIN: evicts the object requested furthest in the future.
    Opt,
    /// Segmented LRU with `segments` equal segments (libCacheSim's
    /// default: 4).
    Slru {
        segments: u8,
    },
    /// Evicts the largest object.
    Size,
    /// Multi-Queue: 8 LRU queues by frequency, with expiry and a history.
    Mq,
    /// LFU with dynamic aging.
    Lfuda,
    /// Greedy-Dual-Size-Frequency.
    Gdsf,
    /// LRU-K (K = 2 unless `k` says otherwise).
    LruK,
    /// Evicts a cached object at random.
    Random,
    /// LRU whose hits promote with a probability.
    LruProb,
    /// A RAM LRU whose victims go to a flash FIFO with a probability.
    FlashProb,
    /// Evicts the lowest requests-per-time of a random sample.
    Hyperbolic,
    /// Evicts the largest size × next-request distance of a random sample.
    BeladySize,
    /// A small FIFO with a correlation window, a main CLOCK and a ghost.
    Clock2QPlus,
    /// Low Inter-reference Recency Set.
    Lirs,
    /// A window LRU before an SLRU, admission by a frequency sketch.
    WTinyLfu,
    /// LRU and LFU experts weighted by regret.
    LeCaR,
    /// Least hit density.
    Lhd,
    /// CLOCK-Pro: hot, cold and test pages on one clock.
    ClockPro,
    /// SR-LRU and CR-LFU experts with a learnt rate.
    Cacheus,
}

/// One policy of the catalogue: the one table from which the policy list,
/// names, aliases, the unknown-policy message and what a policy needs are
/// all derived (docs/cachesim.md is checked against it).
#[derive(Clone, Copy, Debug)]
pub struct PolicyInfo {
    /// With its default parameters.
    pub kind: PolicyKind,
    /// The name `--policy` spells and reports show.
    pub name: &'static str,
    /// Other names `--policy` takes.
    pub aliases: &'static [&'static str],
    /// It needs each request's next-access time.
    pub needs_future: bool,
    /// One line on what it is.
    pub about: &'static str,
}

const fn info(
    kind: PolicyKind,
    name: &'static str,
    aliases: &'static [&'static str],
    needs_future: bool,
    about: &'static str,
) -> PolicyInfo {
    PolicyInfo {
        kind,
        name,
        aliases,
        needs_future,
        about,
    }
}

/// The catalogue, in the order lists show it.
pub const POLICIES: [PolicyInfo; 27] = [
    info(PolicyKind::Lru, "lru", &[], false, "least recently used"),
    info(PolicyKind::Fifo, "fifo", &[], false, "first in, first out"),
    info(
        PolicyKind::Clock { bits: 1 },
        "clock",
        &["clock1", "second-chance"],
        false,
        "CLOCK with an n-bit counter (clock2, clock3 for 2 and 3 bits)",
    ),
    info(
        PolicyKind::Sieve,
        "sieve",
        &[],
        false,
        "SIEVE: a FIFO with a moving hand",
    ),
    info(
        PolicyKind::S3Fifo,
        "s3fifo",
        &["s3-fifo"],
        false,
        "small, main and ghost FIFOs",
    ),
    info(
        PolicyKind::Arc,
        "arc",
        &[],
        false,
        "Adaptive Replacement Cache",
    ),
    info(
        PolicyKind::TwoQ,
        "2q",
        &["twoq"],
        false,
        "2Q: A1in FIFO, A1out ghost, Am LRU",
    ),
    info(PolicyKind::Lfu, "lfu", &[], false, "least frequently used"),
    info(
        PolicyKind::Opt,
        "opt",
        &["belady", "min"],
        true,
        "Belady's MIN: the object requested furthest in the future",
    ),
    info(
        PolicyKind::Slru { segments: 4 },
        "slru",
        &[],
        false,
        "segmented LRU (slru2 … slru16 for other segment counts)",
    ),
    info(
        PolicyKind::Size,
        "size",
        &[],
        false,
        "evicts the largest object",
    ),
    info(
        PolicyKind::Mq,
        "mq",
        &[],
        false,
        "Multi-Queue: LRU queues by frequency, with expiry",
    ),
    info(
        PolicyKind::Lfuda,
        "lfuda",
        &[],
        false,
        "LFU with dynamic aging",
    ),
    info(
        PolicyKind::Gdsf,
        "gdsf",
        &[],
        false,
        "Greedy-Dual-Size-Frequency",
    ),
    info(
        PolicyKind::LruK,
        "lruk",
        &["lru-k", "lru_k"],
        false,
        "LRU-K (K = 2 by default)",
    ),
    info(
        PolicyKind::Random,
        "random",
        &[],
        false,
        "evicts a cached object at random",
    ),
    info(
        PolicyKind::LruProb,
        "lruprob",
        &["lru-prob", "lru_prob"],
        false,
        "LRU whose hits promote with a probability",
    ),
    info(
        PolicyKind::FlashProb,
        "flashprob",
        &[],
        false,
        "a RAM LRU whose victims go to a flash FIFO with a probability",
    ),
    info(
        PolicyKind::Hyperbolic,
        "hyperbolic",
        &[],
        false,
        "the lowest requests per time of a random sample",
    ),
    info(
        PolicyKind::BeladySize,
        "beladysize",
        &["belady-size"],
        true,
        "the largest size × next-request distance of a random sample",
    ),
    info(
        PolicyKind::Clock2QPlus,
        "clock2qplus",
        &["clock2q+"],
        false,
        "a small FIFO with a correlation window, a main CLOCK and a ghost",
    ),
    info(
        PolicyKind::Lirs,
        "lirs",
        &[],
        false,
        "Low Inter-reference Recency Set",
    ),
    info(
        PolicyKind::WTinyLfu,
        "wtinylfu",
        &["w-tinylfu", "tinylfu"],
        false,
        "a window LRU before an SLRU, admission by a frequency sketch",
    ),
    info(
        PolicyKind::LeCaR,
        "lecar",
        &[],
        false,
        "LRU and LFU experts weighted by regret",
    ),
    info(PolicyKind::Lhd, "lhd", &[], false, "least hit density"),
    info(
        PolicyKind::ClockPro,
        "clockpro",
        &["clock-pro"],
        false,
        "CLOCK-Pro: hot, cold and test pages on one clock",
    ),
    info(
        PolicyKind::Cacheus,
        "cacheus",
        &[],
        false,
        "SR-LRU and CR-LFU experts with a learnt rate",
    ),
];

const fn kinds() -> [PolicyKind; 27] {
    let mut out = [PolicyKind::Lru; 27];
    let mut i = 0;
    while i < 27 {
        out[i] = POLICIES[i].kind;
        i += 1;
    }
    out
}

impl PolicyKind {
    /// Every policy, with its default parameters.
    pub const ALL: [PolicyKind; 27] = kinds();

    /// The policy's entry in [`POLICIES`] (that of its family for CLOCK's
    /// and SLRU's other counts).
    pub fn info(self) -> &'static PolicyInfo {
        let family = match self {
            PolicyKind::Clock { .. } => PolicyKind::Clock { bits: 1 },
            PolicyKind::Slru { .. } => PolicyKind::Slru { segments: 4 },
            k => k,
        };
        POLICIES
            .iter()
            .find(|p| p.kind == family)
            .expect("every kind is in the table")
    }

    /// A cache of this policy holding `capacity` units.
    pub fn build(self, capacity: u64) -> Box<dyn Policy> {
        PolicySpec::from(self).build(capacity)
    }

    /// Whether the policy needs next-access times.
    pub fn needs_future(self) -> bool {
        self.info().needs_future
    }
}

impl fmt::Display for PolicyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            PolicyKind::Clock { bits } if bits != 1 => write!(f, "clock{bits}"),
            PolicyKind::Slru { segments } if segments != 4 => write!(f, "slru{segments}"),
            k => f.write_str(k.info().name),
        }
    }
}

/// The names `--policy` knows, as its messages list them.
pub fn known_names() -> String {
    let mut names = Vec::new();
    for p in &POLICIES {
        names.push(p.name.to_string());
        match p.kind {
            PolicyKind::Clock { .. } => names.extend(["clock2".into(), "clock3".into()]),
            PolicyKind::Slru { .. } => names.push("slru2…slru16".into()),
            _ => {}
        }
    }
    names.join(", ")
}

/// A policy name `--policy` does not know.
#[derive(Debug, thiserror::Error)]
#[error("unknown policy {:?} (known: {})", .0, known_names())]
pub struct UnknownPolicy(pub String);

impl FromStr for PolicyKind {
    type Err = UnknownPolicy;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let l = s.to_ascii_lowercase();
        if let Some(p) = POLICIES
            .iter()
            .find(|p| p.name == l || p.aliases.contains(&l.as_str()))
        {
            return Ok(p.kind);
        }
        let counted = |prefix: &str, most: u8| {
            l.strip_prefix(prefix)
                .and_then(|n| n.parse::<u8>().ok())
                .filter(|n| (1..=most).contains(n))
        };
        if let Some(bits) = counted("clock", 3) {
            return Ok(PolicyKind::Clock { bits });
        }
        match counted("slru", 16) {
            Some(segments) => Ok(PolicyKind::Slru { segments }),
            None => Err(UnknownPolicy(s.to_string())),
        }
    }
}

/// Capacity of a part of a cache given as a ratio, truncated the way
/// libCacheSim truncates it (`(int64_t)(size * ratio)`).
pub(crate) fn part(capacity: u64, ratio: f64) -> u64 {
    (capacity as f64 * ratio) as u64
}
