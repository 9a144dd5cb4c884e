//! LIRS (Jiang and Zhang, SIGMETRICS '02) as libCacheSim 0.3.5's `LIRS.c`
//! defines it: three LRU lists — the stack S of LIR blocks and recently
//! seen HIR blocks (resident or not), the list Q of resident HIR blocks
//! (1% of the capacity, at least 1), and NH, the non-resident HIR blocks in
//! the order they left. A block's LIR/HIR and resident bits live in each
//! list's own entry, as libCacheSim keeps them. S is pruned of HIR blocks
//! at its bottom after a LIR hit and after a LIR block is demoted (into Q
//! when it fits there); a resident HIR hit in S becomes LIR (leaving Q),
//! one in Q only goes on top of S; a miss whose block is a non-resident
//! HIR in S comes back as LIR; other misses are LIR while the LIR share has
//! room, else resident HIR. After every request S is kept under twice the
//! capacity by forgetting the oldest non-resident blocks. Objects larger
//! than either share are not admitted.
//!
//! As in libCacheSim a list can hold an id twice (a LIR block demoted
//! while also resident in Q), each entry counted; an eviction step that
//! frees nothing ends the loop instead of spinning.

use super::sublru::SubLru;
use super::{Access, Policy};

const LIR: u8 = 1;
const RESIDENT: u8 = 2;

pub struct Lirs {
    cap: u64,
    hirs_limit: u64,
    lirs_limit: u64,
    hirs_count: u64,
    lirs_count: u64,
    nonresident: u64,
    occupied: u64,
    resident: usize,
    s: SubLru,
    q: SubLru,
    nh: SubLru,
}

impl Lirs {
    pub fn new(capacity: u64) -> Lirs {
        let hirs_limit = ((0.01 * capacity as f64) as u64).max(1);
        Lirs {
            cap: capacity,
            hirs_limit,
            lirs_limit: capacity.saturating_sub(hirs_limit),
            hirs_count: 0,
            lirs_count: 0,
            nonresident: 0,
            occupied: 0,
            resident: 0,
            s: SubLru::default(),
            q: SubLru::default(),
            nh: SubLru::default(),
        }
    }

    fn prune(&mut self) {
        while self.s.l.tail != self.s.l.head {
            let Some((id, size, flags)) = self.s.tail() else {
                break;
            };
            if flags & LIR != 0 {
                break;
            }
            if flags & RESIDENT == 0 && self.nh.remove(id) {
                self.nonresident = self.nonresident.wrapping_sub(size);
            }
            self.s.pop_tail();
        }
    }

    fn evict_hir(&mut self, evicted: &mut Vec<u64>) {
        let Some((id, size, _)) = self.q.pop_tail() else {
            return;
        };
        self.hirs_count = self.hirs_count.wrapping_sub(size);
        if let Some(x) = self.s.find(id) {
            // libCacheSim counts S's entry and lists Q's in NH: their sizes
            // differ when the object's size changed between requests.
            self.s.t[x].tag &= !RESIDENT;
            self.nh.insert(id, size, 0);
            self.nonresident += self.s.t[x].size;
        }
        self.occupied = self.occupied.wrapping_sub(size);
        self.resident -= 1;
        evicted.push(id);
    }

    fn evict_lir(&mut self, evicted: &mut Vec<u64>) {
        let Some((id, size, _)) = self.s.pop_tail() else {
            return;
        };
        self.lirs_count = self.lirs_count.wrapping_sub(size);
        self.occupied = self.occupied.wrapping_sub(size);
        self.resident -= 1;
        if size <= self.hirs_limit {
            while self.hirs_count + size > self.hirs_limit && !self.q.is_empty() {
                self.evict_hir(evicted);
            }
            self.q.insert(id, size, RESIDENT);
            self.hirs_count += size;
            self.occupied += size;
            self.resident += 1;
        } else {
            evicted.push(id);
        }
        self.prune();
    }

    /// libCacheSim's `LIRS_can_insert` (which already evicts).
    fn can_insert(&mut self, a: &Access, evicted: &mut Vec<u64>) -> bool {
        if a.charge > self.cap {
            return false;
        }
        let os = self.s.find(a.id);
        let oq = self.q.find(a.id);
        match (os, oq) {
            (Some(x), _) if self.s.flags(x) & (LIR | RESIDENT) == 0 => {
                let size = self.s.t[x].size;
                while self.lirs_count + size > self.lirs_limit && !self.s.is_empty() {
                    self.evict_lir(evicted);
                }
                if self.nh.remove(a.id) {
                    self.nonresident = self.nonresident.wrapping_sub(size);
                }
                true
            }
            (None, None) => {
                if a.charge > self.lirs_limit || a.charge > self.hirs_limit {
                    return false;
                }
                if self.lirs_count + a.charge > self.lirs_limit
                    && self.hirs_count + a.charge > self.hirs_limit
                {
                    while self.hirs_count + a.charge > self.hirs_limit && !self.q.is_empty() {
                        self.evict_hir(evicted);
                    }
                }
                true
            }
            _ => false,
        }
    }

    /// libCacheSim's `LIRS_evict`.
    fn evict(&mut self, a: &Access, evicted: &mut Vec<u64>) {
        let os = self.s.find(a.id);
        let oq = self.q.find(a.id);
        match (os, oq) {
            (Some(x), _) if self.s.flags(x) & (LIR | RESIDENT) == 0 => {
                while self.hirs_count >= self.hirs_limit && !self.q.is_empty() {
                    self.evict_hir(evicted);
                }
                self.evict_lir(evicted);
            }
            (None, Some(y)) if self.q.flags(y) & RESIDENT == 0 => {
                while self.hirs_count >= self.hirs_limit && !self.q.is_empty() {
                    self.evict_hir(evicted);
                }
            }
            (None, None)
                if self.lirs_count + a.charge > self.lirs_limit
                    && self.hirs_count + a.charge > self.hirs_limit =>
            {
                self.evict_hir(evicted);
            }
            _ => {}
        }
    }

    /// libCacheSim's `LIRS_insert`.
    fn insert(&mut self, a: &Access) {
        let os = self.s.find(a.id);
        let oq = self.q.find(a.id);
        match (os, oq) {
            (Some(x), _) if self.s.flags(x) & (LIR | RESIDENT) == 0 => {
                self.s.t[x].tag = LIR | RESIDENT;
                let size = self.s.t[x].size;
                self.lirs_count += size;
                self.occupied += size;
                self.resident += 1;
            }
            (None, None) => {
                if self.lirs_count + a.charge <= self.lirs_limit {
                    self.s.insert(a.id, a.charge, LIR | RESIDENT);
                    self.lirs_count += a.charge;
                } else {
                    self.s.insert(a.id, a.charge, RESIDENT);
                    self.q.insert(a.id, a.charge, RESIDENT);
                    self.hirs_count += a.charge;
                }
                self.occupied += a.charge;
                self.resident += 1;
            }
            _ => {}
        }
    }

    /// Forgets the oldest non-resident blocks while S is over twice the
    /// capacity.
    fn limit_stack(&mut self) {
        while self.s.l.bytes > 2 * self.cap {
            let Some((id, size, _)) = self.nh.pop_tail() else {
                break;
            };
            self.nonresident = self.nonresident.wrapping_sub(size);
            self.s.remove(id);
        }
    }

    /// A lookup with its hits' effects (libCacheSim's `LIRS_find`).
    fn find(&mut self, id: u64, evicted: &mut Vec<u64>) -> bool {
        let os = self.s.find(id);
        if let Some(x) = os {
            self.s.touch(x);
        }
        let oq = self.q.find(id);
        if let Some(y) = oq {
            self.q.touch(y);
        }
        if let Some(x) = os {
            let flags = self.s.flags(x);
            if flags & LIR != 0 {
                self.prune();
                return true;
            }
            if flags & RESIDENT == 0 {
                return false;
            }
            // A resident HIR block in S becomes LIR.
            if let Some(y) = oq {
                let size = self.q.t[y].size;
                self.hirs_count = self.hirs_count.wrapping_sub(size);
                self.q.remove(id);
                self.occupied = self.occupied.wrapping_sub(size);
                self.resident -= 1;
            }
            let size = self.s.t[x].size;
            while self.lirs_count + size > self.lirs_limit && self.s.l.tail != x {
                self.evict_lir(evicted);
            }
            self.s.t[x].tag |= LIR;
            self.lirs_count += size;
            self.occupied += size;
            self.resident += 1;
            return true;
        }
        if let Some(y) = oq {
            if self.q.flags(y) & RESIDENT == 0 {
                return false;
            }
            let size = self.q.t[y].size;
            while self.lirs_count + size > self.lirs_limit && !self.s.is_empty() {
                self.evict_lir(evicted);
            }
            self.s.insert(id, size, RESIDENT);
            return true;
        }
        false
    }
}

impl Policy for Lirs {
    named!("lirs", cap);
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        let hit = self.find(a.id, evicted);
        if !hit && self.can_insert(&a, evicted) {
            while self.occupied + a.charge > self.cap {
                let before = (self.occupied, self.lirs_count, self.hirs_count);
                self.evict(&a, evicted);
                if (self.occupied, self.lirs_count, self.hirs_count) == before {
                    break;
                }
            }
            self.insert(&a);
        }
        self.limit_stack();
        hit
    }
    fn contains(&self, id: u64) -> bool {
        match self.s.find(id) {
            Some(x) if self.s.flags(x) & RESIDENT != 0 => true,
            _ => self
                .q
                .find(id)
                .is_some_and(|y| self.q.flags(y) & RESIDENT != 0),
        }
    }
    fn occupied(&self) -> u64 {
        self.occupied
    }
    fn len(&self) -> usize {
        self.resident
    }
}
