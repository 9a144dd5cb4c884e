//! SIEVE: a FIFO queue with a visited bit and a hand. A hit sets the bit;
//! new objects enter at the head; the hand walks from the tail towards the
//! head (wrapping to the tail), clearing bits, and evicts the first object
//! whose bit is clear, staying where it stopped.

use super::{Access, Policy};
use crate::list::{List, NIL, Table};

pub struct Sieve {
    cap: u64,
    t: Table,
    q: List,
    hand: u32,
}

impl Sieve {
    pub fn new(capacity: u64) -> Sieve {
        Sieve {
            cap: capacity,
            t: Table::default(),
            q: List::default(),
            hand: NIL,
        }
    }
}

impl Policy for Sieve {
    fn name(&self) -> &'static str {
        "sieve"
    }
    fn capacity(&self) -> u64 {
        self.cap
    }
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        if let Some(s) = self.t.find(a.id) {
            self.t[s].freq = 1;
            return true;
        }
        if a.charge > self.cap {
            return false;
        }
        while self.q.bytes + a.charge > self.cap {
            let mut v = if self.hand == NIL {
                self.q.tail
            } else {
                self.hand
            };
            while self.t[v].freq > 0 {
                self.t[v].freq -= 1;
                let p = List::prev(&self.t, v);
                v = if p == NIL { self.q.tail } else { p };
            }
            self.hand = List::prev(&self.t, v);
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
