//! Exact LRU stack distances kept beside the analyzer's own object
//! records: each object's record holds the stack position of its last
//! request, so a request costs the analysis no map lookup of its own.
//! The positions are handed out here ([`Stack`], on the analysis's
//! thread); the Fenwick tree's walk and the histogram ([`Depths`]) run on
//! a second thread, fed the previous positions in batches, so that the
//! two halves overlap on two cores (inline when no thread can be had).

use std::sync::mpsc::{SyncSender, sync_channel};
use std::thread::JoinHandle;

use tramp_cachesim::mrc::{Fenwick, live_ids};

/// An object's first request, in the stream of previous positions.
const FIRST: u32 = u32::MAX;
/// The stack was compacted before the next request.
const COMPACT: u32 = u32::MAX - 1;
/// Previous positions sent at a time.
const BATCH: usize = 1 << 14;

/// The first room a stack has for positions.
const START: usize = 1024;

/// The room a compacted stack of `live` objects gets.
fn room(live: usize) -> usize {
    (live * 2).max(START)
}

/// The depth half: a mark at each object's last request.
pub(crate) struct Depths {
    fenwick: Fenwick,
    next: usize,
    live: u64,
    /// Requests by distance (index), and first requests.
    hist: Vec<u64>,
    cold: u64,
}

impl Depths {
    fn new() -> Depths {
        Depths {
            fenwick: Fenwick::new(START),
            next: 0,
            live: 0,
            hist: Vec::new(),
            cold: 0,
        }
    }

    /// One request whose object's last was at `prev` ([`FIRST`] for
    /// none), or the compaction mark.
    #[inline]
    fn step(&mut self, prev: u32) {
        if prev == COMPACT {
            // The live objects were renumbered 0..live in order.
            let live = self.live as usize;
            self.fenwick = Fenwick::build(&vec![1; live], room(live));
            self.next = live;
            return;
        }
        if prev == FIRST {
            self.cold += 1;
            self.live += 1;
        } else {
            let p = prev as usize;
            let depth = (self.live - self.fenwick.prefix(p)) as usize;
            if depth >= self.hist.len() {
                self.hist.resize(depth + 1, 0);
            }
            self.hist[depth] += 1;
            self.fenwick.add(p, -1);
        }
        self.fenwick.add(self.next, 1);
        self.next += 1;
    }

    /// (distance, requests) by distance, and the first requests.
    fn depths(&self) -> (Vec<(u64, u64)>, u64) {
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

enum Half {
    Inline(Depths),
    Threaded {
        tx: SyncSender<Vec<u32>>,
        batch: Vec<u32>,
        worker: JoinHandle<Depths>,
    },
}

/// The position half: which object is at each position.
pub(crate) struct Stack {
    /// The object at each position (`u64::MAX`: none any more).
    ids: Vec<u64>,
    next: usize,
    depths: Half,
}

impl Stack {
    pub(crate) fn new() -> Stack {
        let (tx, rx) = sync_channel::<Vec<u32>>(8);
        let spawned = std::thread::Builder::new()
            .name("stack-distances".into())
            .spawn(move || {
                let mut d = Depths::new();
                for batch in rx {
                    for prev in batch {
                        d.step(prev);
                    }
                }
                d
            });
        let depths = match spawned {
            Ok(worker) => Half::Threaded {
                tx,
                batch: Vec::with_capacity(BATCH),
                worker,
            },
            Err(_) => Half::Inline(Depths::new()),
        };
        Stack {
            ids: vec![u64::MAX; START],
            next: 0,
            depths,
        }
    }

    #[inline]
    fn send(&mut self, prev: u32) {
        match &mut self.depths {
            Half::Inline(d) => d.step(prev),
            Half::Threaded { tx, batch, .. } => {
                batch.push(prev);
                if batch.len() == BATCH {
                    let full = std::mem::replace(batch, Vec::with_capacity(BATCH));
                    // A send fails only when the worker panicked: finish
                    // re-raises it.
                    let _ = tx.send(full);
                }
            }
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
        for (i, &id) in live.iter().enumerate() {
            renumber(id, i as u32);
        }
        self.next = live.len();
        self.ids = live;
        self.ids.resize(room(self.next), u64::MAX);
        self.send(COMPACT);
    }

    /// A request to `id`, last requested at position `prev` (`None`: its
    /// first): its distance is counted, and its new position returned.
    #[inline]
    pub(crate) fn access(&mut self, id: u64, prev: Option<u32>) -> u32 {
        let pos = self.next;
        self.next += 1;
        match prev {
            Some(p) => {
                self.ids[p as usize] = u64::MAX;
                self.send(p);
            }
            None => self.send(FIRST),
        }
        self.ids[pos] = id;
        pos as u32
    }

    /// (distance, requests) by distance, and the first requests.
    pub(crate) fn depths(self) -> (Vec<(u64, u64)>, u64) {
        match self.depths {
            Half::Inline(d) => d.depths(),
            Half::Threaded { tx, batch, worker } => {
                let _ = tx.send(batch);
                drop(tx);
                match worker.join() {
                    Ok(d) => d.depths(),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
        }
    }
}
