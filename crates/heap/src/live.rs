//! The live-object map: which heap objects are alive, keyed by their start
//! address, each with its size and what the map's user keeps for it; with
//! an optional interval index that answers "which object contains this
//! address?" (for loads and stores).
//!
//! Heap statistics, allocator replay and the object-graph view keep their
//! live objects here. What each keeps per object is its own choice, so
//! that the common case stays small: statistics keep nothing (16 bytes
//! per object, as a plain address → size table), replay a slot number,
//! and views an [`Identity`] (id, allocation site, birth) given out by
//! [`LiveObjects::insert_identified`]. Without the interval index only
//! exact start addresses are looked up, which is all the statistics need
//! and keeps them fast.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

/// One live object: where it starts, its size, and what the user keeps
/// (owned when the map gives it up, borrowed on lookups).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Object<T = ()> {
    /// Start address.
    pub address: u64,
    pub size: u64,
    /// What the map's user keeps per object.
    pub extra: T,
}

impl<T> Object<T> {
    /// The first address past the object (a zero-sized object covers its
    /// start address, so that pointers to it resolve).
    pub fn end(&self) -> u64 {
        end(self.address, self.size)
    }
}

fn end(address: u64, size: u64) -> u64 {
    address.saturating_add(size.max(1))
}

/// Who an object is, for views that follow objects: a unique id (numbered
/// from 1 in order of birth, per map), the allocation site (0 when the
/// trace has none) and the time of birth (the trace's time, or a record
/// number).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Identity {
    pub id: u64,
    pub site: u64,
    pub birth: u64,
}

/// What the map stores per start address.
#[derive(Clone, Debug)]
struct Slot<T> {
    size: u64,
    extra: T,
}

/// Live objects by address.
#[derive(Clone, Debug)]
pub struct LiveObjects<T = ()> {
    by_start: FxHashMap<u64, Slot<T>>,
    /// Start → end of every live object, when containment is asked.
    intervals: Option<BTreeMap<u64, u64>>,
    next_id: u64,
    /// Wide enough that no sum of 64-bit sizes wraps.
    live_bytes: u128,
    /// The lowest start and highest end any object ever had: an address
    /// outside them (the stack, most globals) is answered without a search.
    bounds: (u64, u64),
    /// The object `find` found last, as (start, end); (0, 0) when unknown.
    /// Consecutive accesses are mostly to the same object. Not used once a
    /// resize made objects overlap (a trace that grows a block in place over
    /// another): `find` then answers from the index alone.
    last: std::cell::Cell<(u64, u64)>,
    overlapping: bool,
}

impl<T> Default for LiveObjects<T> {
    fn default() -> Self {
        LiveObjects {
            by_start: FxHashMap::default(),
            intervals: None,
            next_id: 1,
            live_bytes: 0,
            bounds: (u64::MAX, 0),
            last: std::cell::Cell::new((0, 0)),
            overlapping: false,
        }
    }
}

impl<T> LiveObjects<T> {
    /// A map looked up by start address only.
    pub fn new() -> Self {
        Self::default()
    }

    /// A map that also finds the object containing any address
    /// ([`LiveObjects::find`]) and evicts objects a new one overlaps.
    pub fn with_intervals() -> Self {
        LiveObjects {
            intervals: Some(BTreeMap::new()),
            ..Self::default()
        }
    }

    /// Objects alive.
    pub fn len(&self) -> usize {
        self.by_start.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_start.is_empty()
    }

    /// Bytes of the objects alive.
    pub fn live_bytes(&self) -> u64 {
        u64::try_from(self.live_bytes).unwrap_or(u64::MAX)
    }

    /// Adds an object and returns the objects it displaced: one at the same
    /// start address (the trace missed its free) and, with the interval
    /// index, every object it overlaps.
    #[inline]
    pub fn insert(&mut self, address: u64, size: u64, extra: T) -> Vec<Object<T>> {
        let mut evicted = Vec::new();
        if self.intervals.is_some() {
            self.evict_overlapped(address, size, &mut evicted);
        }
        self.live_bytes += u128::from(size);
        // One hash lookup: an object at the same start is displaced here
        // (without the interval index; with it, it was evicted above).
        if let Some(old) = self.by_start.insert(address, Slot { size, extra }) {
            self.live_bytes -= u128::from(old.size);
            evicted.push(Object {
                address,
                size: old.size,
                extra: old.extra,
            });
        }
        if let Some(iv) = &mut self.intervals {
            let end = end(address, size);
            iv.insert(address, end);
            self.bounds = (self.bounds.0.min(address), self.bounds.1.max(end));
            self.last.set((0, 0));
        }
        evicted
    }

    /// With the interval index: removes into `evicted` the objects a new
    /// one at `address` of `size` bytes overlaps.
    #[cold]
    fn evict_overlapped(&mut self, address: u64, size: u64, evicted: &mut Vec<Object<T>>) {
        let Some(iv) = &self.intervals else { return };
        let end = end(address, size);
        // Live intervals never overlap, so the objects a new one overlaps
        // are the last that starts before it (if it reaches in) and those
        // that start inside it (one at the same start included).
        let mut hit: Vec<u64> = iv
            .range(..address)
            .next_back()
            .filter(|(_, e)| **e > address)
            .map(|(s, _)| *s)
            .into_iter()
            .collect();
        hit.extend(iv.range(address..end).map(|(s, _)| *s));
        for s in hit {
            evicted.extend(self.remove(s));
        }
    }

    /// Removes the object that starts at `address`.
    #[inline]
    pub fn remove(&mut self, address: u64) -> Option<Object<T>> {
        let slot = self.by_start.remove(&address)?;
        self.live_bytes -= u128::from(slot.size);
        if self.intervals.is_some() {
            self.unindex(address);
        }
        Some(Object {
            address,
            size: slot.size,
            extra: slot.extra,
        })
    }

    #[cold]
    fn unindex(&mut self, address: u64) {
        if let Some(iv) = &mut self.intervals {
            iv.remove(&address);
            self.last.set((0, 0));
        }
    }

    /// The object that starts at `address`.
    #[inline]
    pub fn get(&self, address: u64) -> Option<Object<&T>> {
        self.by_start.get(&address).map(|s| Object {
            address,
            size: s.size,
            extra: &s.extra,
        })
    }

    /// Whether an object starts at `address`.
    #[inline]
    pub fn contains(&self, address: u64) -> bool {
        self.by_start.contains_key(&address)
    }

    /// The object that starts at `address`, to change what the user keeps.
    pub fn extra_mut(&mut self, address: u64) -> Option<&mut T> {
        self.by_start.get_mut(&address).map(|o| &mut o.extra)
    }

    /// Changes the size of the object at `address` (an in-place realloc);
    /// returns its old size.
    pub fn resize(&mut self, address: u64, size: u64) -> Option<u64> {
        let slot = self.by_start.get_mut(&address)?;
        let old = slot.size;
        slot.size = size;
        self.live_bytes = self.live_bytes - u128::from(old) + u128::from(size);
        if let Some(iv) = &mut self.intervals {
            let e = end(address, size);
            iv.insert(address, e);
            if iv.range(address + 1..e).next().is_some() {
                self.overlapping = true;
            }
            self.bounds.1 = self.bounds.1.max(e);
            self.last.set((0, 0));
        }
        Some(old)
    }

    /// The object containing `address` (needs the interval index; without
    /// it only start addresses are found).
    pub fn find(&self, address: u64) -> Option<Object<&T>> {
        match &self.intervals {
            Some(iv) => {
                if address < self.bounds.0 || address >= self.bounds.1 {
                    return None;
                }
                let (s, e) = self.last.get();
                if s <= address && address < e && !self.overlapping {
                    return self.get(s);
                }
                let (start, end) = iv.range(..=address).next_back()?;
                if address < *end {
                    self.last.set((*start, *end));
                    self.get(*start)
                } else {
                    None
                }
            }
            None => self.get(address),
        }
    }

    /// Every live object, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = Object<&T>> {
        self.by_start.iter().map(|(a, s)| Object {
            address: *a,
            size: s.size,
            extra: &s.extra,
        })
    }
}

impl LiveObjects<Identity> {
    /// Adds an object with the next id; returns the id and the objects it
    /// displaced (see [`LiveObjects::insert`]).
    pub fn insert_identified(
        &mut self,
        address: u64,
        size: u64,
        site: u64,
        birth: u64,
    ) -> (u64, Vec<Object<Identity>>) {
        let id = self.next_id;
        self.next_id += 1;
        let evicted = self.insert(address, size, Identity { id, site, birth });
        (id, evicted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_lookups_without_the_index() {
        let mut m = LiveObjects::<Identity>::new();
        let (a, ev) = m.insert_identified(100, 16, 7, 1);
        assert!(ev.is_empty());
        assert_eq!(
            m.get(100).map(|o| *o.extra),
            Some(Identity {
                id: a,
                site: 7,
                birth: 1
            })
        );
        assert_eq!(m.find(104), None, "containment needs the index");
        assert_eq!((m.len(), m.live_bytes()), (1, 16));
        // Same start again: the old object is displaced (its free was lost).
        let (b, ev) = m.insert_identified(100, 32, 0, 2);
        assert_eq!(ev.iter().map(|o| o.extra.id).collect::<Vec<_>>(), vec![a]);
        assert_eq!(ev[0].size, 16);
        assert_ne!(a, b);
        assert_eq!((m.len(), m.live_bytes()), (1, 32));
        assert_eq!(m.remove(100).map(|o| o.extra.id), Some(b));
        assert_eq!(m.remove(100), None, "a free of an unknown address");
        assert_eq!((m.len(), m.live_bytes()), (0, 0));
    }

    #[test]
    fn intervals_find_containing_objects_and_evict_overlaps() {
        let mut m = LiveObjects::<Identity>::with_intervals();
        let (a, _) = m.insert_identified(0x1000, 0x100, 0, 0);
        let (b, _) = m.insert_identified(0x2000, 0x10, 0, 0);
        let (z, _) = m.insert_identified(0x3000, 0, 0, 0);
        let id = |o: Option<Object<&Identity>>| o.map(|o| o.extra.id);
        assert_eq!(id(m.find(0x1000)), Some(a));
        assert_eq!(id(m.find(0x10ff)), Some(a));
        assert_eq!(m.find(0x10ff).map(|o| o.address), Some(0x1000));
        assert_eq!(m.find(0x1100), None);
        assert_eq!(m.find(0x0fff), None);
        assert_eq!(id(m.find(0x200f)), Some(b));
        assert_eq!(
            id(m.find(0x3000)),
            Some(z),
            "zero-sized objects cover their start"
        );
        // An object across the end of `a` and the start of `b` evicts both.
        let (c, ev) = m.insert_identified(0x10f0, 0xf20, 0, 0);
        let mut gone: Vec<u64> = ev.iter().map(|o| o.extra.id).collect();
        gone.sort();
        assert_eq!(gone, vec![a, b]);
        assert_eq!(m.find(0x1000), None);
        assert_eq!(id(m.find(0x2000)), Some(c));
        assert_eq!(m.len(), 2);
        assert_eq!(m.live_bytes(), 0xf20);
    }

    #[test]
    fn resize_moves_the_end() {
        let mut m = LiveObjects::<u32>::with_intervals();
        assert!(m.insert(0x1000, 8, 5).is_empty());
        assert_eq!(m.find(0x1010), None);
        assert_eq!(m.resize(0x1000, 0x20), Some(8));
        assert_eq!(
            m.find(0x1010).map(|o| (o.address, o.size)),
            Some((0x1000, 0x20))
        );
        assert_eq!(m.live_bytes(), 0x20);
        // A realloc that moved: the old block is freed, the new allocated.
        let old = m.remove(0x1000).unwrap();
        assert!(m.insert(0x5000, 0x40, old.extra).is_empty());
        assert_eq!(m.find(0x1010), None);
        assert_eq!(m.find(0x5004).map(|o| *o.extra), Some(5));
        assert_eq!(m.resize(0x9999, 1), None);
        *m.extra_mut(0x5000).unwrap() = 6;
        assert_eq!(m.get(0x5000).map(|o| *o.extra), Some(6));
        let all: Vec<(u64, u64, u32)> = m.iter().map(|o| (o.address, o.size, *o.extra)).collect();
        assert_eq!(all, vec![(0x5000, 0x40, 6)]);
    }

    proptest::proptest! {
        /// Containment through the interval index (with its bounds and
        /// last-found shortcut) agrees with a scan of the live objects,
        /// whatever inserts (overlapping ones evict), removals and resizes
        /// come before.
        #[test]
        fn find_agrees_with_a_scan(ops in proptest::collection::vec((0u8..4, 0u64..64, 0u64..12), 0..300)) {
            let mut m = LiveObjects::<Identity>::with_intervals();
            let mut model: Vec<(u64, u64, u64)> = Vec::new(); // start, end, id
            for (op, a, n) in ops {
                let addr = 0x1000 + a * 4;
                match op {
                    0 => {
                        let (id, _) = m.insert_identified(addr, n, 0, 0);
                        let e = end(addr, n);
                        model.retain(|&(s, me, _)| me <= addr || s >= e);
                        model.push((addr, e, id));
                    }
                    1 => {
                        m.remove(addr);
                        model.retain(|&(s, _, _)| s != addr);
                    }
                    // Resizes that would run into another object are not
                    // made (realloc in place grows only into free memory).
                    2 if !model
                        .iter()
                        .any(|o| o.0 > addr && o.0 < end(addr, n))
                        && m.resize(addr, n).is_some() => {
                        for o in model.iter_mut().filter(|o| o.0 == addr) {
                            o.1 = end(addr, n);
                        }
                    }
                    _ => {}
                }
                for probe in [addr, addr + 1, addr + 5, 0x0fff, 0x1000 + 70 * 4] {
                    // The object with the greatest start at or below the
                    // probe, if it reaches it (what the index answers, also
                    // when a resize made objects overlap).
                    let want = model
                        .iter()
                        .filter(|o| o.0 <= probe)
                        .max_by_key(|o| o.0)
                        .filter(|o| probe < o.1)
                        .map(|o| o.2);
                    proptest::prop_assert_eq!(m.find(probe).map(|o| o.extra.id), want);
                }
            }
        }
    }
}
