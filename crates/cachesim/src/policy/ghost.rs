//! Ghost queues: a FIFO of ids only, S3-FIFO's and 2Q's record of recently
//! evicted objects.

use crate::list::Queue;

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
