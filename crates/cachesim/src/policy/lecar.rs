//! LeCaR (Vietri et al., HotStorage '18) as libCacheSim 0.3.5's `LeCaR.c`
//! defines it: one cache ordered two ways, by recency (an LRU list) and by
//! frequency (groups by request count, each in the order objects joined
//! it), and two experts' weights (0.5 each). To make room, when the LRU
//! tail is also the first of the lowest-count group it leaves (a ghost of
//! neither expert); otherwise a draw of libCacheSim's generator (modulo
//! 100, over 100) below the LRU weight evicts the LRU tail, else the LFU
//! candidate, and the victim becomes a ghost in that expert's history
//! (each at most half the capacity, oldest forgotten first). A miss that
//! finds its ghost lowers the weight of the expert that evicted it —
//! w ← w·e^(−0.45·d^t) with d = 0.005^(1/capacity) and t the requests since
//! the eviction — and both are normalised; the object comes back as new
//! (count 1). Ghosts of neither expert stay until their object returns.
//!
//! The lowest-count group is tracked as libCacheSim tracks it: it moves up
//! only to a non-empty group no higher than the highest count seen, when
//! the group it points at empties (so for a moment it can point at an
//! empty group; libCacheSim would then fail if the draw chose LFU, and
//! here the LRU tail goes instead).

use rustc_hash::FxHashMap;

use super::admission::Lehmer64;
use super::groups::CountGroups;
use super::{Access, Policy};
use crate::list::{List, Table};

const RESIDENT: u8 = 0;
const GHOST_LRU: u8 = 1;
const GHOST_LFU: u8 = 2;
/// Evicted when both experts chose it: in no history.
const GHOST_NONE: u8 = 3;

pub struct LeCaR {
    cap: u64,
    occupied: u64,
    t: Table,
    /// Resident objects by recency (head = newest).
    lru: List,
    /// Resident objects by count.
    lfu: CountGroups,
    /// Per slot: when it was evicted.
    evicted_at: FxHashMap<u32, u64>,
    min_freq: u64,
    max_freq: u64,
    ghost_lru: List,
    ghost_lfu: List,
    w_lru: f64,
    w_lfu: f64,
    discount: f64,
    update_weight: bool,
    rng: Lehmer64,
    vtime: u64,
    resident: usize,
}

impl LeCaR {
    pub fn new(capacity: u64, update_weight: bool, lru_weight: f64, seed: u64) -> LeCaR {
        LeCaR {
            cap: capacity,
            occupied: 0,
            t: Table::default(),
            lru: List::default(),
            lfu: CountGroups::default(),
            evicted_at: FxHashMap::default(),
            min_freq: 1,
            max_freq: 1,
            ghost_lru: List::default(),
            ghost_lfu: List::default(),
            w_lru: lru_weight,
            w_lfu: 0.5,
            discount: 0.005f64.powf(1.0 / capacity as f64),
            update_weight,
            rng: Lehmer64::new(seed),
            vtime: 0,
            resident: 0,
        }
    }

    /// libCacheSim's `update_LFU_min_freq`.
    fn raise_min(&mut self) {
        if let Some(f) = self.lfu.lowest_above(self.min_freq, self.max_freq) {
            self.min_freq = f;
        }
    }

    fn leave_group(&mut self, s: u32) {
        let f = self.lfu.leave(s);
        if f == self.min_freq && !self.lfu.has(f) {
            self.raise_min();
        }
    }

    /// w_update ← w_update·e^(−lr·dʳ), both normalised.
    fn punish(w_update: &mut f64, w_other: &mut f64, discount: f64, t: u64) {
        let r = discount.powf(t as f64);
        *w_update = *w_update * (-0.45 * r).exp() + 1e-10;
        let s = *w_update + *w_other + 2e-10;
        *w_update /= s;
        *w_other = (*w_other + 1e-10) / s;
    }

    fn forget_ghost(&mut self, s: u32) {
        let list = match self.t[s].tag {
            GHOST_LRU => &mut self.ghost_lru,
            GHOST_LFU => &mut self.ghost_lfu,
            _ => {
                self.evicted_at.remove(&s);
                self.t.remove(s);
                return;
            }
        };
        list.unlink(&mut self.t, s);
        self.evicted_at.remove(&s);
        self.t.remove(s);
    }

    fn evict(&mut self, evicted: &mut Vec<u64>) {
        let lru = self.lru.tail;
        let lfu = self.lfu.first(self.min_freq);
        let (victim, expert) = if Some(lru) == lfu {
            (lru, GHOST_NONE)
        } else {
            let r = (self.rng.next_u64() % 100) as f64 / 100.0;
            match lfu {
                Some(l) if r >= self.w_lru => (l, GHOST_LFU),
                _ => (lru, GHOST_LRU),
            }
        };
        self.lru.unlink(&mut self.t, victim);
        self.leave_group(victim);
        let size = self.t[victim].size;
        self.occupied -= size;
        self.resident -= 1;
        evicted.push(self.t[victim].id);
        self.t[victim].tag = expert;
        self.evicted_at.insert(victim, self.vtime);
        let half = self.cap / 2;
        let list = match expert {
            GHOST_LRU => &mut self.ghost_lru,
            GHOST_LFU => &mut self.ghost_lfu,
            _ => return,
        };
        list.push_head(&mut self.t, victim);
        while list.bytes > half {
            let g = list.tail;
            list.unlink(&mut self.t, g);
            self.evicted_at.remove(&g);
            self.t.remove(g);
        }
    }
}

impl Policy for LeCaR {
    named!("lecar", cap);
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        self.vtime += 1;
        if let Some(s) = self.t.find(a.id) {
            if self.t[s].tag == RESIDENT {
                self.lru.move_to_head(&mut self.t, s);
                self.leave_group(s);
                let f = self.t[s].freq + 1;
                self.t[s].freq = f;
                self.max_freq = self.max_freq.max(f);
                self.lfu.join(s, f);
                if self.resident == 1 {
                    self.raise_min();
                }
                if f < self.min_freq {
                    self.min_freq = f;
                }
                return true;
            }
            // A ghost: the expert that evicted it loses weight.
            let t = self.vtime - self.evicted_at.get(&s).copied().unwrap_or(0);
            if self.update_weight {
                match self.t[s].tag {
                    GHOST_LRU => Self::punish(&mut self.w_lru, &mut self.w_lfu, self.discount, t),
                    GHOST_LFU => Self::punish(&mut self.w_lfu, &mut self.w_lru, self.discount, t),
                    _ => {}
                }
            }
            self.forget_ghost(s);
        }
        if a.charge > self.cap {
            return false;
        }
        while self.occupied + a.charge > self.cap && self.resident > 0 {
            self.evict(evicted);
        }
        let s = self.t.insert(a.id, a.charge, RESIDENT);
        self.t[s].freq = 1;
        self.lru.push_head(&mut self.t, s);
        self.min_freq = 1;
        self.lfu.join(s, 1);
        self.occupied += a.charge;
        self.resident += 1;
        false
    }
    fn contains(&self, id: u64) -> bool {
        self.t.find(id).is_some_and(|s| self.t[s].tag == RESIDENT)
    }
    fn occupied(&self) -> u64 {
        self.occupied
    }
    fn len(&self) -> usize {
        self.resident
    }
}
