//! The metadata records that take one field from its encoding in effect to
//! another (interpretation and width), and what they cost in bytes. The
//! planners compare candidate encodings by these costs.

use crate::spec::{Field, Interp, Meta, Width};
use crate::state::FieldState;

/// A target encoding for a numeric field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    pub interp: Interp,
    /// Bytes per value (ignored under default and stride, which store none).
    pub width: u8,
}

/// The metadata that brings `st` to `t`: `set fieldInterpretation` when the
/// interpretation or its arguments differ, then `set fieldSize` when the
/// width that comes back is not the one wanted. At most two records.
pub fn metas(f: Field, st: &FieldState, t: Target) -> ([Option<Meta>; 2], usize) {
    let mut out = [None, None];
    let mut cost = 0;
    let mut width = st.width;
    let mut last = st.last_nonzero;
    let interp_changes = st.interp != t.interp;
    if interp_changes {
        let m = Meta::SetInterp(f, t.interp);
        cost += m.encoded_len();
        out[0] = Some(m);
        width = if t.interp.is_zero_width() {
            Width::Fixed(0)
        } else {
            last
        };
    }
    if !t.interp.is_zero_width() && width != Width::Fixed(t.width) {
        let m = Meta::SetWidth(f, Width::Fixed(t.width));
        cost += m.encoded_len();
        out[1] = Some(m);
        last = Width::Fixed(t.width);
    }
    let _ = last;
    (out, cost)
}

/// The bytes of [`metas`].
pub fn cost(f: Field, st: &FieldState, t: Target) -> usize {
    metas(f, st, t).1
}

/// The field state after [`metas`] (delta and stride reset the previous
/// value to their initial value, as in [`crate::state::State::apply`]).
pub fn after(st: &FieldState, t: Target) -> FieldState {
    let mut s = *st;
    if st.interp != t.interp
        && let Interp::Delta(init) | Interp::Stride { initial: init, .. } = t.interp
    {
        s.prev = init;
    }
    s.interp = t.interp;
    if t.interp.is_zero_width() {
        s.width = Width::Fixed(0);
    } else {
        s.width = Width::Fixed(t.width);
        s.last_nonzero = Width::Fixed(t.width);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::State;

    #[test]
    fn costs_follow_the_metadata_sizes() {
        let s = State::new();
        let a = *s.field(Field::Address);
        let raw8 = Target {
            interp: Interp::None,
            width: 8,
        };
        // none 4 -> none 8: one set fieldSize.
        assert_eq!(cost(Field::Address, &a, raw8), 4);
        let b1 = Target {
            interp: Interp::BaseOffset(0x1000),
            width: 1,
        };
        // baseOffset (12) then the width (4).
        assert_eq!(cost(Field::Address, &a, b1), 16);
        // Back from base-offset at 1 byte: none brings back 1, then 8.
        assert_eq!(cost(Field::Address, &after(&a, b1), raw8), 8);
        let st = Target {
            interp: Interp::Stride {
                initial: 0,
                stride: 16,
            },
            width: 0,
        };
        assert_eq!(cost(Field::Address, &a, st), 20);
        // From stride, none restores the last non-zero width (4 here).
        assert_eq!(cost(Field::Address, &after(&a, st), raw8), 8);
        // A new base at the same width is one record.
        let b1b = Target {
            interp: Interp::BaseOffset(0x2000),
            width: 1,
        };
        assert_eq!(cost(Field::Address, &after(&a, b1), b1b), 12);
    }
}
