//! LRU and FIFO, the single-queue policies: one ordered table, new objects
//! at the head, the tail evicted. Under LRU a hit moves the object to the
//! head; under FIFO it changes nothing. One type, so that the two cannot
//! drift apart.

use super::{Access, Policy};
use crate::ordered::{Ordered, Probe};

/// A single-queue policy; `HIT_MOVES` tells LRU from FIFO.
pub struct SingleQueue<const HIT_MOVES: bool>(Ordered);

/// LRU: a hit moves the object to the head; the tail is evicted.
pub type Lru = SingleQueue<true>;
/// FIFO: objects leave in the order they came; hits change nothing.
pub type Fifo = SingleQueue<false>;

impl<const HIT_MOVES: bool> SingleQueue<HIT_MOVES> {
    pub fn new(capacity: u64) -> Self {
        SingleQueue(Ordered::new(capacity))
    }
}

impl<const HIT_MOVES: bool> Policy for SingleQueue<HIT_MOVES> {
    fn name(&self) -> &'static str {
        if HIT_MOVES { "lru" } else { "fifo" }
    }
    fn capacity(&self) -> u64 {
        self.0.cap
    }
    #[inline]
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        let t = &mut self.0;
        match t.find(a.id) {
            Probe::Found(s) => {
                if HIT_MOVES {
                    t.move_to_head(s);
                }
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
