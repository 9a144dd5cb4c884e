//! The address rule (the paper's "BaseOffset 1-byte", "BaseOffset 2-bytes",
//! "Best BaseOffset" and "Stride", §3.3), with a bounded look-ahead.
//!
//! Before each record with addresses, the planner keeps the encoding in
//! effect while it holds the record's addresses and is not `none`. When it
//! does not hold them, or the field is stored raw, it looks at the addresses
//! of up to [`LOOKAHEAD`] records from this one and prices every encoding
//! the policy allows:
//!
//! * **stride**: the longest run from here whose addresses step by the
//!   first difference (zero bytes each);
//! * **baseOffset w** (w = 1, 2): the longest run whose addresses lie
//!   within `2^(8w) − 2` bytes of each other, with the base at the middle
//!   of their range (w bytes each);
//! * **raw**: `none` at the width addresses have needed so far.
//!
//! A run's worth is the bytes it saves against raw (`addresses × (raw −
//! w)`) less the metadata that switches to it and back to raw; the planner
//! takes the best encoding worth more than staying raw. A record is in a
//! run only if all its addresses are (a realloc has two).

use std::collections::VecDeque;

use super::AddressModes;
use super::transition::{self, Target};
use crate::item::{Event, OwnedItem};
use crate::spec::{Field, Interp, Meta};
use crate::state::{FieldState, fits_signed, fits_unsigned, min_width};

/// Records of look-ahead the address planner reads (and the writer holds).
pub const LOOKAHEAD: usize = 64;

/// The records after the one being encoded.
#[derive(Clone, Copy)]
pub struct Look<'a> {
    pub items: &'a VecDeque<OwnedItem>,
    pub from: usize,
}

impl<'a> Look<'a> {
    pub fn none(empty: &'a VecDeque<OwnedItem>) -> Look<'a> {
        Look {
            items: empty,
            from: 0,
        }
    }
}

/// The addresses of a record: none, one, or a realloc's old and new.
pub fn addresses(ev: &Event<'_>) -> ([u64; 2], usize) {
    if ev.kind.is_realloc() {
        ([ev.address, ev.new_address], 2)
    } else if ev.kind.has(Field::Address) {
        ([ev.address, 0], 1)
    } else {
        ([0, 0], 0)
    }
}

/// The address planner.
#[derive(Clone, Copy, Debug)]
pub struct AddressRuns {
    modes: AddressModes,
    /// The width raw addresses have needed so far (never narrows).
    raw: u8,
}

/// A priced candidate.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    target: Target,
    worth: i64,
}

impl AddressRuns {
    pub fn new(modes: AddressModes) -> AddressRuns {
        AddressRuns { modes, raw: 0 }
    }

    /// This planner, keeping the raw width `old` has learned.
    pub fn carrying(mut self, old: &AddressRuns) -> AddressRuns {
        self.raw = old.raw;
        self
    }

    /// Whether `st` holds all of `vals` (in order, chaining previous values).
    fn holds(st: &FieldState, vals: &[u64]) -> bool {
        let n = st.width.bytes();
        let mut prev = st.prev;
        vals.iter().all(|&v| {
            let ok = match st.interp {
                Interp::None => fits_unsigned(v, n),
                Interp::Default(d) => v == d,
                Interp::BaseOffset(b) => fits_signed(v.wrapping_sub(b) as i64, n),
                Interp::Delta(_) => fits_signed(v.wrapping_sub(prev) as i64, n),
                Interp::Stride { stride, .. } => v == prev.wrapping_add(stride),
            };
            prev = v;
            ok
        })
    }

    /// The metadata to place before `ev` (at most two records).
    pub fn plan(&mut self, st: &FieldState, ev: &Event<'_>, look: Look<'_>) -> [Option<Meta>; 2] {
        let (a, n) = addresses(ev);
        if n == 0 {
            return [None, None];
        }
        let vals = &a[..n];
        let widest = vals
            .iter()
            .map(|v| min_width(*v).bytes())
            .max()
            .unwrap_or(1) as u8;
        self.raw = self.raw.max(widest);
        let is_raw = st.interp == Interp::None;
        let raw = Target {
            interp: Interp::None,
            width: if is_raw {
                self.raw.max(st.width.bytes() as u8)
            } else {
                self.raw
            },
        };
        let holds = Self::holds(st, vals);
        if holds && !is_raw {
            return [None, None];
        }
        // Staying raw (or going back to it) is the baseline.
        let mut best = Candidate {
            target: raw,
            worth: if holds && is_raw {
                0
            } else {
                -(transition::cost(Field::Address, st, raw) as i64)
            },
        };
        let rw = raw.width as i64;
        let mut consider = |target: Target, covered: usize| {
            let worth = covered as i64 * (rw - target.width as i64)
                - transition::cost(Field::Address, st, target) as i64
                - transition::cost(Field::Address, &transition::after(st, target), raw) as i64;
            if worth > best.worth {
                best = Candidate { target, worth };
            }
        };
        let records = || {
            std::iter::once((a, n))
                .chain(look.items.range(look.from..).filter_map(|i| match i {
                    OwnedItem::Event(e) => {
                        let (a, n) = addresses(&e.as_event());
                        (n > 0).then_some((a, n))
                    }
                    _ => None,
                }))
                .take(LOOKAHEAD)
        };
        if self.modes.has(AddressModes::STRIDE)
            && let Some((initial, stride, covered)) = stride_run(records())
        {
            consider(
                Target {
                    interp: Interp::Stride { initial, stride },
                    width: 0,
                },
                covered,
            );
        }
        for (mode, w) in [(AddressModes::BASE1, 1u8), (AddressModes::BASE2, 2u8)] {
            if self.modes.has(mode) && w < raw.width {
                let (base, covered) = base_run(records(), w);
                consider(
                    Target {
                        interp: Interp::BaseOffset(base),
                        width: w,
                    },
                    covered,
                );
            }
        }
        // A record the chosen encoding would not hold goes raw (cannot
        // happen for a run, which starts with this record; kept as a guard).
        let target = if Self::holds(&transition::after(st, best.target), vals) {
            best.target
        } else {
            raw
        };
        transition::metas(Field::Address, st, target).0
    }
}

/// The stride run from the first address: `(initial, stride, addresses covered)`,
/// or `None` with fewer than two addresses.
fn stride_run(records: impl Iterator<Item = ([u64; 2], usize)>) -> Option<(u64, u64, usize)> {
    let mut first = None;
    let mut stride = None;
    let mut prev = 0u64;
    let mut covered = 0usize;
    'outer: for (a, n) in records {
        let mut p = prev;
        let mut s = stride;
        for &v in &a[..n] {
            match (first, s) {
                (None, _) => first = Some(v),
                (Some(_), None) => s = Some(v.wrapping_sub(p)),
                (Some(_), Some(st)) if v == p.wrapping_add(st) => {}
                _ => break 'outer,
            }
            p = v;
        }
        prev = p;
        stride = s;
        covered += n;
    }
    let (f, s) = (first?, stride?);
    Some((f.wrapping_sub(s), s, covered))
}

/// The base-offset run from the first address at `w` bytes: the base (the
/// middle of the run's range) and the addresses covered.
fn base_run(records: impl Iterator<Item = ([u64; 2], usize)>, w: u8) -> (u64, usize) {
    let span = (1u64 << (8 * w as u32)) - 2;
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    let mut covered = 0usize;
    for (a, n) in records {
        let (mut l, mut h) = (lo, hi);
        for &v in &a[..n] {
            l = l.min(v);
            h = h.max(v);
        }
        if h - l > span {
            break;
        }
        (lo, hi) = (l, h);
        covered += n;
    }
    if covered == 0 {
        return (0, 0);
    }
    (lo + (hi - lo) / 2, covered)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recs(v: &[u64]) -> impl Iterator<Item = ([u64; 2], usize)> + '_ {
        v.iter().map(|a| ([*a, 0], 1))
    }

    #[test]
    fn stride_runs_follow_the_first_difference() {
        assert_eq!(
            stride_run(recs(&[100, 116, 132, 148, 7])),
            Some((84, 16, 4))
        );
        assert_eq!(stride_run(recs(&[5])), None);
        // A realloc in the middle must have both addresses on the stride.
        let r = [([0x10, 0], 1), ([0x20, 0x30], 2), ([0x41, 0], 1)];
        assert_eq!(stride_run(r.into_iter()), Some((0, 0x10, 3)));
        // Stride zero: one address reused.
        assert_eq!(stride_run(recs(&[8, 8, 8])), Some((8, 0, 3)));
    }

    #[test]
    fn base_runs_stay_within_their_span() {
        // 1 byte: a spread of at most 254 around the middle.
        let (base, n) = base_run(recs(&[1000, 1100, 1254, 1255, 900]), 1);
        assert_eq!((base, n), (1127, 3));
        for v in [1000u64, 1100, 1254] {
            assert!(fits_signed(v.wrapping_sub(base) as i64, 1));
        }
        assert_eq!(base_run(recs(&[]), 2), (0, 0));
    }
}
