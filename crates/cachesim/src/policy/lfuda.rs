//! LFU with dynamic aging as libCacheSim 0.3.5's `LFUDA.c` defines it:
//! objects grouped by a priority ("frequency") in first-come order; the
//! cache's age L is the priority of the last object evicted. A new object
//! enters at L + 1; a hit adds L to its priority (so before the first
//! eviction, L = 0, hits change nothing but the order within the group).
//! The victim is the oldest object of the group at L — the group of 1
//! while L is 0 or 1 — and when a group at L empties, L moves up to the
//! lowest non-empty group up to the highest priority seen.
//!
//! Two things of libCacheSim's are kept because they decide the answers:
//! the highest priority seen is raised by hits, and by an admission only
//! when it opens a group not opened before; and L moves only within it.
//! libCacheSim finds the next group by trying every priority in turn,
//! which grows with L (on the Twitter fixture it does not finish 100,000
//! requests in 100 s); here the non-empty groups are kept in order and the
//! next is one lookup, with the same result.

use std::collections::BTreeMap;

use rustc_hash::FxHashSet;

use super::{Access, Policy};
use crate::list::{List, Table};

pub struct Lfuda {
    cap: u64,
    occupied: u64,
    t: Table,
    /// Groups by priority, each oldest first (head); empty groups are
    /// dropped here but remembered in `opened`.
    groups: BTreeMap<u64, List>,
    opened: FxHashSet<u64>,
    /// The age L (libCacheSim's `min_freq`) and the highest priority seen.
    min: u64,
    max: u64,
}

impl Lfuda {
    pub fn new(capacity: u64) -> Lfuda {
        let mut opened = FxHashSet::default();
        opened.insert(1);
        Lfuda {
            cap: capacity,
            occupied: 0,
            t: Table::default(),
            groups: BTreeMap::new(),
            opened,
            min: 0,
            max: 0,
        }
    }

    fn leave(&mut self, pri: u64, s: u32) -> bool {
        let g = self.groups.get_mut(&pri).expect("group of a cached object");
        g.unlink(&mut self.t, s);
        let empty = g.is_empty();
        if empty {
            self.groups.remove(&pri);
        }
        empty
    }

    /// Appends to the group at `pri`; whether the group is new.
    fn enter(&mut self, pri: u64, s: u32) -> bool {
        self.t[s].freq = pri;
        self.groups
            .entry(pri)
            .or_default()
            .push_tail(&mut self.t, s);
        self.opened.insert(pri)
    }

    /// The lowest non-empty group above the age, up to the highest seen.
    fn raise_min(&mut self) {
        if self.min >= self.max {
            return;
        }
        if let Some((&p, _)) = self.groups.range(self.min + 1..=self.max).next() {
            self.min = p;
        }
    }

    fn evict(&mut self, evicted: &mut Vec<u64>) {
        let key = if self.min <= 1 { 1 } else { self.min };
        // libCacheSim's group at the age is never empty here; should it
        // be, the lowest non-empty one stands in.
        let key = match self.groups.contains_key(&key) {
            true => key,
            false => *self.groups.keys().next().expect("a full cache has objects"),
        };
        let v = self.groups[&key].head;
        self.min = key;
        let emptied = self.leave(key, v);
        self.occupied -= self.t[v].size;
        evicted.push(self.t[v].id);
        self.t.remove(v);
        if emptied {
            self.raise_min();
        }
    }
}

impl Policy for Lfuda {
    named!("lfuda", cap);
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        if let Some(s) = self.t.find(a.id) {
            let old = self.t[s].freq;
            let new = old + self.min;
            self.max = self.max.max(new);
            let emptied = self.leave(old, s);
            if emptied && self.min == old {
                self.raise_min();
            }
            self.enter(new, s);
            return true;
        }
        if a.charge > self.cap {
            return false;
        }
        while self.occupied + a.charge > self.cap && self.t.len() > 0 {
            self.evict(evicted);
        }
        let s = self.t.insert(a.id, a.charge, 0);
        self.occupied += a.charge;
        let pri = self.min + 1;
        if self.enter(pri, s) {
            self.max = self.max.max(pri);
        }
        false
    }
    held_in!(table t, occupied);
}
