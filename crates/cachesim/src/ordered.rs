//! An ordered hash table for the policies that only ever evict their
//! oldest entry (LRU, FIFO): entries live in the table's own buckets (open
//! addressing, linear probing, deletion by backward shift, so no
//! tombstones), threaded on one doubly-linked list by bucket number. Head =
//! most recently linked.
//!
//! Against the slab-and-hash-map storage of [`crate::list`] a request
//! touches about half as many cache lines: finding an entry finds its links
//! and charge in the same bucket, and a miss inserts where its lookup
//! stopped. The price is that entries move when a neighbour is deleted
//! (their list neighbours are repointed), so a policy may not hold a bucket
//! number across a removal — which LRU and FIFO never do.

/// The end of the list, and the `prev` of an unused bucket (told apart by
/// [`EMPTY`] in `next`).
const NIL: u32 = u32::MAX;
/// `next` of an unused bucket.
const EMPTY: u32 = u32::MAX - 1;
/// The dirty bit, kept in the top bit of an entry's charge.
const DIRTY: u64 = 1 << 63;

/// [`DIRTY`] when `dirty`, else 0 (no branch).
#[inline]
fn dirty_bit(dirty: bool) -> u64 {
    (dirty as u64) << 63
}

#[derive(Clone, Copy)]
struct Bucket {
    id: u64,
    /// Charge against capacity, with [`DIRTY`].
    size: u64,
    prev: u32,
    next: u32,
}

const UNUSED: Bucket = Bucket {
    id: 0,
    size: 0,
    prev: NIL,
    next: EMPTY,
};

/// Where a lookup ended.
pub(crate) enum Probe {
    /// The entry's bucket.
    Found(u32),
    /// Not there.
    Vacant,
}

/// The table with its recency list, capacity and write-back count.
pub(crate) struct Ordered {
    pub cap: u64,
    buckets: Vec<Bucket>,
    /// `buckets.len() - 1` (a power of two less one).
    mask: usize,
    /// 64 − log2(buckets).
    shift: u32,
    head: u32,
    tail: u32,
    len: usize,
    bytes: u64,
    /// Dirty entries evicted.
    pub write_backs: u64,
}

impl Ordered {
    pub fn new(cap: u64) -> Ordered {
        // A load of at most 1/16 for `cap` objects of charge 1, up to 128
        // Ki buckets (3 MiB); larger caches and caches by bytes grow as they
        // fill, keeping the load at most 1/4. Linear probing at such loads
        // rarely probes twice, and every extra probe is a mispredicted
        // branch: on Figure 8's trace (2048 objects) a load of 1/2 ran 1.5×
        // slower than 1/16.
        let want = (cap.max(1) as usize).saturating_mul(16).min(1 << 17);
        Ordered::with_buckets(cap, want.next_power_of_two())
    }

    fn with_buckets(cap: u64, n: usize) -> Ordered {
        Ordered {
            cap,
            buckets: vec![UNUSED; n],
            mask: n - 1,
            shift: 64 - n.trailing_zeros(),
            head: NIL,
            tail: NIL,
            len: 0,
            bytes: 0,
            write_backs: 0,
        }
    }

    #[inline]
    fn home(&self, id: u64) -> usize {
        // Fibonacci hashing: the top bits of a multiplication by 2^64/φ.
        tramp_core::rng::fibonacci(id, 64 - self.shift) as usize
    }

    #[inline]
    pub fn find(&self, id: u64) -> Probe {
        let mut i = self.home(id);
        loop {
            let b = &self.buckets[i];
            if b.next == EMPTY {
                return Probe::Vacant;
            }
            if b.id == id {
                return Probe::Found(i as u32);
            }
            i = (i + 1) & self.mask;
        }
    }

    pub fn contains(&self, id: u64) -> bool {
        matches!(self.find(id), Probe::Found(_))
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn occupied(&self) -> u64 {
        self.bytes
    }

    /// Marks the entry in `slot` dirty when `write`.
    #[inline]
    pub fn mark(&mut self, slot: u32, write: bool) {
        self.buckets[slot as usize].size |= dirty_bit(write);
    }

    /// Cached objects written since they were admitted.
    pub fn dirty_len(&self) -> usize {
        self.buckets
            .iter()
            .filter(|b| b.next != EMPTY && b.size & DIRTY != 0)
            .count()
    }

    #[inline]
    fn unlink(&mut self, s: u32) {
        let Bucket { prev, next, .. } = self.buckets[s as usize];
        match prev {
            NIL => self.head = next,
            p => self.buckets[p as usize].next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => self.buckets[n as usize].prev = prev,
        }
    }

    #[inline]
    fn push_head(&mut self, s: u32) {
        let head = self.head;
        let b = &mut self.buckets[s as usize];
        b.prev = NIL;
        b.next = head;
        match head {
            NIL => self.tail = s,
            h => self.buckets[h as usize].prev = s,
        }
        self.head = s;
    }

    /// Moves the entry in `slot` to the head.
    #[inline]
    pub fn move_to_head(&mut self, slot: u32) {
        if self.head != slot {
            self.unlink(slot);
            self.push_head(slot);
        }
    }

    /// Admits `id` (which must be absent) at the head: nothing if its charge
    /// exceeds the whole capacity (false), else first evicts from the tail
    /// while room is short, pushing the evicted ids to `evicted`.
    #[inline]
    pub fn admit(&mut self, id: u64, charge: u64, dirty: bool, evicted: &mut Vec<u64>) -> bool {
        if charge > self.cap {
            return false;
        }
        while self.bytes + charge > self.cap {
            let id = self.remove_tail();
            evicted.push(id);
        }
        if (self.len + 1) * 4 > self.buckets.len() {
            self.grow();
        }
        let mut i = self.home(id);
        while self.buckets[i].next != EMPTY {
            i = (i + 1) & self.mask;
        }
        self.buckets[i] = Bucket {
            id,
            size: charge | dirty_bit(dirty),
            prev: NIL,
            next: NIL,
        };
        self.push_head(i as u32);
        self.len += 1;
        self.bytes += charge;
        true
    }

    /// Evicts the tail entry; returns its id.
    fn remove_tail(&mut self) -> u64 {
        let s = self.tail;
        let b = self.buckets[s as usize];
        self.write_backs += (b.size & DIRTY != 0) as u64;
        self.bytes -= b.size & !DIRTY;
        self.len -= 1;
        self.unlink(s);
        self.delete(s as usize);
        b.id
    }

    /// Empties bucket `hole` (already unlinked), moving later entries of its
    /// run back so that every entry stays reachable from its home bucket.
    fn delete(&mut self, mut hole: usize) {
        let mut j = hole;
        loop {
            j = (j + 1) & self.mask;
            let b = self.buckets[j];
            if b.next == EMPTY {
                break;
            }
            let home = self.home(b.id);
            // The entry may move to the hole if its home is not cyclically
            // within (hole, j].
            if (j.wrapping_sub(home) & self.mask) >= (j.wrapping_sub(hole) & self.mask) {
                self.buckets[hole] = b;
                self.repoint(b, hole as u32);
                hole = j;
            }
        }
        self.buckets[hole] = UNUSED;
    }

    /// Points the list neighbours of `b` (now in bucket `to`) at it.
    #[inline]
    fn repoint(&mut self, b: Bucket, to: u32) {
        match b.prev {
            NIL => self.head = to,
            p => self.buckets[p as usize].next = to,
        }
        match b.next {
            NIL => self.tail = to,
            n => self.buckets[n as usize].prev = to,
        }
    }

    /// Doubles the buckets, keeping the list's order.
    fn grow(&mut self) {
        let mut bigger = Ordered::with_buckets(self.cap, self.buckets.len() * 2);
        bigger.write_backs = self.write_backs;
        let mut s = self.tail;
        let mut unused = Vec::new();
        while s != NIL {
            let b = self.buckets[s as usize];
            let dirty = b.size & DIRTY != 0;
            bigger.admit(b.id, b.size & !DIRTY, dirty, &mut unused);
            s = b.prev;
        }
        debug_assert!(unused.is_empty());
        *self = bigger;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    /// The table's list from head to tail as (id, charge, dirty), checking
    /// every entry is found where it is and the counts agree.
    fn walk(t: &Ordered) -> Vec<(u64, u64, bool)> {
        let mut out = Vec::new();
        let mut s = t.head;
        let mut prev = NIL;
        while s != NIL {
            let b = t.buckets[s as usize];
            assert_eq!(b.prev, prev, "back link");
            assert!(matches!(t.find(b.id), Probe::Found(x) if x == s));
            out.push((b.id, b.size & !DIRTY, b.size & DIRTY != 0));
            prev = s;
            s = b.next;
        }
        assert_eq!(t.tail, prev);
        assert_eq!(out.len(), t.len);
        assert_eq!(out.iter().map(|e| e.1).sum::<u64>(), t.bytes);
        out
    }

    proptest! {
        /// LRU over the table against LRU over a deque, with small tables
        /// (growth, wrap-around runs) and colliding ids.
        #[test]
        fn lru_matches_a_deque(
            reqs in proptest::collection::vec((0u64..64, any::<bool>(), 1u64..6), 0..500),
            cap in 1u64..40,
            spread in prop_oneof![Just(1u64), Just(1 << 58)],
        ) {
            let mut t = Ordered::with_buckets(cap, 2);
            let mut model: VecDeque<(u64, u64, bool)> = VecDeque::new();
            let mut model_wb = 0;
            for &(k, write, charge) in &reqs {
                let id = k.wrapping_mul(spread);
                let mut evicted = Vec::new();
                let hit = match t.find(id) {
                    Probe::Found(s) => {
                        t.move_to_head(s);
                        t.mark(s, write);
                        true
                    }
                    Probe::Vacant => {
                        t.admit(id, charge, write, &mut evicted);
                        false
                    }
                };
                let mut want_evicted = Vec::new();
                let want_hit = match model.iter().position(|e| e.0 == id) {
                    Some(p) => {
                        let mut e = model.remove(p).unwrap();
                        e.2 |= write;
                        model.push_front(e);
                        true
                    }
                    None => {
                        if charge <= cap {
                            while model.iter().map(|e| e.1).sum::<u64>() + charge > cap {
                                let e = model.pop_back().unwrap();
                                model_wb += e.2 as u64;
                                want_evicted.push(e.0);
                            }
                            model.push_front((id, charge, write));
                        }
                        false
                    }
                };
                prop_assert_eq!(hit, want_hit);
                prop_assert_eq!(&evicted, &want_evicted);
                prop_assert_eq!(walk(&t), model.iter().copied().collect::<Vec<_>>());
                prop_assert_eq!(t.write_backs, model_wb);
                prop_assert_eq!(t.dirty_len(), model.iter().filter(|e| e.2).count());
            }
        }
    }
}
