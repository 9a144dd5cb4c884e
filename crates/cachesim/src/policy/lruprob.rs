//! LRU-Prob as libCacheSim 0.3.5's `LRUProb.c` defines it: an LRU queue
//! where a hit moves the object to the head only with probability `prob`
//! (default 0.5) — when a draw of libCacheSim's generator modulo
//! ⌊1 ÷ prob⌋ is 0, prob read as a 32-bit float as libCacheSim reads it.
//! New objects enter at the head; the tail is evicted.

use super::admission::Lehmer64;
use super::{Access, Policy};
use crate::list::Queue;

pub struct LruProb {
    q: Queue,
    threshold: u64,
    rng: Lehmer64,
}

impl LruProb {
    pub fn new(capacity: u64, prob: f64, seed: u64) -> LruProb {
        let threshold = ((1.0 / (prob as f32 as f64)) as u64).max(1);
        LruProb {
            q: Queue::new(capacity),
            threshold,
            rng: Lehmer64::new(seed),
        }
    }
}

impl Policy for LruProb {
    fn name(&self) -> &'static str {
        "lruprob"
    }
    fn capacity(&self) -> u64 {
        self.q.cap
    }
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        if let Some(s) = self.q.find(a.id) {
            if self.rng.next_u64().is_multiple_of(self.threshold) {
                self.q.q.move_to_head(&mut self.q.t, s);
            }
            return true;
        }
        self.q.admit(a.id, a.charge, false, evicted, |q| q.q.tail);
        false
    }
    fn contains(&self, id: u64) -> bool {
        self.q.find(id).is_some()
    }
    fn occupied(&self) -> u64 {
        self.q.occupied()
    }
    fn len(&self) -> usize {
        self.q.len()
    }
}
