//! Synthetic request traces for cache studies: objects drawn from a Zipf
//! distribution (libcachesim's `create_zipf_requests`, Caffeine's
//! `ZipfianGenerator`), uniformly, or from a hot set (Caffeine's
//! `HotspotGenerator`), one request per draw at a steady rate.

use tramp_core::rng::SplitMix64;

/// How objects are drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Distribution {
    /// Object of rank r (1-based) with probability ∝ r^-alpha.
    Zipf { alpha: f64 },
    /// Every object alike.
    Uniform,
    /// `share` of the requests to the first `hot` fraction of the objects,
    /// uniformly within the hot and the cold sets.
    Hotspot { hot: f64, share: f64 },
}

/// What the generator makes.
#[derive(Clone, Copy, Debug)]
pub struct Workload {
    pub distribution: Distribution,
    pub objects: u64,
    pub requests: u64,
    pub seed: u64,
    /// Requests per time unit (the request at i is at ⌊i / rate⌋).
    pub rate: u64,
}

/// A workload that cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Invalid(String),
}

/// The request stream: (time, object id) per request, object ids 1..=n
/// by rank (id 1 the most popular of a Zipf workload).
pub struct Requests {
    w: Workload,
    rng: SplitMix64,
    /// Zipf: the cumulative probability of ranks 1..=k, for k = 1..=n.
    cdf: Vec<f64>,
    i: u64,
}

impl Workload {
    /// The stream, every value checked (memory: 8 bytes an object for a
    /// Zipf workload's table, none else).
    pub fn requests(self) -> Result<Requests, Error> {
        let bad = |why: String| Err(Error::Invalid(why));
        if self.objects == 0 {
            return bad("--objects 0: a workload needs an object".into());
        }
        if self.rate == 0 {
            return bad("--rate 0: at least one request per time unit".into());
        }
        let cdf = match self.distribution {
            Distribution::Zipf { alpha } => {
                if !(alpha.is_finite() && alpha >= 0.0) {
                    return bad(format!("--alpha {alpha}: a Zipf exponent is 0 or more"));
                }
                if self.objects > 1 << 28 {
                    return bad(format!(
                        "--objects {}: a Zipf table of more than 2^28 objects",
                        self.objects
                    ));
                }
                let mut acc = 0.0;
                let mut cdf: Vec<f64> = (1..=self.objects)
                    .map(|r| {
                        acc += (r as f64).powf(-alpha);
                        acc
                    })
                    .collect();
                for c in &mut cdf {
                    *c /= acc;
                }
                cdf
            }
            Distribution::Hotspot { hot, share } => {
                if !(0.0 < hot && hot < 1.0 && (0.0..=1.0).contains(&share)) {
                    return bad(format!(
                        "hotspot {hot}/{share}: the hot fraction is in (0, 1), its share in [0, 1]"
                    ));
                }
                Vec::new()
            }
            Distribution::Uniform => Vec::new(),
        };
        Ok(Requests {
            rng: SplitMix64::new(self.seed),
            w: self,
            cdf,
            i: 0,
        })
    }
}

impl Requests {
    /// A uniform draw in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

impl Iterator for Requests {
    type Item = (u64, u64);

    fn next(&mut self) -> Option<(u64, u64)> {
        if self.i == self.w.requests {
            return None;
        }
        let n = self.w.objects;
        let id = match self.w.distribution {
            Distribution::Zipf { .. } => {
                let u = self.unit();
                (self.cdf.partition_point(|&c| c <= u) as u64).min(n - 1) + 1
            }
            Distribution::Uniform => self.rng.below(n) + 1,
            Distribution::Hotspot { hot, share } => {
                let hot_n = ((n as f64 * hot).round() as u64).clamp(1, n);
                if self.unit() < share || hot_n == n {
                    self.rng.below(hot_n) + 1
                } else {
                    hot_n + self.rng.below(n - hot_n) + 1
                }
            }
        };
        let t = self.i / self.w.rate;
        self.i += 1;
        Some((t, id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(d: Distribution, n: u64, reqs: u64) -> Vec<u64> {
        let w = Workload {
            distribution: d,
            objects: n,
            requests: reqs,
            seed: 7,
            rate: 1000,
        };
        let mut c = vec![0u64; n as usize + 1];
        for (_, id) in w.requests().unwrap() {
            c[id as usize] += 1;
        }
        c
    }

    #[test]
    fn each_distribution_draws_what_it_says() {
        // Zipf 1.0 over 100 objects: rank 1 has 1/H(100) = 19.3 % of them.
        let z = counts(Distribution::Zipf { alpha: 1.0 }, 100, 200_000);
        let share = z[1] as f64 / 200_000.0;
        assert!((share - 0.1928).abs() < 0.005, "{share}");
        assert!(z[1] > z[2] && z[2] > z[10] && z[10] > z[100]);
        // Uniform: every object near 1/100.
        let u = counts(Distribution::Uniform, 100, 200_000);
        assert!(u[1..].iter().all(|&n| (1700..2300).contains(&n)), "{u:?}");
        // Hotspot: 80 % of the requests to the first 20 objects.
        let h = counts(
            Distribution::Hotspot {
                hot: 0.2,
                share: 0.8,
            },
            100,
            200_000,
        );
        let hot: u64 = h[1..=20].iter().sum();
        assert!((hot as f64 / 200_000.0 - 0.8).abs() < 0.01, "{hot}");
    }

    #[test]
    fn times_step_at_the_rate_and_the_seed_repeats() {
        let w = Workload {
            distribution: Distribution::Uniform,
            objects: 10,
            requests: 2500,
            seed: 3,
            rate: 1000,
        };
        let a: Vec<(u64, u64)> = w.requests().unwrap().collect();
        assert_eq!(a.len(), 2500);
        assert_eq!((a[999].0, a[1000].0, a[2499].0), (0, 1, 2));
        assert_eq!(a, w.requests().unwrap().collect::<Vec<_>>());
        let bad = Workload { objects: 0, ..w };
        assert!(bad.requests().is_err());
    }
}
