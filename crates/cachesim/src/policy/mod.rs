//! Replacement policies behind one trait: a new policy is one file that
//! implements [`Policy`] and one line in [`PolicyKind`].
//!
//! Every policy follows libCacheSim 0.3.5's definition of it (the order of
//! lookups, where new objects go, queue sizes truncated from ratios), so
//! miss counts agree with libCacheSim exactly; docs/cachesim.md lists the
//! parameters. Capacity and object charges share one unit: bytes, or 1 per
//! object when a cache counts objects.

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

impl PolicyKind {
    /// Every policy, with its default parameters.
    pub const ALL: [PolicyKind; 27] = [
        PolicyKind::Lru,
        PolicyKind::Fifo,
        PolicyKind::Clock { bits: 1 },
        PolicyKind::Sieve,
        PolicyKind::S3Fifo,
        PolicyKind::Arc,
        PolicyKind::TwoQ,
        PolicyKind::Lfu,
        PolicyKind::Opt,
        PolicyKind::Slru { segments: 4 },
        PolicyKind::Size,
        PolicyKind::Mq,
        PolicyKind::Lfuda,
        PolicyKind::Gdsf,
        PolicyKind::LruK,
        PolicyKind::Random,
        PolicyKind::LruProb,
        PolicyKind::FlashProb,
        PolicyKind::Hyperbolic,
        PolicyKind::BeladySize,
        PolicyKind::Clock2QPlus,
        PolicyKind::Lirs,
        PolicyKind::WTinyLfu,
        PolicyKind::LeCaR,
        PolicyKind::Lhd,
        PolicyKind::ClockPro,
        PolicyKind::Cacheus,
    ];

    /// A cache of this policy holding `capacity` units.
    pub fn build(self, capacity: u64) -> Box<dyn Policy> {
        PolicySpec::from(self).build(capacity)
    }

    /// Whether the policy needs next-access times.
    pub fn needs_future(self) -> bool {
        matches!(self, PolicyKind::Opt | PolicyKind::BeladySize)
    }
}

impl fmt::Display for PolicyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicyKind::Lru => f.write_str("lru"),
            PolicyKind::Fifo => f.write_str("fifo"),
            PolicyKind::Clock { bits: 1 } => f.write_str("clock"),
            PolicyKind::Clock { bits } => write!(f, "clock{bits}"),
            PolicyKind::Sieve => f.write_str("sieve"),
            PolicyKind::S3Fifo => f.write_str("s3fifo"),
            PolicyKind::Arc => f.write_str("arc"),
            PolicyKind::TwoQ => f.write_str("2q"),
            PolicyKind::Lfu => f.write_str("lfu"),
            PolicyKind::Opt => f.write_str("opt"),
            PolicyKind::Slru { segments: 4 } => f.write_str("slru"),
            PolicyKind::Slru { segments } => write!(f, "slru{segments}"),
            PolicyKind::Size => f.write_str("size"),
            PolicyKind::Mq => f.write_str("mq"),
            PolicyKind::Lfuda => f.write_str("lfuda"),
            PolicyKind::Gdsf => f.write_str("gdsf"),
            PolicyKind::LruK => f.write_str("lruk"),
            PolicyKind::Random => f.write_str("random"),
            PolicyKind::LruProb => f.write_str("lruprob"),
            PolicyKind::FlashProb => f.write_str("flashprob"),
            PolicyKind::Hyperbolic => f.write_str("hyperbolic"),
            PolicyKind::BeladySize => f.write_str("beladysize"),
            PolicyKind::Clock2QPlus => f.write_str("clock2qplus"),
            PolicyKind::Lirs => f.write_str("lirs"),
            PolicyKind::WTinyLfu => f.write_str("wtinylfu"),
            PolicyKind::LeCaR => f.write_str("lecar"),
            PolicyKind::Lhd => f.write_str("lhd"),
            PolicyKind::ClockPro => f.write_str("clockpro"),
            PolicyKind::Cacheus => f.write_str("cacheus"),
        }
    }
}

/// A policy name `--policy` does not know.
#[derive(Debug, thiserror::Error)]
#[error(
    "unknown policy {0:?} (known: lru, fifo, clock, clock2, clock3, sieve, s3fifo, arc, 2q, lfu, opt, slru, slru2…slru16, size, mq, lfuda, gdsf, lruk, random, lruprob, flashprob, hyperbolic, beladysize, clock2qplus, lirs, wtinylfu, lecar, lhd, clockpro, cacheus)"
)]
pub struct UnknownPolicy(pub String);

impl FromStr for PolicyKind {
    type Err = UnknownPolicy;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "lru" => PolicyKind::Lru,
            "fifo" => PolicyKind::Fifo,
            "clock" | "clock1" | "second-chance" => PolicyKind::Clock { bits: 1 },
            "clock2" => PolicyKind::Clock { bits: 2 },
            "clock3" => PolicyKind::Clock { bits: 3 },
            "sieve" => PolicyKind::Sieve,
            "s3fifo" | "s3-fifo" => PolicyKind::S3Fifo,
            "arc" => PolicyKind::Arc,
            "2q" | "twoq" => PolicyKind::TwoQ,
            "lfu" => PolicyKind::Lfu,
            "opt" | "belady" | "min" => PolicyKind::Opt,
            "slru" => PolicyKind::Slru { segments: 4 },
            "size" => PolicyKind::Size,
            "mq" => PolicyKind::Mq,
            "lfuda" => PolicyKind::Lfuda,
            "gdsf" => PolicyKind::Gdsf,
            "lruk" | "lru-k" | "lru_k" => PolicyKind::LruK,
            "random" => PolicyKind::Random,
            "lruprob" | "lru-prob" | "lru_prob" => PolicyKind::LruProb,
            "flashprob" => PolicyKind::FlashProb,
            "hyperbolic" => PolicyKind::Hyperbolic,
            "beladysize" | "belady-size" => PolicyKind::BeladySize,
            "clock2qplus" | "clock2q+" => PolicyKind::Clock2QPlus,
            "lirs" => PolicyKind::Lirs,
            "lecar" => PolicyKind::LeCaR,
            "lhd" => PolicyKind::Lhd,
            "clockpro" | "clock-pro" => PolicyKind::ClockPro,
            "cacheus" => PolicyKind::Cacheus,
            "wtinylfu" | "w-tinylfu" | "tinylfu" => PolicyKind::WTinyLfu,
            l => match l.strip_prefix("slru").and_then(|n| n.parse::<u8>().ok()) {
                Some(n @ 1..=16) => PolicyKind::Slru { segments: n },
                _ => return Err(UnknownPolicy(s.to_string())),
            },
        })
    }
}

/// Capacity of a part of a cache given as a ratio, truncated the way
/// libCacheSim truncates it (`(int64_t)(size * ratio)`).
pub(crate) fn part(capacity: u64, ratio: f64) -> u64 {
    (capacity as f64 * ratio) as u64
}
