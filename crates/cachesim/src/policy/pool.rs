//! The cached objects of the sampling policies (Random, Hyperbolic,
//! Belady-Size), drawn at random exactly as libCacheSim 0.3.5 draws them,
//! so that runs equal libCacheSim's one for one.
//!
//! libCacheSim draws from its chained hash table (`chainedHashTableV2.c`):
//! a bucket index from its generator masked to the table's size, again
//! until a bucket holds something — and after 32 empty draws, the table
//! halves before each further draw — then one of the bucket's chain, by a
//! draw modulo its length, counted from the head. Objects go in at the head
//! of the chain of XXH3-64 of their id (little-endian) masked to the size;
//! the table doubles when an insertion finds more than twice as many
//! objects as buckets; halving and doubling move the chains bucket by
//! bucket, head first, to the heads of the new ones. The table here keeps
//! only the buckets in use (a map, not 2^24 pointers), with the same
//! chains in the same order.

use rustc_hash::FxHashMap;
use xxhash_rust::xxh3::xxh3_64;

use super::admission::Lehmer64;

/// libCacheSim's `hashtable_t` as far as draws see it.
struct Chained {
    power: u32,
    /// Non-empty buckets; each chain's head is its last element.
    buckets: FxHashMap<u64, Vec<u64>>,
    n: u64,
}

impl Chained {
    fn mask(&self) -> u64 {
        (1u64 << self.power) - 1
    }
    fn add(&mut self, id: u64) {
        let b = xxh3_64(&id.to_le_bytes()) & self.mask();
        self.buckets.entry(b).or_default().push(id);
    }
    fn insert(&mut self, id: u64) {
        if self.n > (1u64 << self.power) * 2 {
            self.resize(self.power + 1);
        }
        self.add(id);
        self.n += 1;
    }
    fn remove(&mut self, id: u64) {
        let b = xxh3_64(&id.to_le_bytes()) & self.mask();
        if let Some(chain) = self.buckets.get_mut(&b)
            && let Some(i) = chain.iter().position(|&x| x == id)
        {
            chain.remove(i);
            if chain.is_empty() {
                self.buckets.remove(&b);
            }
            self.n -= 1;
        }
    }
    /// Moves every chain, buckets in order and each from its head, to a
    /// table of 2^power buckets.
    fn resize(&mut self, power: u32) {
        let mut old: Vec<(u64, Vec<u64>)> = std::mem::take(&mut self.buckets).into_iter().collect();
        old.sort_unstable_by_key(|b| b.0);
        self.power = power;
        for (_, chain) in old {
            for &id in chain.iter().rev() {
                self.add(id);
            }
        }
    }
    fn draw(&mut self, rng: &mut Lehmer64) -> Option<u64> {
        if self.n == 0 {
            return None;
        }
        let mut pos = rng.next_u64() & self.mask();
        let mut tries = 0;
        while !self.buckets.contains_key(&pos) {
            tries += 1;
            if tries > 32 && self.power > 0 {
                self.resize(self.power - 1);
            }
            pos = rng.next_u64() & self.mask();
        }
        let chain = &self.buckets[&pos];
        let k = chain.len() as u64;
        let r = rng.next_u64() % k;
        Some(chain[(k - 1 - r) as usize])
    }
}

pub(crate) struct Pool<M> {
    table: Chained,
    map: FxHashMap<u64, (u64, M)>,
    pub occupied: u64,
    rng: Lehmer64,
}

impl<M> Pool<M> {
    /// A table of 2^`power` buckets to begin with (libCacheSim's
    /// `hashpower`: 24 from its Python binding, 16 for Hyperbolic).
    pub fn new(seed: u64, power: u32) -> Pool<M> {
        Pool {
            table: Chained {
                power,
                buckets: FxHashMap::default(),
                n: 0,
            },
            map: FxHashMap::default(),
            occupied: 0,
            rng: Lehmer64::new(seed),
        }
    }
    pub fn contains(&self, id: u64) -> bool {
        self.map.contains_key(&id)
    }
    pub fn len(&self) -> usize {
        self.map.len()
    }
    pub fn meta_mut(&mut self, id: u64) -> Option<&mut M> {
        self.map.get_mut(&id).map(|e| &mut e.1)
    }
    /// A cached object drawn as libCacheSim draws it, with its charge and
    /// data (none when empty).
    pub fn sample(&mut self) -> Option<(u64, u64, &M)> {
        let id = self.table.draw(&mut self.rng)?;
        let e = &self.map[&id];
        Some((id, e.0, &e.1))
    }
    /// Of `n` objects drawn, the first of the lowest `score(charge,
    /// data)` (the comparison libCacheSim's sampling policies make: a later
    /// draw wins only if strictly lower).
    pub fn lowest_of(&mut self, n: usize, score: impl Fn(u64, &M) -> f64) -> Option<u64> {
        let mut best: Option<(u64, f64)> = None;
        for _ in 0..n {
            let (id, charge, m) = self.sample()?;
            let s = score(charge, m);
            if best.is_none_or(|(_, b)| s < b) {
                best = Some((id, s));
            }
        }
        best.map(|b| b.0)
    }

    /// Evicts the objects `victim` picks until at most `room` is occupied,
    /// pushing their ids to `evicted`.
    pub fn make_room(
        &mut self,
        room: u64,
        evicted: &mut Vec<u64>,
        mut victim: impl FnMut(&mut Self) -> Option<u64>,
    ) {
        while self.occupied > room {
            let Some(id) = victim(self) else { break };
            self.remove(id);
            evicted.push(id);
        }
    }

    pub fn insert(&mut self, id: u64, charge: u64, meta: M) {
        self.table.insert(id);
        self.map.insert(id, (charge, meta));
        self.occupied += charge;
    }
    pub fn remove(&mut self, id: u64) {
        if let Some((charge, _)) = self.map.remove(&id) {
            self.table.remove(id);
            self.occupied -= charge;
        }
    }
}
