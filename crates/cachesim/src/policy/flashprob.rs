//! FlashProb as libCacheSim 0.3.5's `other/flashProb.c` defines it, with
//! its default parts: a RAM LRU in front of a flash FIFO. Both are looked
//! up (a RAM hit moves the object to the LRU's head; a flash hit changes
//! nothing); a miss enters the RAM. To make room the whole cache evicts
//! the RAM's LRU tail — which is written to the flash with probability
//! `disk-admit-prob` (a draw of libCacheSim's generator modulo ⌊1 ÷ p⌋
//! being 0), the flash's FIFO then making room within its own share — or,
//! when the RAM is empty, the flash's oldest object. The RAM's share
//! (`ram-size-ratio`, 5%) only sizes the flash (the rest): as in
//! libCacheSim, the RAM holds whatever the flash leaves.
//! libCacheSim's other RAM and flash policies are not offered.

use super::admission::Lehmer64;
use super::{Access, Policy, part};
use crate::list::{List, Table};

pub struct FlashProb {
    cap: u64,
    disk_cap: u64,
    inv_prob: u64,
    rng: Lehmer64,
    ram_t: Table,
    ram: List,
    disk_t: Table,
    disk: List,
}

impl FlashProb {
    pub fn new(capacity: u64, ram_ratio: f64, admit_prob: f64, seed: u64) -> FlashProb {
        FlashProb {
            cap: capacity,
            disk_cap: capacity - part(capacity, ram_ratio),
            inv_prob: ((1.0 / admit_prob) as u64).max(1),
            rng: Lehmer64::new(seed),
            ram_t: Table::default(),
            ram: List::default(),
            disk_t: Table::default(),
            disk: List::default(),
        }
    }

    fn occupied_now(&self) -> u64 {
        self.ram.bytes + self.disk.bytes
    }

    fn evict_disk(&mut self, evicted: &mut Vec<u64>) {
        let v = self.disk.tail;
        self.disk.unlink(&mut self.disk_t, v);
        evicted.push(self.disk_t[v].id);
        self.disk_t.remove(v);
    }

    fn evict(&mut self, evicted: &mut Vec<u64>) {
        if self.ram.bytes == 0 {
            self.evict_disk(evicted);
            return;
        }
        let v = self.ram.tail;
        self.ram.unlink(&mut self.ram_t, v);
        let (id, size) = (self.ram_t[v].id, self.ram_t[v].size);
        self.ram_t.remove(v);
        if self.rng.next_u64().is_multiple_of(self.inv_prob) && size <= self.disk_cap {
            // Into the flash: a request to it, which misses there.
            while self.disk.bytes + size > self.disk_cap {
                self.evict_disk(evicted);
            }
            let s = self.disk_t.insert(id, size, 0);
            self.disk.push_head(&mut self.disk_t, s);
        } else {
            evicted.push(id);
        }
    }
}

impl Policy for FlashProb {
    named!("flashprob", cap);
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        if let Some(s) = self.ram_t.find(a.id) {
            self.ram.move_to_head(&mut self.ram_t, s);
            return true;
        }
        if self.disk_t.find(a.id).is_some() {
            return true;
        }
        if a.charge > self.cap {
            return false;
        }
        while self.occupied_now() + a.charge > self.cap && self.occupied_now() > 0 {
            self.evict(evicted);
        }
        let s = self.ram_t.insert(a.id, a.charge, 0);
        self.ram.push_head(&mut self.ram_t, s);
        false
    }
    fn contains(&self, id: u64) -> bool {
        self.ram_t.find(id).is_some() || self.disk_t.find(id).is_some()
    }
    fn occupied(&self) -> u64 {
        self.occupied_now()
    }
    fn len(&self) -> usize {
        self.ram_t.len() + self.disk_t.len()
    }
}
