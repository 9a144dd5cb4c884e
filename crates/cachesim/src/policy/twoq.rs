//! 2Q as libCacheSim 0.3.5 defines it: A1in, a FIFO of 25% of the capacity
//! where new objects enter; A1out, a ghost FIFO of ids of 50%; Am, an LRU of
//! the rest. A hit in A1in changes nothing; a hit in Am moves the object to
//! Am's head. A miss whose id is in A1out goes to Am (evicting from Am by
//! Am's own capacity); other misses go to A1in. To make room, A1in's tail
//! moves to A1out while A1in is over its share, else Am's tail is evicted.

use super::{Access, Policy, part};
use crate::list::{List, Table};
use crate::policy::ghost::Ghost;

const IN: u8 = 0;
const AM: u8 = 1;

pub struct TwoQ {
    cap: u64,
    in_cap: u64,
    am_cap: u64,
    t: Table,
    a1in: List,
    am: List,
    a1out: Ghost,
}

impl TwoQ {
    pub fn new(capacity: u64) -> TwoQ {
        TwoQ::with_ratios(capacity, 0.25, 0.5)
    }

    /// libCacheSim's `Ain-size-ratio` and `Aout-size-ratio`.
    pub fn with_ratios(capacity: u64, a_in: f64, a_out: f64) -> TwoQ {
        let in_cap = part(capacity, a_in);
        TwoQ {
            cap: capacity,
            in_cap,
            am_cap: capacity - in_cap,
            t: Table::default(),
            a1in: List::default(),
            am: List::default(),
            a1out: Ghost::new(part(capacity, a_out)),
        }
    }

    fn evict_tail(list: &mut List, t: &mut Table, evicted: &mut Vec<u64>) -> (u64, u64) {
        let v = list.tail;
        list.unlink(t, v);
        let (id, size) = (t[v].id, t[v].size);
        evicted.push(id);
        t.remove(v);
        (id, size)
    }
}

impl Policy for TwoQ {
    named!("2q", cap);
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        let found = self.t.find(a.id);
        if let Some(s) = found
            && self.t[s].tag == IN
        {
            return true;
        }
        let ghost_hit = self.a1out.remove(a.id);
        if let Some(s) = found {
            self.am.move_to_head(&mut self.t, s);
            return true;
        }
        if a.charge > self.in_cap || a.charge > self.cap {
            return false;
        }
        while self.a1in.bytes + self.am.bytes + a.charge > self.cap {
            if self.a1in.bytes > self.in_cap || self.am.is_empty() {
                let (id, size) = Self::evict_tail(&mut self.a1in, &mut self.t, evicted);
                self.a1out.add(id, size);
            } else {
                Self::evict_tail(&mut self.am, &mut self.t, evicted);
            }
        }
        if ghost_hit {
            if a.charge <= self.am_cap {
                while self.am.bytes + a.charge > self.am_cap {
                    Self::evict_tail(&mut self.am, &mut self.t, evicted);
                }
                let s = self.t.insert(a.id, a.charge, AM);
                self.am.push_head(&mut self.t, s);
            }
        } else {
            let s = self.t.insert(a.id, a.charge, IN);
            self.a1in.push_head(&mut self.t, s);
        }
        false
    }
    held_in!(table t, a1in.bytes + am.bytes);
}
