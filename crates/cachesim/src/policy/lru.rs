//! LRU: a hit moves the object to the head; the tail is evicted.

use super::{Access, Policy};
use crate::list::Queue;

pub struct Lru(Queue);

impl Lru {
    pub fn new(capacity: u64) -> Lru {
        Lru(Queue::new(capacity))
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
        let q = &mut self.0;
        if let Some(s) = q.find(a.id) {
            q.q.move_to_head(&mut q.t, s);
            q.t[s].dirty |= a.write;
            return true;
        }
        q.admit(a.id, a.charge, a.write, evicted, |q| q.q.tail);
        false
    }
    fn contains(&self, id: u64) -> bool {
        self.0.find(id).is_some()
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
