//! CLOCK (FIFO with reinsertion, second chance) with an n-bit counter: a
//! hit raises the counter up to 2^n − 1; new objects start at 0; eviction
//! looks at the tail, and an object with a non-zero counter has it lowered
//! and goes back to the head instead of leaving.

use super::{Access, Policy};
use crate::list::{List, Table};

pub struct Clock {
    cap: u64,
    max: u64,
    t: Table,
    q: List,
}

impl Clock {
    /// `bits`: counter width (libCacheSim's `n-bit-counter`, default 1).
    pub fn new(capacity: u64, bits: u8) -> Clock {
        Clock {
            cap: capacity,
            max: (1u64 << bits.clamp(1, 32)) - 1,
            t: Table::default(),
            q: List::default(),
        }
    }
}

impl Policy for Clock {
    fn name(&self) -> &'static str {
        "clock"
    }
    fn capacity(&self) -> u64 {
        self.cap
    }
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        if let Some(s) = self.t.find(a.id) {
            let n = &mut self.t[s];
            if n.freq < self.max {
                n.freq += 1;
            }
            return true;
        }
        if a.charge > self.cap {
            return false;
        }
        while self.q.bytes + a.charge > self.cap {
            let mut v = self.q.tail;
            while self.t[v].freq >= 1 {
                self.t[v].freq -= 1;
                self.q.move_to_head(&mut self.t, v);
                v = self.q.tail;
            }
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
