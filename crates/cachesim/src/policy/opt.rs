//! Belady's OPT (MIN): evicts the cached object whose next request is
//! furthest away. Every request must carry its next-access time (read from
//! the trace, or filled in by [`crate::request::fill_next_access`]).
//! Objects never requested again tie; which of them goes first does not
//! change the miss count.

use std::collections::BTreeSet;

use rustc_hash::FxHashMap;

use super::{Access, Policy};

pub struct Opt {
    cap: u64,
    /// id → (next access, charge).
    objects: FxHashMap<u64, (u64, u64)>,
    by_next: BTreeSet<(u64, u64)>,
    bytes: u64,
}

impl Opt {
    pub fn new(capacity: u64) -> Opt {
        Opt {
            cap: capacity,
            objects: FxHashMap::default(),
            by_next: BTreeSet::new(),
            bytes: 0,
        }
    }
}

impl Policy for Opt {
    named!("opt", cap);
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        if let Some((next, _)) = self.objects.get_mut(&a.id) {
            self.by_next.remove(&(*next, a.id));
            *next = a.next_access;
            self.by_next.insert((a.next_access, a.id));
            return true;
        }
        if a.charge > self.cap {
            return false;
        }
        while self.bytes + a.charge > self.cap {
            let (_, id) = self.by_next.pop_last().expect("a full cache has objects");
            let (_, charge) = self.objects.remove(&id).expect("indexed object");
            self.bytes -= charge;
            evicted.push(id);
        }
        self.objects.insert(a.id, (a.next_access, a.charge));
        self.by_next.insert((a.next_access, a.id));
        self.bytes += a.charge;
        false
    }
    held_in!(map objects, bytes);
}
