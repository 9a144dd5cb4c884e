//! Size as libCacheSim 0.3.5 defines it: evict the largest object. A heap
//! by size ([`PQueue`], libCacheSim's own mechanics, which decide among
//! equal sizes); a hit sets the object's priority to the request's size
//! again.

use rustc_hash::FxHashMap;

use super::pqueue::PQueue;
use super::{Access, Policy};

pub struct Size {
    cap: u64,
    occupied: u64,
    /// Per cached id: its heap handle and charge.
    map: FxHashMap<u64, (u32, u64)>,
    pq: PQueue,
}

impl Size {
    pub fn new(capacity: u64) -> Size {
        Size {
            cap: capacity,
            occupied: 0,
            map: FxHashMap::default(),
            pq: PQueue::new(),
        }
    }
}

impl Policy for Size {
    named!("size", cap);
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        if let Some(&(h, _)) = self.map.get(&a.id) {
            self.pq.change(h, a.charge as f64);
            return true;
        }
        if a.charge > self.cap {
            return false;
        }
        while self.occupied + a.charge > self.cap {
            let Some(id) = self.pq.pop() else { break };
            if let Some((_, c)) = self.map.remove(&id) {
                self.occupied -= c;
            }
            evicted.push(id);
        }
        let h = self.pq.insert(a.id, a.charge as f64);
        self.map.insert(a.id, (h, a.charge));
        self.occupied += a.charge;
        false
    }
    held_in!(map map, occupied);
}
