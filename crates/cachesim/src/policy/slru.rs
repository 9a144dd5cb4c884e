//! Segmented LRU as libCacheSim 0.3.5 defines it: `n-seg` LRU segments
//! (default 4), each of an equal share of the capacity (truncated). A miss enters the head of the first segment, from
//! the lowest, with room for it — or, when none has, the lowest after
//! evictions make room in the cache. A hit moves the object to the head of
//! the next segment up (the top segment: to its own head); a segment over
//! its share then passes its tail down to the head of the one below, which
//! may cascade, and the bottom segment's tail is evicted. Eviction takes
//! the tail of the lowest segment holding anything. An object larger than
//! the bottom segment's share is not admitted.

use super::{Access, Policy};
use crate::list::{List, Table};

/// Names by segment count (4, the default, is plain `slru`).
const NAMES: [&str; 16] = [
    "slru1", "slru2", "slru3", "slru", "slru5", "slru6", "slru7", "slru8", "slru9", "slru10",
    "slru11", "slru12", "slru13", "slru14", "slru15", "slru16",
];

pub struct Slru {
    cap: u64,
    /// Charge of everything cached (the segments' sum, kept as it changes).
    occupied: u64,
    max: Vec<u64>,
    t: Table,
    segs: Vec<List>,
}

impl Slru {
    pub fn new(capacity: u64) -> Slru {
        Slru::with_segments(capacity, 4)
    }

    /// `n` segments of an equal share each (libCacheSim's `n-seg`, 1 to
    /// 16).
    pub fn with_segments(capacity: u64, n: usize) -> Slru {
        let n = n.clamp(1, NAMES.len());
        Slru::with_shares(capacity, vec![capacity / n as u64; n])
    }

    /// Segments of the given capacities, lowest first.
    pub(crate) fn with_shares(capacity: u64, max: Vec<u64>) -> Slru {
        Slru {
            cap: capacity,
            occupied: 0,
            segs: (0..max.len()).map(|_| List::default()).collect(),
            max,
            t: Table::default(),
        }
    }

    /// The share of the lowest segment (what libCacheSim's SLRU admits).
    pub(crate) fn bottom_share(&self) -> u64 {
        self.max[0]
    }

    /// The id [`Slru::evict`] would evict.
    pub(crate) fn victim(&self) -> Option<u64> {
        let i = self.segs.iter().position(|s| s.bytes > 0)?;
        Some(self.t[self.segs[i].tail].id)
    }

    /// libCacheSim's `SLRU_insert` alone: into the lowest segment with
    /// room, or — when none has — into the lowest after evicting until
    /// the whole cache has room.
    pub(crate) fn insert(&mut self, id: u64, charge: u64, evicted: &mut Vec<u64>) {
        let seg = match self
            .segs
            .iter()
            .zip(&self.max)
            .position(|(s, &m)| s.bytes + charge <= m)
        {
            Some(i) => i,
            None => {
                while self.occupied + charge > self.cap && self.occupied > 0 {
                    self.evict(evicted);
                }
                0
            }
        };
        let s = self.t.insert(id, charge, seg as u8);
        self.segs[seg].push_head(&mut self.t, s);
        self.occupied += charge;
    }

    /// Evicts the tail of the lowest segment holding anything.
    pub(crate) fn evict(&mut self, evicted: &mut Vec<u64>) {
        let Some(i) = self.segs.iter().position(|s| s.bytes > 0) else {
            return;
        };
        let v = self.segs[i].tail;
        self.segs[i].unlink(&mut self.t, v);
        self.occupied -= self.t[v].size;
        evicted.push(self.t[v].id);
        self.t.remove(v);
    }

    /// Passes segment `id`'s tail down (the bottom's is evicted), and on
    /// while the segment below is over its share.
    fn cool(&mut self, id: usize, evicted: &mut Vec<u64>) {
        if id == 0 {
            self.evict(evicted);
            return;
        }
        let v = self.segs[id].tail;
        self.segs[id].unlink(&mut self.t, v);
        self.segs[id - 1].push_head(&mut self.t, v);
        self.t[v].tag = (id - 1) as u8;
        while self.segs[id - 1].bytes > self.max[id - 1] {
            self.cool(id - 1, evicted);
        }
    }
}

impl Policy for Slru {
    fn name(&self) -> &'static str {
        NAMES.get(self.segs.len() - 1).copied().unwrap_or("slru")
    }
    fn capacity(&self) -> u64 {
        self.cap
    }
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        let top = self.segs.len() - 1;
        if let Some(s) = self.t.find(a.id) {
            let id = self.t[s].tag as usize;
            if id == top {
                self.segs[top].move_to_head(&mut self.t, s);
                return true;
            }
            self.segs[id].unlink(&mut self.t, s);
            self.segs[id + 1].push_head(&mut self.t, s);
            self.t[s].tag = (id + 1) as u8;
            loop {
                let cur = self.t[s].tag as usize;
                if self.segs[cur].bytes <= self.max[cur] {
                    break;
                }
                let before = evicted.len();
                self.cool(cur, evicted);
                if evicted[before..].contains(&a.id) {
                    break;
                }
            }
            return true;
        }
        if a.charge > self.cap || a.charge > self.max[0] {
            return false;
        }
        while self.occupied + a.charge > self.cap {
            self.evict(evicted);
        }
        let seg = self
            .segs
            .iter()
            .zip(&self.max)
            .position(|(s, &m)| s.bytes + a.charge <= m)
            .unwrap_or(0);
        let s = self.t.insert(a.id, a.charge, seg as u8);
        self.segs[seg].push_head(&mut self.t, s);
        self.occupied += a.charge;
        false
    }
    held_in!(table t, occupied);
}
