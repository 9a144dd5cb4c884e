//! Ages: requests by how long since the object's last request and since
//! its first, in windows (libCacheSim's `ProbAtAge`: the chance of a
//! request at an age), and object lifetimes, the time and the requests
//! from an object's first request to its last (libCacheSim's
//! `LifetimeDistribution`).

use rustc_hash::FxHashMap;

/// Ages past this many windows share the last bin (the map is bounded at
/// `MAX_AGE_BINS²/2` cells whatever the clock).
pub const MAX_AGE_BINS: u64 = 4096;

/// Lifetimes are binned by this many time units, and by this many
/// requests (libCacheSim's bins).
pub const LIFETIME_REAL_BIN: u64 = 10;
pub const LIFETIME_VIRTUAL_BIN: u64 = 100;

/// Ages below this many windows are counted in a dense grid (a map
/// beyond): most requests' cost is an array increment.
const DENSE: u64 = 64;

pub(crate) struct Ages {
    window: u64,
    /// (access + 1, create) below [`DENSE`], row-major.
    dense: Vec<u64>,
    cells: FxHashMap<(i64, u64), u64>,
}

impl Ages {
    pub(crate) fn new(window: u64) -> Ages {
        Ages {
            window,
            dense: vec![0; (DENSE * DENSE) as usize],
            cells: FxHashMap::default(),
        }
    }

    /// A request at age `age` (since the object's first request) that
    /// came `since` after its last (`None` for its first).
    #[inline]
    pub(crate) fn add(&mut self, since: Option<u64>, age: u64) {
        let w = self.window;
        // An object's first request is libCacheSim's reuse time -1,
        // divided by the window in C: 0, or -1 when the window is 1.
        let access = match since {
            Some(s) => (s / w).min(MAX_AGE_BINS - 1) as i64,
            None if w == 1 => -1,
            None => 0,
        };
        let create = (age / w).min(MAX_AGE_BINS - 1);
        let a = (access + 1) as u64;
        if a < DENSE && create < DENSE {
            self.dense[(a * DENSE + create) as usize] += 1;
        } else {
            *self.cells.entry((access, create)).or_insert(0) += 1;
        }
    }

    /// (time since the last request, since the first, requests), the ages
    /// in the trace's time (floored to the window), by age.
    pub(crate) fn finish(self) -> Vec<(i64, u64, u64)> {
        let w = self.window;
        let dense = self
            .dense
            .iter()
            .enumerate()
            .filter(|p| *p.1 > 0)
            .map(|(i, &n)| {
                let i = i as u64;
                ((i / DENSE) as i64 - 1, i % DENSE, n)
            });
        let mut v: Vec<(i64, u64, u64)> = self
            .cells
            .into_iter()
            .map(|((a, c), n)| (a, c, n))
            .chain(dense)
            .map(|(a, c, n)| (a.saturating_mul(w as i64), c.saturating_mul(w), n))
            .collect();
        v.sort_unstable();
        v
    }
}

/// (lifetime floored to `bin`, objects), by lifetime.
pub(crate) fn lifetimes(spans: impl Iterator<Item = u64>, bin: u64) -> Vec<(u64, u64)> {
    let mut m: FxHashMap<u64, u64> = FxHashMap::default();
    for s in spans {
        *m.entry(s / bin * bin).or_insert(0) += 1;
    }
    let mut v: Vec<(u64, u64)> = m.into_iter().collect();
    v.sort_unstable();
    v
}
