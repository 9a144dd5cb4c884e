//! What each allocation site did over the trace's time: per slice, the
//! blocks it allocated (and their bytes, in-place growth included) and
//! the blocks of it freed (and their bytes, in-place shrinking included),
//! so that a report can answer for any range of slices "what was made in
//! it" (sums over the range) and "what was live at its end" (allocated
//! minus freed, summed up to the range's end). The grid is the heap
//! timeline's (`tramp_heap::timeline`, 512 slices) eight slices at a time:
//! the same first time and the same doublings, so a range of grid slices
//! is a range of timeline slices. Sparse: a site holds an entry only for
//! the slices it was active in, at most [`GRID`]. [`entry`] is the one
//! insertion into a site row's sparse vectors (slices, threads, buckets).

use serde::{Deserialize, Serialize};

/// Grid slices.
pub const GRID: usize = 64;
/// Timeline slices per grid slice (the index's timeline has 512).
pub const PER_SLICE: u64 = 8;

/// One site's activity in grid slice `.0`: allocations, bytes allocated,
/// frees, bytes freed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SliceCounts(pub u32, pub u64, pub u64, pub u64, pub u64);

/// The grid's first time and slice width (the trace's time unit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grid {
    pub t0: u64,
    pub width: u64,
}

/// The grid while the trace is read.
#[derive(Clone, Copy, Debug, Default)]
pub struct Growing {
    t0: Option<u64>,
    /// The timeline's slice width (the grid's is [`PER_SLICE`] of them).
    fine: u64,
}

impl Growing {
    /// The grid slice of time `t`, and how many times the grid doubled
    /// its width to hold it (each doubling merges slices in pairs: the
    /// caller halves its slice numbers as many times). The timeline's rule:
    /// a slice past the last doubles every width.
    #[inline]
    pub fn at(&mut self, t: u64) -> (u32, u32) {
        let t0 = *self.t0.get_or_insert(t);
        if self.fine == 0 {
            self.fine = 1;
        }
        let cap = GRID as u64 * PER_SLICE;
        let d = t.saturating_sub(t0);
        let mut doubled = 0;
        while d / self.fine >= cap {
            self.fine = self.fine.saturating_mul(2);
            doubled += 1;
        }
        ((d / self.fine / PER_SLICE) as u32, doubled)
    }

    /// The grid, once a time was seen.
    pub fn grid(&self) -> Option<Grid> {
        let t0 = self.t0?;
        Some(Grid {
            t0,
            width: self.fine.max(1).saturating_mul(PER_SLICE),
        })
    }
}

/// The entry of key `k` in `v`, a site row's sparse vector sorted by key
/// (its slices, its threads, its size and lifetime buckets), made by
/// `new` where there is none; and whether it was made. The usual case, the
/// last entry or one past it, is one comparison.
#[inline]
pub fn entry<T, K: Ord + Copy>(
    v: &mut Vec<T>,
    k: K,
    key: impl Fn(&T) -> K,
    new: impl FnOnce() -> T,
) -> (&mut T, bool) {
    let (i, made) = match v.last().map(&key) {
        Some(l) if l == k => (v.len() - 1, false),
        Some(l) if l > k => match v.binary_search_by_key(&k, &key) {
            Ok(i) => (i, false),
            Err(i) => {
                v.insert(i, new());
                (i, true)
            }
        },
        _ => {
            v.push(new());
            (v.len() - 1, true)
        }
    };
    (&mut v[i], made)
}

/// Adds `c` to slice `at` of `slices` (an earlier slice than the last: a
/// late event, or a free of an old block).
#[inline]
pub fn add(slices: &mut Vec<SliceCounts>, at: u32, c: [u64; 4]) {
    let (s, _) = entry(slices, at, |s| s.0, || SliceCounts(at, 0, 0, 0, 0));
    s.1 = s.1.saturating_add(c[0]);
    s.2 = s.2.saturating_add(c[1]);
    s.3 = s.3.saturating_add(c[2]);
    s.4 = s.4.saturating_add(c[3]);
}

/// Halves every slice number `times` times, merging the slices that meet.
pub fn halve(slices: &mut Vec<SliceCounts>, times: u32) {
    if times == 0 || slices.is_empty() {
        return;
    }
    let mut out: Vec<SliceCounts> = Vec::with_capacity(slices.len());
    for s in slices.iter() {
        let at = s.0.checked_shr(times).unwrap_or(0);
        match out.last_mut() {
            Some(l) if l.0 == at => {
                l.1 = l.1.saturating_add(s.1);
                l.2 = l.2.saturating_add(s.2);
                l.3 = l.3.saturating_add(s.3);
                l.4 = l.4.saturating_add(s.4);
            }
            _ => out.push(SliceCounts(at, s.1, s.2, s.3, s.4)),
        }
    }
    *slices = out;
}

/// Adds `b`'s slices into `a` (both sorted).
pub fn merge(a: &mut Vec<SliceCounts>, b: &[SliceCounts]) {
    for s in b {
        add(a, s.0, [s.1, s.2, s.3, s.4]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_doubles_as_the_timeline_does_and_slices_merge() {
        let mut g = Growing::default();
        assert_eq!(g.at(1000), (0, 0));
        // 512 timeline slices of 1: grid slices of 8.
        assert_eq!(g.at(1000 + 511), (63, 0));
        assert_eq!(g.grid(), Some(Grid { t0: 1000, width: 8 }));
        // Time 512 needs a width of 2: one doubling.
        assert_eq!(g.at(1000 + 512), (32, 1));
        // 8,192 needs a width of 32: four more doublings, slice 256 / 8.
        assert_eq!(g.at(1000 + 4096 * 2), (32, 4));
        let mut s = Vec::new();
        add(&mut s, 3, [1, 10, 0, 0]);
        add(&mut s, 3, [1, 5, 0, 0]);
        add(&mut s, 7, [0, 0, 1, 10]);
        add(&mut s, 1, [1, 1, 0, 0]);
        assert_eq!(
            s,
            [
                SliceCounts(1, 1, 1, 0, 0),
                SliceCounts(3, 2, 15, 0, 0),
                SliceCounts(7, 0, 0, 1, 10)
            ]
        );
        halve(&mut s, 1);
        assert_eq!(
            s,
            [
                SliceCounts(0, 1, 1, 0, 0),
                SliceCounts(1, 2, 15, 0, 0),
                SliceCounts(3, 0, 0, 1, 10)
            ]
        );
        let mut t = vec![SliceCounts(1, 1, 1, 1, 1), SliceCounts(2, 1, 1, 1, 1)];
        merge(&mut t, &s);
        assert_eq!(t.len(), 4);
        assert_eq!(t[1], SliceCounts(1, 3, 16, 1, 1));
    }
}
