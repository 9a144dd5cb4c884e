//! The narrowing rule (the paper's "Small Size", §3.3), for any field whose
//! stored value has a width of its own: the size under `none`, the time
//! under `delta`. Streaming, no look-ahead, constant memory:
//!
//! 1. The first record (after the field entered the interpretation) sets
//!    the width to what its value needs.
//! 2. A value that needs more widens the field at once, before its record.
//! 3. Records that would fit a narrower width form a run; once the run has
//!    saved [`CONTRACT_AFTER`] bytes (`len × (width − widest needed)`), the
//!    width is narrowed to the widest width the run needed.

use crate::spec::{Field, Interp, Meta, Width};
use crate::state::{FieldState, fits_signed, min_width};

/// Bytes a run must have saved at a narrower width before the field is
/// narrowed: a narrowing and the widening that may follow cost one 4-byte
/// metadata record each.
pub const CONTRACT_AFTER: usize = 8;

/// The smallest of 1, 2, 4, 8 bytes that holds `d` as a signed number.
pub fn min_signed_width(d: i64) -> usize {
    [1usize, 2, 4]
        .into_iter()
        .find(|n| fits_signed(d, *n))
        .unwrap_or(8)
}

/// The narrowing rule for one field.
#[derive(Clone, Copy, Debug)]
pub struct Narrow {
    field: Field,
    started: bool,
    len: usize,
    widest: usize,
}

impl Narrow {
    pub fn new(field: Field) -> Narrow {
        Narrow {
            field,
            started: false,
            len: 0,
            widest: 0,
        }
    }

    fn restart(&mut self) {
        self.started = true;
        self.len = 0;
        self.widest = 0;
    }

    /// The bytes `value` needs under `st`, if the rule applies there: the
    /// unsigned width under `none`, the signed width of the step under
    /// `delta`.
    fn need(st: &FieldState, value: u64) -> Option<usize> {
        match st.interp {
            Interp::None => Some(min_width(value).bytes()),
            Interp::Delta(_) => Some(min_signed_width(value.wrapping_sub(st.prev) as i64)),
            _ => None,
        }
    }

    /// The width change to place before a record whose field holds `value`.
    pub fn plan(&mut self, st: &FieldState, value: u64) -> Option<Meta> {
        let Some(need) = Self::need(st, value) else {
            self.started = false;
            return None;
        };
        let cur = st.width.bytes();
        let field = self.field;
        let set = |n: usize| Some(Meta::SetWidth(field, Width::Fixed(n as u8)));
        if !self.started || need > cur {
            self.restart();
            return if need != cur { set(need) } else { None };
        }
        if need < cur {
            self.len += 1;
            self.widest = self.widest.max(need);
            if self.len * (cur - self.widest) >= CONTRACT_AFTER {
                let to = self.widest;
                self.restart();
                return set(to);
            }
        } else {
            self.restart();
        }
        None
    }
}
