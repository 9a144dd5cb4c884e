//! LRU: a hit moves the object to the head; the tail is evicted.

use super::{Access, Policy};
use crate::ordered::{Ordered, Probe};

pub struct Lru(Ordered);

impl Lru {
    pub fn new(capacity: u64) -> Lru {
        Lru(Ordered::new(capacity))
    }
}

impl Policy for Lru {
    fn name(&self) -> &'static str {
        "lru"
    }
    fn capacity(&self) -> u64 {
        self.0.cap
    }
    #[inline]
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        let t = &mut self.0;
        match t.find(a.id) {
            Probe::Found(s) => {
                t.move_to_head(s);
                t.mark(s, a.write);
                true
            }
            Probe::Vacant => {
                t.admit(a.id, a.charge, a.write, evicted);
                false
            }
        }
    }
    fn contains(&self, id: u64) -> bool {
        self.0.contains(id)
    }
    fn occupied(&self) -> u64 {
        self.0.occupied()
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn write_backs(&self) -> Option<u64> {
        Some(self.0.write_backs)
    }
    fn dirty_len(&self) -> Option<usize> {
        Some(self.0.dirty_len())
    }
}
