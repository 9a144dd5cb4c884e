//! FIFO: objects leave in the order they came; hits change nothing.

use super::{Access, Policy};
use crate::list::{List, Table};

pub struct Fifo {
    cap: u64,
    t: Table,
    q: List,
}

impl Fifo {
    pub fn new(capacity: u64) -> Fifo {
        Fifo {
            cap: capacity,
            t: Table::default(),
            q: List::default(),
        }
    }
}

impl Policy for Fifo {
    fn name(&self) -> &'static str {
        "fifo"
    }
    fn capacity(&self) -> u64 {
        self.cap
    }
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        if self.t.find(a.id).is_some() {
            return true;
        }
        if a.charge > self.cap {
            return false;
        }
        while self.q.bytes + a.charge > self.cap {
            let v = self.q.tail;
            self.q.unlink(&mut self.t, v);
            evicted.push(self.t[v].id);
            self.t.remove(v);
        }
        let s = self.t.insert(a.id, a.charge, 0);
        self.q.push_head(&mut self.t, s);
        false
    }
    fn contains(&self, id: u64) -> bool {
        self.t.find(id).is_some()
    }
    fn occupied(&self) -> u64 {
        self.q.bytes
    }
    fn len(&self) -> usize {
        self.q.len
    }
}

/// A FIFO of ids only (a ghost queue): S3-FIFO's and 2Q's record of
/// recently evicted objects, sized in the cache's unit like libCacheSim's.
pub(crate) struct Ghost {
    cap: u64,
    t: Table,
    q: List,
}

impl Ghost {
    pub fn new(capacity: u64) -> Ghost {
        Ghost {
            cap: capacity,
            t: Table::default(),
            q: List::default(),
        }
    }

    /// Forgets `id`; true if it was there.
    pub fn remove(&mut self, id: u64) -> bool {
        match self.t.find(id) {
            Some(s) => {
                self.q.unlink(&mut self.t, s);
                self.t.remove(s);
                true
            }
            None => false,
        }
    }

    /// Records `id` as a FIFO cache would admit it.
    pub fn add(&mut self, id: u64, charge: u64) {
        if self.t.find(id).is_some() || charge > self.cap {
            return;
        }
        while self.q.bytes + charge > self.cap {
            let v = self.q.tail;
            self.q.unlink(&mut self.t, v);
            self.t.remove(v);
        }
        let s = self.t.insert(id, charge, 0);
        self.q.push_head(&mut self.t, s);
    }
}
