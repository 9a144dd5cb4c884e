//! Admission filters, as libCacheSim 0.3.5's `cache/admission/` defines
//! them, in front of any policy (`--policy lru+bloom`): a miss brings its
//! object in only if the filter admits it; hits never ask.
//!
//! - `bloom`: admits an object on its second miss and later (libCacheSim's
//!   "bloomfilter" is an exact table of the ids seen, and so is this one).
//! - `prob:prob=P`: admits with probability P (default 0.5).
//! - `size:size=S`: admits objects smaller than S (in the cache's unit:
//!   by object count every object is 1, as libCacheSim's
//!   `ignore_obj_size` makes it).
//! - `sizeprob:exponent=E`: admits with probability e^(−E·size) (default
//!   E = 1e-6).
//! - `adaptsize:max-iteration=15:reconf-interval=30000`: AdaptSize
//!   (Berger et al., NSDI '17) as libCacheSim's `admission/adaptsize/`:
//!   admits with probability e^(−size/c), c tuned every interval by its
//!   Markov model of the hit rate and a golden-section search over log2 c
//!   ([`super::adaptsize`]).
//!
//! The random ones draw from libCacheSim's generator (Lehmer's, 128-bit
//! state multiplied by 0xda942042e4dd58b5, the high 64 bits drawn) seeded
//! as a fresh libCacheSim thread seeds it (0xdeadbeef), so a cache's first
//! run in a process draws what libCacheSim's does; `seed=N` changes it.
//! A filter asks nothing of the policy: a refused miss leaves the policy
//! untouched (libCacheSim asks after its lookup, which for the policies
//! here changes nothing on a miss either; see docs/cachesim.md).

use std::fmt;
use std::str::FromStr;

use rustc_hash::FxHashMap;

use super::spec::{ParamDef, SEED, SpecError, param, parse_params};
use super::{Access, Policy};

/// libCacheSim's generator: `next_rand()` of `utils/include/mymath.h`.
#[derive(Clone, Debug)]
pub struct Lehmer64(u128);

impl Lehmer64 {
    /// The state a fresh libCacheSim thread starts from.
    pub const LIBCACHESIM_SEED: u64 = 0xdead_beef;

    pub fn new(seed: u64) -> Lehmer64 {
        Lehmer64(seed as u128)
    }
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(0xda94_2042_e4dd_58b5);
        (self.0 >> 64) as u64
    }
}

/// Which filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Bloom,
    Prob,
    Size,
    SizeProb,
    AdaptSize,
}

const KINDS: [(&str, Kind, &[ParamDef]); 5] = [
    ("bloom", Kind::Bloom, &[]),
    (
        "prob",
        Kind::Prob,
        &[param("prob", &["p"], 0.5, 0.0, 1.0, false), SEED],
    ),
    (
        "size",
        Kind::Size,
        &[param("size", &[], 1.8e19, 0.0, 1.8e19, true)],
    ),
    (
        "sizeprob",
        Kind::SizeProb,
        &[param("exponent", &[], 1e-6, 0.0, 1e9, false), SEED],
    ),
    (
        "adaptsize",
        Kind::AdaptSize,
        &[
            param("max-iteration", &[], 15.0, 0.0, 1e6, true),
            param("reconf-interval", &[], 30000.0, 1.0, 1e15, true),
            SEED,
        ],
    ),
];

/// A filter as `--policy` names it after the `+`.
#[derive(Clone, Debug, PartialEq)]
pub struct AdmissionSpec {
    kind: Kind,
    name: &'static str,
    params: Vec<(&'static str, f64)>,
}

impl AdmissionSpec {
    fn param(&self, name: &str) -> f64 {
        self.params
            .iter()
            .find(|(n, _)| *n == name)
            .map(|p| p.1)
            .unwrap_or_else(|| {
                let defs = KINDS
                    .iter()
                    .find(|k| k.1 == self.kind)
                    .map_or(&[][..], |k| k.2);
                super::spec::default_of(defs, name)
            })
    }

    /// `policy` behind this filter.
    pub fn wrap(&self, policy: Box<dyn Policy>) -> Box<dyn Policy> {
        let seed = || Lehmer64::new(self.param("seed") as u64);
        let filter = match self.kind {
            Kind::Bloom => Filter::Seen(FxHashMap::default()),
            Kind::Prob => Filter::Prob {
                below: (self.param("prob") * MODULE as f64) as u64,
                rng: seed(),
            },
            Kind::Size => Filter::Size(self.param("size") as u64),
            Kind::SizeProb => Filter::SizeProb {
                exponent: self.param("exponent"),
                rng: seed(),
            },
            Kind::AdaptSize => Filter::AdaptSize(Box::new(super::adaptsize::AdaptSize::new(
                self.param("max-iteration") as u64,
                self.param("reconf-interval") as u64,
                seed(),
            ))),
        };
        Box::new(Admitted {
            inner: policy,
            filter,
        })
    }
}

impl fmt::Display for AdmissionSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)?;
        for (n, v) in &self.params {
            write!(f, ":{n}={v}")?;
        }
        Ok(())
    }
}

impl FromStr for AdmissionSpec {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (name, rest) = s.split_once(':').unwrap_or((s, ""));
        let name = name.trim().to_ascii_lowercase();
        let name = match name.as_str() {
            "bloomfilter" => "bloom",
            "probabilistic" => "prob",
            "sizeprobabilistic" | "size-probabilistic" => "sizeprob",
            n => n,
        };
        let Some(&(name, kind, defs)) = KINDS.iter().find(|k| k.0 == name) else {
            return Err(SpecError::Admission(format!(
                "{s:?} is unknown (known: bloom, prob, size, sizeprob, adaptsize)"
            )));
        };
        let mut params = parse_params(name, rest, defs)?;
        params.retain(|&(n, v)| super::spec::default_of(defs, n) != v);
        Ok(AdmissionSpec { kind, name, params })
    }
}

/// libCacheSim draws `next_rand() % 10_000_000` against the probability.
const MODULE: u64 = 10_000_000;

enum Filter {
    /// Times each id has missed (admitted from the second on).
    Seen(FxHashMap<u64, u32>),
    Prob {
        below: u64,
        rng: Lehmer64,
    },
    Size(u64),
    SizeProb {
        exponent: f64,
        rng: Lehmer64,
    },
    AdaptSize(Box<super::adaptsize::AdaptSize>),
}

impl Filter {
    fn admit(&mut self, a: &Access) -> bool {
        match self {
            Filter::Seen(seen) => {
                let n = seen.entry(a.id).or_insert(0);
                *n = n.saturating_add(1);
                *n > 1
            }
            Filter::Prob { below, rng } => rng.next_u64() % MODULE < *below,
            Filter::Size(limit) => a.charge < *limit,
            Filter::SizeProb { exponent, rng } => {
                let p = (-*exponent * a.charge as f64).exp();
                ((rng.next_u64() % MODULE) as f64 / MODULE as f64) < p
            }
            Filter::AdaptSize(f) => f.admit(a.charge),
        }
    }

    /// Sees every request, hit or miss (libCacheSim's `update` hook).
    fn update(&mut self, a: &Access, capacity: u64) {
        if let Filter::AdaptSize(f) = self {
            f.update(a.id, a.charge, capacity);
        }
    }
}

/// A policy behind a filter.
struct Admitted {
    inner: Box<dyn Policy>,
    filter: Filter,
}

impl Policy for Admitted {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn capacity(&self) -> u64 {
        self.inner.capacity()
    }
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        self.filter.update(&a, self.inner.capacity());
        if self.inner.contains(a.id) {
            return self.inner.get(a, evicted);
        }
        // libCacheSim asks only about objects that fit.
        if a.charge > self.inner.capacity() || !self.filter.admit(&a) {
            return false;
        }
        self.inner.get(a, evicted)
    }
    fn contains(&self, id: u64) -> bool {
        self.inner.contains(id)
    }
    fn occupied(&self) -> u64 {
        self.inner.occupied()
    }
    fn len(&self) -> usize {
        self.inner.len()
    }
    fn write_backs(&self) -> Option<u64> {
        self.inner.write_backs()
    }
    fn dirty_len(&self) -> Option<usize> {
        self.inner.dirty_len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lehmer_draws_as_libcachesim() {
        // By hand: state 0xdeadbeef × 0xda942042e4dd58b5, high 64 bits.
        let mut r = Lehmer64::new(Lehmer64::LIBCACHESIM_SEED);
        let want = ((0xdead_beefu128 * 0xda94_2042_e4dd_58b5u128) >> 64) as u64;
        assert_eq!(r.next_u64(), want);
    }

    #[test]
    fn filters_parse_and_print() {
        let a: AdmissionSpec = "prob:prob=0.25".parse().unwrap();
        assert_eq!(a.to_string(), "prob:prob=0.25");
        let c: AdmissionSpec = "adaptsize:reconf-interval=1000".parse().unwrap();
        assert_eq!(c.to_string(), "adaptsize:reconf-interval=1000");
        let b: AdmissionSpec = "bloomfilter".parse().unwrap();
        assert_eq!(b.to_string(), "bloom");
        assert!("bloom:x=1".parse::<AdmissionSpec>().is_err());
        assert!("nope".parse::<AdmissionSpec>().is_err());
    }
}
