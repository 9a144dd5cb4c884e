//! Greedy-Dual-Size-Frequency as libCacheSim 0.3.5's `cpp/GDSF.cpp`
//! defines it: each object's priority is L + frequency × 10⁶ ÷ size, where
//! L is the priority of the last object evicted; the lowest priority goes
//! first, and among equal priorities the one requested longest ago. A miss
//! inserts the object (frequency 1) before making room — so a new object
//! of the lowest priority is itself the one evicted — and a hit adds one to
//! the frequency and computes the priority again with today's L.
//! (libCacheSim has a stricter admission check for GDSF but does not call
//! it; neither does this.)

use std::collections::BTreeSet;

use rustc_hash::FxHashMap;

use super::{Access, Policy};

/// A priority with its tie-breaker, ordered as libCacheSim's `pq_node_type`
/// (priorities are positive, so their bits order as the numbers do).
type Key = (u64, u64);

pub struct Gdsf {
    cap: u64,
    occupied: u64,
    /// Per cached id: its key, frequency and charge.
    map: FxHashMap<u64, (Key, u64, u64)>,
    order: BTreeSet<(Key, u64)>,
    /// L, and the request count (libCacheSim's `n_req`).
    last_evicted: f64,
    vtime: u64,
}

impl Gdsf {
    pub fn new(capacity: u64) -> Gdsf {
        Gdsf {
            cap: capacity,
            occupied: 0,
            map: FxHashMap::default(),
            order: BTreeSet::new(),
            last_evicted: 0.0,
            vtime: 0,
        }
    }

    fn priority(&self, freq: u64, charge: u64) -> f64 {
        self.last_evicted + freq as f64 * 1.0e6 / charge.max(1) as f64
    }
}

impl Policy for Gdsf {
    named!("gdsf", cap);
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        self.vtime += 1;
        if let Some(&(key, freq, charge)) = self.map.get(&a.id) {
            self.order.remove(&(key, a.id));
            let key = (self.priority(freq + 1, charge).to_bits(), self.vtime);
            self.order.insert((key, a.id));
            self.map.insert(a.id, (key, freq + 1, charge));
            return true;
        }
        if a.charge > self.cap {
            return false;
        }
        let key = (self.priority(1, a.charge).to_bits(), self.vtime);
        self.order.insert((key, a.id));
        self.map.insert(a.id, (key, 1, a.charge));
        self.occupied += a.charge;
        while self.occupied > self.cap {
            let Some(((bits, _), id)) = self.order.pop_first() else {
                break;
            };
            self.last_evicted = f64::from_bits(bits);
            if let Some((_, _, c)) = self.map.remove(&id) {
                self.occupied -= c;
            }
            evicted.push(id);
        }
        false
    }
    held_in!(map map, occupied);
}
