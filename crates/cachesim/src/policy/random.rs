//! Random eviction (libCacheSim 0.3.5's `Random.c`): the victim is a
//! cached object drawn as libCacheSim draws it ([`super::pool`]; its hash
//! table starts at 2^16 buckets).

use super::pool::Pool;
use super::{Access, Policy};

pub struct Random {
    cap: u64,
    pool: Pool<()>,
}

impl Random {
    pub fn new(capacity: u64, seed: u64) -> Random {
        Random {
            cap: capacity,
            pool: Pool::new(seed, 16),
        }
    }
}

impl Policy for Random {
    named!("random", cap);
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        if self.pool.contains(a.id) {
            return true;
        }
        if a.charge > self.cap {
            return false;
        }
        self.pool
            .make_room(self.cap - a.charge, evicted, |p| p.sample().map(|s| s.0));
        self.pool.insert(a.id, a.charge, ());
        false
    }
    held_in!(pool pool, pool.occupied);
}
