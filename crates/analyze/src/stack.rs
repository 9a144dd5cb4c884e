//! Exact LRU stack distances kept beside the analyzer's own object
//! records: each object's record holds the stack position of its last
//! request, so a request costs the one map lookup the analysis makes
//! anyway, a Fenwick tree's walk, and a dense histogram's increment.

use tramp_cachesim::mrc::{Fenwick, live_ids};

/// The stack: a mark at each object's last request, by position.
pub(crate) struct Stack {
    /// The object at each position (`u64::MAX`: none any more).
    ids: Vec<u64>,
    fenwick: Fenwick,
    next: usize,
    /// Marks set: the objects seen.
    live: u64,
    /// Requests by distance (index), and first requests.
    hist: Vec<u64>,
    cold: u64,
}

impl Stack {
    pub(crate) fn new() -> Stack {
        let cap = 1024;
        Stack {
            ids: vec![u64::MAX; cap],
            fenwick: Fenwick::new(cap),
            next: 0,
            live: 0,
            hist: Vec::new(),
            cold: 0,
        }
    }

    /// Whether the next request needs [`Stack::compact`] first.
    #[inline]
    pub(crate) fn full(&self) -> bool {
        self.next == self.ids.len()
    }

    /// The live objects in position order, renumbered 0..k by `renumber`
    /// (which stores each object's new position in its record), with
    /// room for as many again.
    pub(crate) fn compact(&mut self, mut renumber: impl FnMut(u64, u32)) {
        let live = live_ids(&self.ids[..self.next]);
        let cap = (live.len() * 2).max(1024);
        for (i, &id) in live.iter().enumerate() {
            renumber(id, i as u32);
        }
        self.fenwick = Fenwick::build(&vec![1; live.len()], cap);
        self.next = live.len();
        self.ids = live;
        self.ids.resize(cap, u64::MAX);
    }

    /// A request to `id`, last requested at position `prev` (`None`: its
    /// first): counts its distance, and returns its new position.
    #[inline]
    pub(crate) fn access(&mut self, id: u64, prev: Option<u32>) -> u32 {
        let pos = self.next;
        self.next += 1;
        match prev {
            Some(p) => {
                let p = p as usize;
                let depth = (self.live - self.fenwick.prefix(p)) as usize;
                if depth >= self.hist.len() {
                    self.hist.resize(depth + 1, 0);
                }
                self.hist[depth] += 1;
                self.fenwick.add(p, -1);
                self.ids[p] = u64::MAX;
            }
            None => {
                self.cold += 1;
                self.live += 1;
            }
        }
        self.fenwick.add(pos, 1);
        self.ids[pos] = id;
        pos as u32
    }

    /// (distance, requests) by distance, and the first requests.
    pub(crate) fn depths(&self) -> (Vec<(u64, u64)>, u64) {
        let d = self
            .hist
            .iter()
            .enumerate()
            .filter(|p| *p.1 > 0)
            .map(|(d, &n)| (d as u64, n))
            .collect();
        (d, self.cold)
    }
}
