//! FIFO: objects leave in the order they came; hits change nothing.

use super::{Access, Policy};
use crate::list::Queue;
use crate::ordered::{Ordered, Probe};

pub struct Fifo(Ordered);

impl Fifo {
    pub fn new(capacity: u64) -> Fifo {
        Fifo(Ordered::new(capacity))
    }
}

impl Policy for Fifo {
    fn name(&self) -> &'static str {
        "fifo"
    }
    fn capacity(&self) -> u64 {
        self.0.cap
    }
    #[inline]
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        let t = &mut self.0;
        match t.find(a.id) {
            Probe::Found(s) => {
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

/// A FIFO of ids only (a ghost queue): S3-FIFO's and 2Q's record of
/// recently evicted objects, sized in the cache's unit like libCacheSim's.
pub(crate) struct Ghost(Queue);

impl Ghost {
    pub fn new(capacity: u64) -> Ghost {
        Ghost(Queue::new(capacity))
    }

    /// Forgets `id`; true if it was there.
    pub fn remove(&mut self, id: u64) -> bool {
        match self.0.find(id) {
            Some(s) => {
                self.0.remove(s);
                true
            }
            None => false,
        }
    }

    /// Records `id` as a FIFO cache would admit it (ghosts evict silently).
    pub fn add(&mut self, id: u64, charge: u64) {
        if self.0.find(id).is_none() {
            let mut forgotten = Vec::new();
            self.0
                .admit(id, charge, false, &mut forgotten, |q| q.q.tail);
        }
    }
}
