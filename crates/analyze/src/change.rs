//! What requests say of their objects beyond size: TTLs (libCacheSim's
//! `TtlStat`) and how an overwrite changes an object's size
//! (`SizeChangeDistribution`), absolutely and relative to the size
//! before.

use rustc_hash::FxHashMap;
use serde::Serialize;

/// The most distinct TTLs counted (libCacheSim's bound): past it, the
/// series is dropped and `too_many` says so.
pub const MAX_TTLS: usize = 1_000_000;

/// The TTL summary: requests with one, distinct TTLs, and those of more
/// than 1 % of them.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TtlStats {
    pub requests: u64,
    pub distinct: u64,
    pub too_many: bool,
    pub common: Vec<Common>,
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct Common {
    pub ttl: u32,
    pub requests: u64,
    pub fraction: f64,
}

/// (signed bin, overwrites), nonzero bins by bin.
pub type Bins = Vec<(i32, u64)>;

#[derive(Default)]
pub(crate) struct Ttls {
    counts: FxHashMap<u32, u64>,
    requests: u64,
    too_many: bool,
}

impl Ttls {
    #[inline]
    pub(crate) fn add(&mut self, ttl: u32) {
        if ttl == 0 {
            return;
        }
        self.requests += 1;
        if let Some(n) = self.counts.get_mut(&ttl) {
            *n += 1;
        } else if self.counts.len() < MAX_TTLS {
            self.counts.insert(ttl, 1);
        } else {
            self.too_many = true;
        }
    }

    /// The summary and (TTL, requests) by TTL (empty when too many).
    pub(crate) fn finish(self) -> (TtlStats, Vec<(u32, u64)>) {
        let mut v: Vec<(u32, u64)> = self.counts.into_iter().collect();
        v.sort_unstable();
        let n = self.requests;
        let common = v
            .iter()
            .filter(|p| p.1 > n / 100)
            .map(|&(ttl, r)| Common {
                ttl,
                requests: r,
                fraction: r as f64 / n as f64,
            })
            .collect();
        let stats = TtlStats {
            requests: n,
            distinct: v.len() as u64,
            too_many: self.too_many,
            common,
        };
        (stats, if self.too_many { Vec::new() } else { v })
    }
}

/// Bins of a change relative to the size before: the upper bounds of
/// bins 1 to 13 (bin 0 is below 0.00001, bin 14 from 0.1 up).
pub const RELATIVE_BOUNDS: [f64; 13] = [
    0.0001, 0.0002, 0.0005, 0.0008, 0.001, 0.002, 0.005, 0.008, 0.01, 0.02, 0.05, 0.08, 0.1,
];

/// The signed bin of an absolute change: 0 none, ±k for a magnitude of
/// 2^(k-1) to 2^k - 1, ±16 from 2^15 up.
pub fn absolute_bin(change: i64) -> i32 {
    let bits = 64 - change.unsigned_abs().leading_zeros() as i32;
    bits.min(16) * change.signum() as i32
}

/// The signed bin of a relative change (see [`RELATIVE_BOUNDS`]).
pub fn relative_bin(change: f64) -> i32 {
    let m = change.abs();
    if m < 0.00001 {
        return 0;
    }
    let k = RELATIVE_BOUNDS.iter().position(|&b| m < b).unwrap_or(13) as i32 + 1;
    if change < 0.0 { -k } else { k }
}

pub(crate) struct SizeChanges {
    absolute: [u64; 33],
    relative: [u64; 29],
}

impl Default for SizeChanges {
    fn default() -> Self {
        SizeChanges {
            absolute: [0; 33],
            relative: [0; 29],
        }
    }
}

impl SizeChanges {
    /// An overwrite from `before` bytes to `after`.
    #[inline]
    pub(crate) fn add(&mut self, before: u32, after: u32) {
        let change = after as i64 - before as i64;
        self.absolute[(absolute_bin(change) + 16) as usize] += 1;
        let rel = if before == 0 {
            if change == 0 { 0.0 } else { f64::INFINITY }
        } else {
            change as f64 / before as f64
        };
        self.relative[(relative_bin(rel) + 14) as usize] += 1;
    }

    /// (bin, overwrites) of the absolute and the relative changes,
    /// nonzero bins only, by bin.
    pub(crate) fn finish(self) -> (Bins, Bins) {
        let pick = |v: &[u64], mid: i32| -> Vec<(i32, u64)> {
            v.iter()
                .enumerate()
                .filter(|p| *p.1 > 0)
                .map(|(i, &n)| (i as i32 - mid, n))
                .collect()
        };
        (pick(&self.absolute, 16), pick(&self.relative, 14))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn change_bins_worked_by_hand() {
        assert_eq!(absolute_bin(0), 0);
        assert_eq!(absolute_bin(1), 1);
        assert_eq!(absolute_bin(3), 2);
        assert_eq!(absolute_bin(-4), -3);
        assert_eq!(absolute_bin(16383), 14);
        assert_eq!(absolute_bin(16384), 15);
        assert_eq!(absolute_bin(32768), 16);
        assert_eq!(absolute_bin(-1 << 40), -16);
        assert_eq!(relative_bin(0.0), 0);
        assert_eq!(relative_bin(0.00005), 1);
        assert_eq!(relative_bin(-0.00015), -2);
        assert_eq!(relative_bin(0.09), 13);
        assert_eq!(relative_bin(0.1), 14);
        assert_eq!(relative_bin(f64::INFINITY), 14);
    }

    #[test]
    fn ttls_past_the_bound_drop_the_series_not_the_count() {
        let mut t = Ttls::default();
        for i in 0..(MAX_TTLS as u32 + 5) {
            t.add(i + 1);
        }
        t.add(0);
        let (s, v) = t.finish();
        assert!(s.too_many && v.is_empty());
        assert_eq!(s.requests, MAX_TTLS as u64 + 5);
    }
}
