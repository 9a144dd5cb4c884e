//! Hyperbolic caching (Blankstein et al., ATC '17) as libCacheSim 0.3.5's
//! `Hyperbolic.c` defines it: each object's priority is its request count
//! since admission over the requests since admission (×10⁸); the victim
//! is the lowest of `n-sample` (64) objects drawn at random, the first
//! drawn among equals. Draws: as libCacheSim's ([`super::pool`]).

use super::pool::Pool;
use super::{Access, Policy};

/// Per object: when it entered, and its requests since.
struct Meta {
    entered: u64,
    freq: u64,
}

pub struct Hyperbolic {
    cap: u64,
    samples: usize,
    pool: Pool<Meta>,
    vtime: u64,
}

impl Hyperbolic {
    pub fn new(capacity: u64, samples: usize, seed: u64) -> Hyperbolic {
        Hyperbolic {
            cap: capacity,
            samples: samples.max(1),
            pool: Pool::new(seed, 16),
            vtime: 0,
        }
    }
}

impl Policy for Hyperbolic {
    named!("hyperbolic", cap);
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        self.vtime += 1;
        if let Some(m) = self.pool.meta_mut(a.id) {
            m.freq += 1;
            return true;
        }
        if a.charge > self.cap {
            return false;
        }
        let (now, n) = (self.vtime, self.samples);
        self.pool.make_room(self.cap - a.charge, evicted, |p| {
            p.lowest_of(n, |_, m| 1.0e8 * m.freq as f64 / (now - m.entered) as f64)
        });
        let meta = Meta {
            entered: self.vtime,
            freq: 1,
        };
        self.pool.insert(a.id, a.charge, meta);
        false
    }
    held_in!(pool pool, pool.occupied);
}
