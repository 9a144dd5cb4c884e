//! LFU as libCacheSim 0.3.5 defines it: objects are grouped by request
//! count (a new object has count 1; counts are not kept after eviction);
//! the victim is, among the objects of the lowest count, the one that
//! reached that count first.

use std::collections::BTreeMap;

use super::{Access, Policy};
use crate::list::{List, Table};

pub struct Lfu {
    cap: u64,
    t: Table,
    /// Non-empty buckets by count; each in the order objects reached it
    /// (head first).
    buckets: BTreeMap<u64, List>,
    bytes: u64,
}

impl Lfu {
    pub fn new(capacity: u64) -> Lfu {
        Lfu {
            cap: capacity,
            t: Table::default(),
            buckets: BTreeMap::new(),
            bytes: 0,
        }
    }

    fn leave(&mut self, freq: u64, s: u32) {
        let b = self
            .buckets
            .get_mut(&freq)
            .expect("bucket of a cached object");
        b.unlink(&mut self.t, s);
        if b.is_empty() {
            self.buckets.remove(&freq);
        }
    }

    fn enter(&mut self, freq: u64, s: u32) {
        self.t[s].freq = freq;
        self.buckets
            .entry(freq)
            .or_default()
            .push_tail(&mut self.t, s);
    }
}

impl Policy for Lfu {
    named!("lfu", cap);
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        if let Some(s) = self.t.find(a.id) {
            let f = self.t[s].freq;
            self.leave(f, s);
            self.enter(f + 1, s);
            return true;
        }
        if a.charge > self.cap {
            return false;
        }
        while self.bytes + a.charge > self.cap {
            let (&f, b) = self
                .buckets
                .first_key_value()
                .expect("a full cache has objects");
            let v = b.head;
            self.leave(f, v);
            self.bytes -= self.t[v].size;
            evicted.push(self.t[v].id);
            self.t.remove(v);
        }
        let s = self.t.insert(a.id, a.charge, 0);
        self.bytes += a.charge;
        self.enter(1, s);
        false
    }
    held_in!(table t, bytes);
}
