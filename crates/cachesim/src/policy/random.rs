//! Random eviction (libCacheSim 0.3.5's `Random.c`): the victim is a
//! cached object drawn uniformly with libCacheSim's generator. libCacheSim
//! draws a bucket of its hash table, then an object in the bucket's chain
//! (uniform but for collisions); the draws here pick from the cached ids
//! directly, so single runs differ and means over seeds agree
//! (docs/cachesim.md).

use rustc_hash::FxHashMap;

use super::admission::Lehmer64;
use super::{Access, Policy};

pub struct Random {
    cap: u64,
    occupied: u64,
    /// Cached ids, and each id's place in it with its charge.
    ids: Vec<u64>,
    map: FxHashMap<u64, (usize, u64)>,
    rng: Lehmer64,
}

impl Random {
    pub fn new(capacity: u64, seed: u64) -> Random {
        Random {
            cap: capacity,
            occupied: 0,
            ids: Vec::new(),
            map: FxHashMap::default(),
            rng: Lehmer64::new(seed),
        }
    }
}

impl Policy for Random {
    fn name(&self) -> &'static str {
        "random"
    }
    fn capacity(&self) -> u64 {
        self.cap
    }
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        if self.map.contains_key(&a.id) {
            return true;
        }
        if a.charge > self.cap {
            return false;
        }
        while self.occupied + a.charge > self.cap && !self.ids.is_empty() {
            let i = (self.rng.next_u64() % self.ids.len() as u64) as usize;
            let id = self.ids.swap_remove(i);
            if let Some(&moved) = self.ids.get(i) {
                self.map.get_mut(&moved).expect("cached").0 = i;
            }
            let (_, c) = self.map.remove(&id).expect("cached");
            self.occupied -= c;
            evicted.push(id);
        }
        self.map.insert(a.id, (self.ids.len(), a.charge));
        self.ids.push(a.id);
        self.occupied += a.charge;
        false
    }
    fn contains(&self, id: u64) -> bool {
        self.map.contains_key(&id)
    }
    fn occupied(&self) -> u64 {
        self.occupied
    }
    fn len(&self) -> usize {
        self.ids.len()
    }
}
