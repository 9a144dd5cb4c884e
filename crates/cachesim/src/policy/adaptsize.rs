//! AdaptSize's admission (Berger, Sitaraman and Harchol-Balter, NSDI '17)
//! as libCacheSim 0.3.5's `admission/adaptsize/` defines it: admit with
//! probability e^(−size/c), where c is chosen every `reconf-interval`
//! requests (once the statistics cover three times the cache) by a
//! golden-section search over log2 c of the hit rate its Markov model
//! predicts from exponentially decayed request counts (decay 0.3).
//!
//! One thing is not followed: libCacheSim walks its statistics in the
//! order of a `std::unordered_map`, which sets the order of its
//! floating-point sums; here they are summed in order of object id. The
//! sums can differ in their last bits, and c with them, but on the Twitter
//! fixture every golden (objects and bytes, two settings) is libCacheSim's
//! miss count exactly.

use std::collections::BTreeMap;

use super::admission::Lehmer64;

const EWMA_DECAY: f64 = 0.3;
const GSS_R: f64 = 0.61803399;
const TOL: f64 = 3.0e-8;
const MODULE: u64 = 10_000_000;

/// An object's decayed request count and size.
#[derive(Clone, Copy, Default)]
struct Info {
    seen: f64,
    size: i64,
}

pub struct AdaptSize {
    cache_size: u64,
    max_iteration: u64,
    reconf_interval: u64,
    next_reconf: u64,
    stat_size: u64,
    c_param: f64,
    interval: BTreeMap<u64, Info>,
    longterm: BTreeMap<u64, Info>,
    sizes: Vec<f64>,
    seen: Vec<f64>,
    probs: Vec<f64>,
    rng: Lehmer64,
}

fn o_p1(t: f64, l: f64, p: f64) -> f64 {
    l * p * t * (840.0 + 60.0 * l * t + 20.0 * l * l * t * t + l * l * l * t * t * t)
}

fn o_p2(t: f64, l: f64, p: f64) -> f64 {
    840.0
        + 120.0 * l * (-3.0 + 7.0 * p) * t
        + 60.0 * l * l * (1.0 + p) * t * t
        + 4.0 * l * l * l * (-1.0 + 5.0 * p) * t * t * t
        + l * l * l * l * p * t * t * t * t
}

impl AdaptSize {
    pub fn new(max_iteration: u64, reconf_interval: u64, rng: Lehmer64) -> AdaptSize {
        AdaptSize {
            cache_size: 0,
            max_iteration,
            reconf_interval,
            next_reconf: reconf_interval,
            stat_size: 0,
            c_param: (1u64 << 15) as f64,
            interval: BTreeMap::new(),
            longterm: BTreeMap::new(),
            sizes: Vec::new(),
            seen: Vec::new(),
            probs: Vec::new(),
            rng,
        }
    }

    pub fn admit(&mut self, size: u64) -> bool {
        let prob = (-(size as i64) as f64 / self.c_param).exp();
        let roll = (self.rng.next_u64() % MODULE) as f64 / MODULE as f64;
        roll < prob
    }

    /// Every request (`updateStats`).
    pub fn update(&mut self, id: u64, size: u64, cache_size: u64) {
        self.cache_size = cache_size;
        self.reconfigure();
        let size = size as i64;
        let in_interval = self.interval.get(&id).copied();
        let in_longterm = self.longterm.get(&id).copied();
        if in_interval.is_none() && in_longterm.is_none() {
            self.stat_size = self.stat_size.wrapping_add(size as u64);
        } else {
            for old in [in_interval, in_longterm].into_iter().flatten() {
                if old.size != size {
                    self.stat_size = self
                        .stat_size
                        .wrapping_sub(old.size as u64)
                        .wrapping_add(size as u64);
                }
            }
        }
        let e = self.interval.entry(id).or_default();
        e.seen += 1.0;
        e.size = size;
    }

    fn reconfigure(&mut self) {
        self.next_reconf = self.next_reconf.wrapping_sub(1);
        if self.next_reconf > 0 {
            return;
        }
        if self.stat_size <= self.cache_size.wrapping_mul(3) {
            self.next_reconf = self.next_reconf.wrapping_add(1000);
            return;
        }
        self.next_reconf = self.reconf_interval;
        for v in self.longterm.values_mut() {
            v.seen *= EWMA_DECAY;
        }
        for (id, info) in std::mem::take(&mut self.interval) {
            match self.longterm.get_mut(&id) {
                None => {
                    self.longterm.insert(id, info);
                }
                Some(l) => {
                    l.seen += (1.0 - EWMA_DECAY) * info.seen;
                    l.size = info.size;
                }
            }
        }
        self.seen.clear();
        self.sizes.clear();
        let mut stat_size = self.stat_size;
        self.longterm.retain(|_, v| {
            if v.seen < 0.1 {
                stat_size = stat_size.wrapping_sub(v.size as u64);
                return false;
            }
            true
        });
        self.stat_size = stat_size;
        for v in self.longterm.values() {
            self.seen.push(v.seen);
            self.sizes.push(v.size as f64);
        }
        let gss_v = 1.0 - GSS_R;
        let mut x0 = 0.0;
        let mut x1 = (self.cache_size as f64).log2();
        let mut x2;
        let mut x3 = x1;
        let mut best = 0.0;
        let mut i = 2;
        while (i as f64) < x3 {
            let h = self.model_hit_rate(i as f64);
            if h > best {
                best = h;
                x1 = i as f64;
            }
            i += 4;
        }
        let mut h1 = best;
        let mut h2;
        if x3 - x1 > x1 - x0 {
            x2 = x1 + gss_v * (x3 - x1);
            h2 = self.model_hit_rate(x2);
        } else {
            x2 = x1;
            h2 = h1;
            x1 = x0 + gss_v * (x1 - x0);
            h1 = self.model_hit_rate(x1);
        }
        let mut iteration = 0;
        while iteration < self.max_iteration && (x3 - x0).abs() > TOL * (x1.abs() + x2.abs()) {
            iteration += 1;
            if h1.is_nan() || h2.is_nan() {
                break;
            }
            if h2 > h1 {
                x0 = x1;
                x1 = x2;
                x2 = GSS_R * x1 + gss_v * x3;
                h1 = h2;
                h2 = self.model_hit_rate(x2);
            } else {
                x3 = x2;
                x2 = x1;
                x1 = GSS_R * x2 + gss_v * x0;
                h2 = h1;
                h1 = self.model_hit_rate(x1);
            }
        }
        if h1.is_nan() || h2.is_nan() {
            // libCacheSim warns and keeps c.
        } else if h1 > h2 {
            self.c_param = 2f64.powf(x1);
        } else {
            self.c_param = 2f64.powf(x2);
        }
    }

    fn model_hit_rate(&mut self, log2c: f64) -> f64 {
        let c = 2f64.powf(log2c);
        let mut sum = 0.0;
        for (s, z) in self.seen.iter().zip(&self.sizes) {
            sum += s * (-z / c).exp() * z;
        }
        if sum <= 0.0 {
            return 0.0;
        }
        let mut t = self.cache_size as f64 / sum;
        self.probs.clear();
        for z in &self.sizes {
            self.probs.push((-z / c).exp());
        }
        for _ in 0..20 {
            if t > 1e70 {
                break;
            }
            let mut the_c = 0.0;
            for ((s, z), p) in self.seen.iter().zip(&self.sizes).zip(&self.probs) {
                let req_t = s * t;
                if req_t > 150.0 {
                    the_c += z;
                } else {
                    let exp_term = req_t.exp() - 1.0;
                    let adm = p * exp_term;
                    the_c += z * (adm / (1.0 + adm));
                }
            }
            t = self.cache_size as f64 * t / the_c;
        }
        let mut weighted = 0.0;
        for ((s, _), p) in self.seen.iter().zip(&self.sizes).zip(&self.probs) {
            let a = o_p1(t, *s, *p);
            let b = o_p2(t, *s, *p);
            let mut r = if a != 0.0 && b == 0.0 { 0.0 } else { a / b };
            r = r.clamp(0.0, 1.0);
            if r.is_nan() {
                r = 0.0;
            }
            weighted += s * r;
        }
        weighted
    }
}
