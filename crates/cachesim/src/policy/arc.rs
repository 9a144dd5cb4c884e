//! ARC (Megiddo and Modha) as libCacheSim 0.3.5 defines it: T1 and T2 hold
//! data (seen once, seen again), B1 and B2 their ghosts; the target size p
//! of T1 is a float moved by max(|B2|/|B1|, 1) on a B1 hit and by
//! max(|B1|/|B2|, 1) on a B2 hit. A ghost hit is a miss whose object goes to
//! T2, evicting by REPLACE; a miss everywhere evicts by the paper's case IV.

use super::{Access, Policy};
use crate::list::{List, Table};

const T1: u8 = 1;
const T2: u8 = 2;
const B1: u8 = 3;
const B2: u8 = 4;

pub struct Arc {
    cap: u64,
    t: Table,
    t1: List,
    t2: List,
    b1: List,
    b2: List,
    p: f64,
}

impl Arc {
    pub fn new(capacity: u64) -> Arc {
        Arc {
            cap: capacity,
            t: Table::default(),
            t1: List::default(),
            t2: List::default(),
            b1: List::default(),
            b2: List::default(),
            p: 0.0,
        }
    }

    /// REPLACE: demote T1's or T2's LRU object to its ghost list.
    fn replace(&mut self, in_b2: bool, evicted: &mut Vec<u64>) {
        let t1 = self.t1.bytes as f64;
        let from_t1 =
            (self.t1.bytes > 0 && (t1 > self.p || (t1 == self.p && in_b2))) || self.t2.bytes == 0;
        let v = if from_t1 {
            let v = self.t1.tail;
            self.t1.unlink(&mut self.t, v);
            self.t[v].tag = B1;
            self.b1.push_head(&mut self.t, v);
            v
        } else {
            let v = self.t2.tail;
            self.t2.unlink(&mut self.t, v);
            self.t[v].tag = B2;
            self.b2.push_head(&mut self.t, v);
            v
        };
        evicted.push(self.t[v].id);
    }

    fn drop_tail(list: &mut List, t: &mut Table) -> u64 {
        let v = list.tail;
        list.unlink(t, v);
        let id = t[v].id;
        t.remove(v);
        id
    }

    /// Case IV: the object is in none of the four lists.
    fn evict_cold(&mut self, charge: u64, evicted: &mut Vec<u64>) {
        if self.t1.bytes + self.b1.bytes + charge > self.cap {
            if self.b1.bytes > 0 {
                Self::drop_tail(&mut self.b1, &mut self.t);
                self.replace(false, evicted);
            } else {
                let id = Self::drop_tail(&mut self.t1, &mut self.t);
                evicted.push(id);
            }
        } else {
            if self.t1.bytes + self.b1.bytes + self.t2.bytes + self.b2.bytes >= 2 * self.cap
                && self.b2.bytes > 0
            {
                Self::drop_tail(&mut self.b2, &mut self.t);
            }
            self.replace(false, evicted);
        }
    }
}

impl Policy for Arc {
    named!("arc", cap);
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        let mut ghost = None;
        if let Some(s) = self.t.find(a.id) {
            match self.t[s].tag {
                T1 => {
                    self.t1.unlink(&mut self.t, s);
                    self.t[s].tag = T2;
                    self.t2.push_head(&mut self.t, s);
                    return true;
                }
                T2 => {
                    self.t2.move_to_head(&mut self.t, s);
                    return true;
                }
                B1 => {
                    let delta = (self.b2.bytes as f64 / self.b1.bytes as f64).max(1.0);
                    self.p = (self.p + delta).min(self.cap as f64);
                    self.b1.unlink(&mut self.t, s);
                    ghost = Some(B1);
                }
                _ => {
                    let delta = (self.b1.bytes as f64 / self.b2.bytes as f64).max(1.0);
                    self.p = (self.p - delta).max(0.0);
                    self.b2.unlink(&mut self.t, s);
                    ghost = Some(B2);
                }
            }
            self.t.remove(s);
        }
        if a.charge > self.cap {
            return false;
        }
        while self.t1.bytes + self.t2.bytes + a.charge > self.cap {
            match ghost {
                Some(g) => self.replace(g == B2, evicted),
                None => self.evict_cold(a.charge, evicted),
            }
        }
        let s = self.t.insert(a.id, a.charge, 0);
        if ghost.is_some() {
            self.t[s].tag = T2;
            self.t2.push_head(&mut self.t, s);
        } else {
            self.t[s].tag = T1;
            self.t1.push_head(&mut self.t, s);
        }
        false
    }
    fn contains(&self, id: u64) -> bool {
        self.t.find(id).is_some_and(|s| self.t[s].tag <= T2)
    }
    fn occupied(&self) -> u64 {
        self.t1.bytes + self.t2.bytes
    }
    fn len(&self) -> usize {
        self.t1.len + self.t2.len
    }
}
