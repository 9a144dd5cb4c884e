//! LRU: a hit moves the object to the head; the tail is evicted.

use super::{Access, Policy};
use crate::list::{List, Table};

pub struct Lru {
    cap: u64,
    t: Table,
    q: List,
}

impl Lru {
    pub fn new(capacity: u64) -> Lru {
        Lru {
            cap: capacity,
            t: Table::default(),
            q: List::default(),
        }
    }
}

impl Policy for Lru {
    fn name(&self) -> &'static str {
        "lru"
    }
    fn capacity(&self) -> u64 {
        self.cap
    }
    #[inline]
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        if let Some(s) = self.t.find(a.id) {
            self.q.move_to_head(&mut self.t, s);
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
