//! LRU-K as libCacheSim 0.3.5's `cpp/LRU_K.cpp` defines it (default K =
//! 2): each cached object keeps the times (request numbers) of its last K
//! requests. Objects with fewer than K wait in a FIFO and are evicted
//! first, oldest admission first (their backward K-distance is infinite);
//! the others are ordered by their K-th most recent request time, the
//! oldest evicted, equal times by the smaller id. History is dropped at
//! eviction. K = 1 is LRU.

use std::collections::{BTreeSet, VecDeque};

use super::{Access, Policy};
use crate::list::{List, Table};

const FIFO: u8 = 0;
const RANKED: u8 = 1;

pub struct LruK {
    cap: u64,
    k: usize,
    occupied: u64,
    t: Table,
    fifo: List,
    /// (K-th most recent request time, id) of the objects with K requests.
    ranked: BTreeSet<(u64, u64)>,
    /// Per slot of `t`: the times of its last K requests, oldest first.
    history: Vec<VecDeque<u64>>,
    vtime: u64,
}

impl LruK {
    pub fn new(capacity: u64, k: usize) -> LruK {
        LruK {
            cap: capacity,
            k: k.max(1),
            occupied: 0,
            t: Table::default(),
            fifo: List::default(),
            ranked: BTreeSet::new(),
            history: Vec::new(),
            vtime: 0,
        }
    }

    fn kth(&self, s: u32) -> u64 {
        self.history[s as usize][0]
    }

    fn evict(&mut self, evicted: &mut Vec<u64>) {
        let s = if !self.fifo.is_empty() {
            let s = self.fifo.head;
            self.fifo.unlink(&mut self.t, s);
            s
        } else {
            let Some((_, id)) = self.ranked.pop_first() else {
                return;
            };
            self.t.find(id).expect("a ranked object is cached")
        };
        self.occupied -= self.t[s].size;
        evicted.push(self.t[s].id);
        self.history[s as usize].clear();
        self.t.remove(s);
    }
}

impl Policy for LruK {
    named!("lruk", cap);
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        self.vtime += 1;
        if let Some(s) = self.t.find(a.id) {
            let old = (self.t[s].tag == RANKED).then(|| self.kth(s));
            let h = &mut self.history[s as usize];
            h.push_back(self.vtime);
            if h.len() > self.k {
                h.pop_front();
            }
            let full = h.len() >= self.k;
            match old {
                None if full => {
                    self.fifo.unlink(&mut self.t, s);
                    self.t[s].tag = RANKED;
                    self.ranked.insert((self.kth(s), a.id));
                }
                None => {}
                Some(old) => {
                    self.ranked.remove(&(old, a.id));
                    self.ranked.insert((self.kth(s), a.id));
                }
            }
            return true;
        }
        if a.charge > self.cap {
            return false;
        }
        while self.occupied + a.charge > self.cap && self.t.len() > 0 {
            self.evict(evicted);
        }
        let tag = if self.k == 1 { RANKED } else { FIFO };
        let s = self.t.insert(a.id, a.charge, tag);
        self.occupied += a.charge;
        let i = s as usize;
        if self.history.len() <= i {
            self.history.resize_with(i + 1, VecDeque::new);
        }
        self.history[i].push_back(self.vtime);
        if tag == RANKED {
            self.ranked.insert((self.vtime, a.id));
        } else {
            self.fifo.push_tail(&mut self.t, s);
        }
        false
    }
    held_in!(table t, occupied);
}
