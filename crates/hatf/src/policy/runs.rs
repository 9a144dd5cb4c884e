//! The runs rule (the paper's "Same Size", §3.3), for any field: a run of
//! records with one value switches the field to `default VALUE` (no bytes
//! per record) and back to `none` when another value comes. Streaming, so
//! the switch is decided as in ski rental: the field keeps paying its width
//! until the run has paid what switching costs ([`SWITCH_COST`] bytes),
//! then switches before the run's next record.

use crate::spec::{Field, Interp, Meta};
use crate::state::{FieldState, min_width};

/// Bytes a run pays to switch: `set fieldInterpretation F default V`
/// (12 bytes) and the `none` (4) that ends it.
pub const SWITCH_COST: usize = 16;

/// The runs rule for one field.
#[derive(Clone, Copy, Debug)]
pub struct Runs {
    field: Field,
    value: u64,
    len: usize,
    /// Whether leaving `default` also sets the width the value needs (for
    /// thread and heap, whose width to restore is otherwise 8 bytes).
    fit_width: bool,
}

impl Runs {
    pub fn new(field: Field, fit_width: bool) -> Runs {
        Runs {
            field,
            value: 0,
            len: 0,
            fit_width,
        }
    }

    /// The metadata to place before a record whose field holds `value`
    /// (at most two records, in order).
    pub fn plan(&mut self, st: &FieldState, value: u64) -> [Option<Meta>; 2] {
        let f = self.field;
        match st.interp {
            Interp::Default(v) if v == value => [None, None],
            Interp::Default(_) => {
                // The run ends: back to `none` (the width comes back with it).
                self.value = value;
                self.len = 1;
                let need = min_width(value);
                let width =
                    (self.fit_width && st.last_nonzero != need).then_some(Meta::SetWidth(f, need));
                [width, Some(Meta::SetInterp(f, Interp::None))]
            }
            Interp::None => {
                if self.len > 0 && self.value == value {
                    self.len += 1;
                } else {
                    self.value = value;
                    self.len = 1;
                }
                let width = st.width.bytes().max(1);
                if (self.len - 1) * width >= SWITCH_COST {
                    return [Some(Meta::SetInterp(f, Interp::Default(value))), None];
                }
                [None, None]
            }
            _ => [None, None],
        }
    }
}
