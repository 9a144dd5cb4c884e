//! W-TinyLFU (Einziger, Friedman and Manes, TOS '17) as libCacheSim
//! 0.3.5's `WTinyLFU.c` defines it, with its default main cache: a window
//! LRU of `window-size` (1%) of the capacity in front of a segmented LRU
//! (two segments, 1:4) holding the rest, and a counting Bloom filter of
//! request frequencies. New objects enter the window. To make room the
//! window's LRU victim moves into the main cache if that has room;
//! otherwise it replaces the main cache's victim only if the filter counts
//! it strictly more often, and is evicted if not. Hits in the main cache
//! and admissions count in the filter (so does each window victim
//! considered); every 32 × the main cache's size main-cache hits, all
//! counters halve.
//!
//! The filter is libCacheSim's `minimalIncrementCBF`: ⌈ln 2 · b⌉ hash
//! functions and ⌈b · n⌉ counters for n = the main cache's size and b =
//! −ln 0.001 ÷ ln² 2, counter i of an id at (a + i·b) mod counters in
//! 32-bit arithmetic, a and b the low 32 bits of XXH64 of the id with
//! seeds 0x12345678 and 0x12344321. Despite its name it increments every
//! counter of the id, and so does this one. Its counters are kept sparse
//! here (libCacheSim allocates them all: 57 bytes per unit of main-cache
//! capacity, so a byte-sized cache of gigabytes would not fit).
//! libCacheSim's other main caches are not offered.

use rustc_hash::FxHashMap;
use xxhash_rust::xxh64::xxh64;

use super::slru::Slru;
use super::{Access, Policy, part};
use crate::list::{List, Table};

/// libCacheSim's counting Bloom filter.
struct Cbf {
    hashes: u32,
    counters: u32,
    bf: FxHashMap<u32, u32>,
}

impl Cbf {
    // libCacheSim's literals for ln 2 and ln² 2, kept as written.
    #[allow(clippy::approx_constant)]
    fn new(entries: u64) -> Cbf {
        let bpe = -(0.001f64).ln() / 0.480453013918201;
        let hashes = (0.693147180559945 * bpe).ceil() as u32;
        let mut counters = (bpe * entries.min(i32::MAX as u64) as f64)
            .ceil()
            .min(i32::MAX as f64) as u32;
        if counters < hashes {
            counters = hashes * 2;
        }
        Cbf {
            hashes,
            counters,
            bf: FxHashMap::default(),
        }
    }

    fn slots(&self, id: u64) -> impl Iterator<Item = u32> + use<> {
        let key = id.to_le_bytes();
        let a = xxh64(&key, 0x1234_5678) as u32;
        let b = xxh64(&key, 0x1234_4321) as u32;
        let n = self.counters;
        (0..self.hashes).map(move |i| a.wrapping_add(i.wrapping_mul(b)) % n)
    }

    fn estimate(&self, id: u64) -> u32 {
        self.slots(id)
            .map(|x| self.bf.get(&x).copied().unwrap_or(0))
            .min()
            .unwrap_or(0)
    }

    fn add(&mut self, id: u64) {
        if self.estimate(id) == u32::MAX {
            return;
        }
        for x in self.slots(id) {
            *self.bf.entry(x).or_insert(0) += 1;
        }
    }

    fn decay(&mut self) {
        self.bf.retain(|_, v| {
            *v >>= 1;
            *v > 0
        });
    }
}

pub struct WTinyLfu {
    cap: u64,
    window_cap: u64,
    wt: Table,
    window: List,
    main: Slru,
    cbf: Cbf,
    main_hits: u64,
    decay_every: u64,
}

impl WTinyLfu {
    pub fn new(capacity: u64, window: f64) -> WTinyLfu {
        let window_cap = part(capacity, window);
        let main_cap = capacity - window_cap;
        let shares = vec![
            (1.0 / 5.0 * main_cap as f64) as u64,
            (4.0 / 5.0 * main_cap as f64) as u64,
        ];
        WTinyLfu {
            cap: capacity,
            window_cap,
            wt: Table::default(),
            window: List::default(),
            main: Slru::with_shares(main_cap, shares),
            cbf: Cbf::new(main_cap),
            main_hits: 0,
            decay_every: 32 * main_cap,
        }
    }

    fn occupied_now(&self) -> u64 {
        self.window.bytes + self.main.occupied()
    }

    /// libCacheSim's `WTinyLFU_evict`.
    fn evict(&mut self, evicted: &mut Vec<u64>) {
        loop {
            if self.window.bytes == 0 {
                self.main.evict(evicted);
                return;
            }
            let v = self.window.tail;
            let (id, size) = (self.wt[v].id, self.wt[v].size);
            let mut done = false;
            if self.main.occupied() + size <= self.main.capacity() {
                self.main.insert(id, size, evicted);
                self.window.unlink(&mut self.wt, v);
                self.wt.remove(v);
            } else {
                let victim = self.main.victim();
                let main_count = victim.map_or(0, |m| self.cbf.estimate(m));
                if victim.is_some() && self.cbf.estimate(id) > main_count {
                    self.main.evict(evicted);
                    self.window.unlink(&mut self.wt, v);
                    self.wt.remove(v);
                    self.main.insert(id, size, evicted);
                } else {
                    self.window.unlink(&mut self.wt, v);
                    self.wt.remove(v);
                    evicted.push(id);
                }
                done = true;
            }
            self.cbf.add(id);
            if done {
                return;
            }
        }
    }
}

impl Policy for WTinyLfu {
    named!("wtinylfu", cap);
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        if let Some(s) = self.wt.find(a.id) {
            self.window.move_to_head(&mut self.wt, s);
            return true;
        }
        if self.main.contains(a.id) {
            self.main.get(a, evicted);
            self.cbf.add(a.id);
            self.main_hits += 1;
            if self.main_hits >= self.decay_every {
                self.main_hits = 0;
                self.cbf.decay();
            }
            return true;
        }
        if a.charge > self.cap || a.charge > self.window_cap || a.charge > self.main.bottom_share()
        {
            return false;
        }
        while self.occupied_now() + a.charge > self.cap && self.occupied_now() > 0 {
            self.evict(evicted);
        }
        let s = self.wt.insert(a.id, a.charge, 0);
        self.window.push_head(&mut self.wt, s);
        self.cbf.add(a.id);
        false
    }
    fn contains(&self, id: u64) -> bool {
        self.wt.find(id).is_some() || self.main.contains(id)
    }
    fn occupied(&self) -> u64 {
        self.occupied_now()
    }
    fn len(&self) -> usize {
        self.wt.len() + self.main.len()
    }
}
