//! Cacheus (Rodriguez et al., FAST '21) as libCacheSim 0.3.5's
//! `Cacheus.c` defines it, over its `SR_LRU.c` and `CR_LFU.c` experts.
//!
//! SR-LRU keeps an LRU list R of re-requested objects and a scan-resistant
//! list SR of new ones (half the capacity each to begin with), and a
//! history H of evicted ids; a hit in SR moves the object to R, R's
//! overflow goes back to SR marked demoted, and a miss found in H enters R
//! — each such return of a "new" object grows SR's share, by at least 1 or
//! demoted ÷ new in the history (integer division) + 0.5. CR-LFU groups
//! objects by request count (an object found in H resumes its count + 1)
//! and evicts the *latest* of the lowest count. To make room, a draw of
//! libCacheSim's generator (modulo 100, over 100) below the LRU weight
//! picks SR-LRU's candidate, else CR-LFU's; when both name the same object
//! it simply leaves; otherwise the other expert forgets it and the chooser
//! remembers it in its history (LRU lists of half the capacity). A miss
//! found in a history lowers that expert's weight by e^(−lr), and both are
//! normalised. The learning rate starts at a draw 0.001 + (r mod 1000) ÷
//! 1000 (the generator's first draw) and is adapted every capacity's
//! worth of requests from the hit rate — which libCacheSim computes by
//! integer division, so it is 0 unless every request hit.

use super::admission::Lehmer64;
use super::groups::CountGroups;
use super::sublru::SubLru;
use super::{Access, Policy};
use crate::list::Table;

const DEMOTED: u8 = 1;
const NEW: u8 = 2;

pub struct Cacheus {
    cap: u64,
    // SR-LRU.
    sr: SubLru,
    r: SubLru,
    h: SubLru,
    c_demoted: u64,
    c_new: u64,
    // CR-LFU: its objects, grouped by count.
    lfu_t: Table,
    lfu: CountGroups,
    min_freq: i64,
    max_freq: u64,
    // Cacheus.
    lru_g: SubLru,
    lfu_g: SubLru,
    w_lru: f64,
    w_lfu: f64,
    lr: f64,
    lr_previous: f64,
    unlearn_count: i64,
    num_hit: u64,
    hit_rate_prev: f64,
    n_req: u64,
    rng: Lehmer64,
    /// Ids that left the cache in the request in progress.
    out: Vec<u64>,
}

impl Cacheus {
    pub fn new(capacity: u64, seed: u64) -> Cacheus {
        let mut rng = Lehmer64::new(seed);
        let lr = 0.001 + (rng.next_u64() % 1000) as f64 / 1000.0;
        let cap = capacity as i64;
        let ghost = (capacity as f64 / 2.0 * 1.0) as i64;
        Cacheus {
            cap: capacity,
            sr: SubLru::with_cap(cap / 2),
            r: SubLru::with_cap(cap / 2),
            h: SubLru::with_cap(cap),
            c_demoted: 0,
            c_new: 0,
            lfu_t: Table::default(),
            lfu: CountGroups::default(),
            min_freq: 1,
            max_freq: 1,
            lru_g: SubLru::with_cap(ghost),
            lfu_g: SubLru::with_cap(ghost),
            w_lru: 0.5,
            w_lfu: 0.5,
            lr,
            lr_previous: 0.0,
            unlearn_count: 0,
            num_hit: 0,
            hit_rate_prev: 0.0,
            n_req: 0,
            rng,
            out: Vec::new(),
        }
    }

    fn sr_lru_occupied(&self) -> i64 {
        self.r.bytes() + self.sr.bytes()
    }

    /// SR-LRU's lookup (`SR_LRU_find`); true on a hit.
    fn sr_lru_find(&mut self, id: u64) -> bool {
        let in_r = self.r.find(id);
        if let Some(s) = in_r {
            self.r.touch(s);
        }
        let in_sr = self.sr.find(id);
        if let Some(s) = in_sr {
            self.sr.touch(s);
        }
        if in_r.is_some() {
            return true;
        }
        let Some(s) = in_sr else { return false };
        let size = self.sr.t[s].size;
        self.r.insert(id, size, 0);
        self.sr.remove(id);
        while self.r.bytes() > self.r.cap {
            let Some((rid, rsize, flags)) = self.r.tail() else {
                break;
            };
            let n = self.sr.insert(rid, rsize, 0);
            if flags & DEMOTED == 0 {
                self.c_demoted += 1;
                self.sr.t[n].tag |= DEMOTED;
            }
            self.r.pop_tail();
        }
        // libCacheSim then looks at the new R entry's demoted bit, which a
        // new entry never has.
        true
    }

    /// H's tail leaves while H is full.
    fn trim_history(&mut self) {
        while self.h.bytes() >= self.h.cap && !self.h.is_empty() {
            self.h.pop_tail();
        }
    }

    /// Into H (libCacheSim's `H->insert`); returns its slot.
    fn remember(&mut self, id: u64, size: u64, flags: u8) -> u32 {
        let s = self.h.insert(id, size, 0);
        if flags & NEW != 0 {
            self.c_new += 1;
            self.h.t[s].tag |= NEW;
        }
        s
    }

    fn sr_lru_insert(&mut self, id: u64, size: u64) {
        if let Some(hs) = self.h.find(id) {
            let was_new = self.h.t[hs].tag & NEW != 0;
            self.h.remove(id);
            while self.r.bytes() + size as i64 > self.r.cap && !self.r.is_empty() {
                let (rid, rsize, flags) = self.r.tail().expect("R is not empty");
                let n = self.sr.insert(rid, rsize, 0);
                if flags & DEMOTED == 0 {
                    self.c_demoted += 1;
                    self.sr.t[n].tag |= DEMOTED;
                }
                self.r.pop_tail();
            }
            self.r.insert(id, size, 0);
            if was_new {
                let ratio = (self.c_demoted.checked_div(self.c_new).unwrap_or(0)) as i32;
                let delta = f64::max(1.0, ratio as f64 + 0.5);
                let occupied = self.sr_lru_occupied();
                if self.sr.cap as f64 + delta > (occupied - 1) as f64 {
                    self.sr.cap = occupied - 1;
                } else {
                    self.sr.cap = (self.sr.cap as f64 + delta) as i64;
                }
                self.r.cap = self.h.cap - self.sr.cap;
            }
        } else {
            let s = self.sr.insert(id, size, 0);
            self.sr.t[s].tag |= NEW;
        }
        while self.sr.bytes() > self.sr.cap {
            let Some((vid, vsize, flags)) = self.sr.tail() else {
                break;
            };
            let hs = self.remember(vid, vsize, flags);
            self.cr_lfu_remove(vid);
            if flags & DEMOTED != 0 {
                self.h.t[hs].tag &= !DEMOTED;
                self.c_demoted = self.c_demoted.wrapping_sub(1);
            }
            self.sr.pop_tail();
            self.out.push(vid);
        }
        self.trim_history();
    }

    /// SR-LRU's candidate: SR's oldest, or R's when SR is empty.
    fn sr_lru_victim(&self) -> Option<(u64, u64, u8)> {
        if self.sr.bytes() > 0 {
            self.sr.tail()
        } else {
            self.r.tail()
        }
    }

    fn sr_lru_evict(&mut self) {
        let Some((id, size, flags)) = self.sr_lru_victim() else {
            return;
        };
        let hs = self.remember(id, size, flags);
        if flags & DEMOTED != 0 {
            self.c_demoted = self.c_demoted.wrapping_sub(1);
            self.h.t[hs].tag |= DEMOTED;
        }
        if self.sr.bytes() > 0 {
            self.sr.pop_tail();
        } else {
            self.r.pop_tail();
        }
        self.out.push(id);
        self.trim_history();
    }

    fn sr_lru_remove(&mut self, id: u64) {
        let (list_r, s) = match (self.r.find(id), self.sr.find(id)) {
            (Some(s), _) => (true, s),
            (None, Some(s)) => (false, s),
            _ => return,
        };
        let (size, flags) = if list_r {
            (self.r.t[s].size, self.r.t[s].tag)
        } else {
            (self.sr.t[s].size, self.sr.t[s].tag)
        };
        let hs = self.remember(id, size, flags);
        if flags & DEMOTED != 0 {
            self.c_demoted = self.c_demoted.wrapping_sub(1);
            self.h.t[hs].tag &= !DEMOTED;
        }
        if list_r {
            self.r.remove(id);
        } else {
            self.sr.remove(id);
        }
        self.out.push(id);
        self.trim_history();
    }

    fn sr_lru_can_insert(&self, id: u64, size: u64) -> bool {
        let limit = if self.h.find(id).is_some() {
            self.r.cap
        } else {
            self.sr.cap
        };
        size as i64 <= limit
    }

    // CR-LFU.

    /// The lowest non-empty count above the lowest, up to the highest.
    fn next_min(&self) -> Option<u64> {
        if self.min_freq < 0 {
            return None;
        }
        self.lfu.lowest_above(self.min_freq as u64, self.max_freq)
    }

    fn cr_lfu_find(&mut self, id: u64) {
        let Some(s) = self.lfu_t.find(id) else { return };
        let f = self.lfu.leave(s);
        self.max_freq = self.max_freq.max(f + 1);
        self.lfu.join(s, f + 1);
        if self.min_freq == f as i64
            && !self.lfu.has(f)
            && let Some(m) = self.next_min()
        {
            self.min_freq = m as i64;
        }
    }

    fn cr_lfu_insert(&mut self, id: u64, size: u64) {
        let s = self.lfu_t.insert(id, size, 0);
        let f = self.h.find(id).map_or(1, |hs| self.h.t[hs].freq + 1);
        if f == 1 {
            self.min_freq = 1;
        }
        self.lfu.join(s, f);
        self.max_freq = self.max_freq.max(f);
        if self.min_freq > f as i64 || self.min_freq == -1 {
            self.min_freq = f as i64;
        }
    }

    /// CR-LFU's candidate: the latest to join the lowest count.
    fn cr_lfu_victim(&self) -> Option<(u64, u64)> {
        if self.min_freq < 0 {
            return None;
        }
        let s = self.lfu.last(self.min_freq as u64)?;
        Some((self.lfu_t[s].id, self.lfu_t[s].size))
    }

    /// Hands an object's count to its history entry, as CR-LFU does.
    fn note_count(&mut self, id: u64, f: u64) {
        if let Some(hs) = self.h.find(id) {
            self.h.t[hs].freq = f;
        }
    }

    fn cr_lfu_evict(&mut self) {
        let Some((id, _)) = self.cr_lfu_victim() else {
            return;
        };
        let s = self.lfu_t.find(id).expect("the candidate is cached");
        let f = self.lfu.count(s);
        self.note_count(id, f);
        if self.lfu.single(f) {
            match self.next_min() {
                Some(m) => self.min_freq = m as i64,
                None => self.min_freq = -1,
            }
        }
        self.lfu.leave(s);
        self.lfu_t.remove(s);
    }

    fn cr_lfu_remove(&mut self, id: u64) {
        let Some(s) = self.lfu_t.find(id) else { return };
        let f = self.lfu.leave(s);
        self.note_count(id, f);
        self.lfu_t.remove(s);
        if self.min_freq >= 0
            && !self.lfu.has(self.min_freq as u64)
            && let Some(m) = self.next_min()
        {
            self.min_freq = m as i64;
        }
    }

    // Cacheus.

    fn evict(&mut self) {
        let lru = self.sr_lru_victim();
        let lfu = self.cr_lfu_victim();
        let r = (self.rng.next_u64() % 100) as f64 / 100.0;
        match (lru, lfu) {
            (Some((a, _, _)), Some((b, _))) if a == b => {
                self.sr_lru_evict();
                self.cr_lfu_evict();
            }
            (Some((id, size, _)), lfu) if r < self.w_lru || lfu.is_none() => {
                self.sr_lru_evict();
                self.cr_lfu_remove(id);
                self.lru_g.request(id, size);
            }
            (_, Some((id, size))) => {
                self.sr_lru_remove(id);
                self.cr_lfu_evict();
                self.lfu_g.request(id, size);
            }
            _ => {}
        }
    }

    fn check_history(&mut self, id: u64) {
        let in_lru_g = self.lru_g.find(id).is_some();
        let in_lfu_g = self.lfu_g.find(id).is_some();
        if in_lru_g {
            self.w_lru *= (-self.lr).exp();
        } else if in_lfu_g {
            self.w_lfu *= (-self.lr).exp();
        }
        self.w_lru /= self.w_lru + self.w_lfu;
        self.w_lfu = 1.0 - self.w_lru;
        self.lru_g.remove(id);
        self.lfu_g.remove(id);
    }

    fn update_lr(&mut self) {
        // libCacheSim divides the hits by the interval in integers.
        let hit_rate = self.num_hit.checked_div(self.cap).unwrap_or(0) as f64;
        let delta_hit_rate = hit_rate - self.hit_rate_prev;
        let delta_lr = self.lr - self.lr_previous;
        self.lr_previous = self.lr;
        self.hit_rate_prev = hit_rate;
        if delta_lr != 0.0 {
            let sign = if delta_hit_rate / delta_lr > 0.0 {
                1.0
            } else {
                -1.0
            };
            let step = sign * (self.lr * delta_lr).abs();
            self.lr = if self.lr + step > 0.001 {
                self.lr + step
            } else {
                0.0001
            };
            self.unlearn_count = 0;
        } else if hit_rate == 0.0 || delta_hit_rate <= 0.0 {
            self.unlearn_count += 1;
        } else if self.unlearn_count >= 10 {
            self.unlearn_count = 0;
            self.lr = 0.001 + (self.rng.next_u64() % 1000) as f64 / 1000.0;
        }
        self.num_hit = 0;
    }
}

impl Policy for Cacheus {
    named!("cacheus", cap);
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        self.n_req += 1;
        let hit = self.sr_lru_find(a.id);
        self.cr_lfu_find(a.id);
        if hit {
            self.num_hit += 1;
        } else {
            self.check_history(a.id);
            if a.charge <= self.cap {
                while self.sr_lru_occupied() + a.charge as i64 > self.cap as i64
                    && self.sr_lru_occupied() > 0
                {
                    self.evict();
                }
                if self.sr_lru_can_insert(a.id, a.charge) {
                    self.cr_lfu_insert(a.id, a.charge);
                    self.sr_lru_insert(a.id, a.charge);
                }
            }
        }
        if self.cap > 0 && self.n_req.is_multiple_of(self.cap) {
            self.update_lr();
        }
        evicted.append(&mut self.out);
        hit
    }
    fn contains(&self, id: u64) -> bool {
        self.r.find(id).is_some() || self.sr.find(id).is_some()
    }
    fn occupied(&self) -> u64 {
        self.sr_lru_occupied().max(0) as u64
    }
    fn len(&self) -> usize {
        self.r.len() + self.sr.len()
    }
}
