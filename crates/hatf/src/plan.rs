//! Decode plans: for each record type, the steps that turn its bytes into
//! values under the encoding in effect. A plan is rebuilt only when a
//! metadata record changes the encoding, so the per-record work is a short
//! loop with no lookups of widths or interpretations.

use crate::spec::{EVENT_KINDS, EventKind, Field, Interp, Width};
use crate::state::State;

/// Where a decoded value goes in [`Values`].
pub const OUT_SIZE: usize = 0;
pub const OUT_ADDRESS: usize = 1;
pub const OUT_NEW_ADDRESS: usize = 2;
pub const OUT_THREAD: usize = 3;
pub const OUT_HEAP: usize = 4;
pub const OUT_TIME: usize = 5;

/// The decoded numeric values of one record, indexed by `OUT_*`.
pub type Values = [u64; 6];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Stored value (n ≥ 1 bytes, unsigned).
    Raw,
    /// A constant: default, or a zero-width none (0) or baseOffset (base).
    Const,
    /// Base `k` plus the signed stored value.
    Base,
    /// Previous value plus the signed stored value.
    Delta,
    /// Previous value plus `k` (stride; also a zero-width delta with k = 0).
    Stride,
}

/// One field of a record. Raw, constant and base-offset steps compute
/// `k + (stored & mask)` without branches, with the stored value read
/// signed where `smask` is all ones; delta and stride use previous values.
#[derive(Clone, Copy, Debug)]
pub struct Step {
    /// Constant, base or stride.
    pub k: u64,
    /// All ones where the stored value counts, zero for constants.
    pub mask: u64,
    /// All ones where the stored value is signed.
    pub smask: u64,
    pub field: u8,
    pub out: u8,
    /// Bytes stored in the record.
    pub n: u8,
    /// `64 - 8n`: the shift that brings a big-endian 8-byte load down to n bytes.
    pub shift: u8,
    pub mode: Mode,
}

/// How to decode one record type.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Values of the fields whose value is a constant (default, zero width).
    pub template: Values,
    /// Bit `out` is set when that value is a constant of the template.
    pub const_outs: u8,
    /// Steps for the fields that are not constant, in record order, padded
    /// to six with steps that read nothing and write the spare slot 7.
    pub steps: [Step; 6],
    pub nsteps: u8,
    /// Tag, numeric fields and the attribute length header (or fixed-width data).
    pub fixed: u8,
    pub attrs: Width,
    /// Mask over the big-endian u16 ending at `fixed` that gives the length
    /// of variable attributes (0 for fixed-width attributes).
    pub len_mask: u16,
    /// Where the attribute data starts.
    pub attrs_at: u8,
}

const EMPTY_STEP: Step = Step {
    k: 0,
    mask: 0,
    smask: 0,
    field: 0,
    out: 7,
    n: 0,
    shift: 63,
    mode: Mode::Const,
};

impl Plan {
    pub(crate) fn build(state: &State, kind: EventKind) -> Plan {
        let mut plan = Plan {
            template: [0; 6],
            const_outs: 0,
            steps: [EMPTY_STEP; 6],
            nsteps: 0,
            fixed: state.fixed_len(kind) as u8,
            attrs: state.field(Field::Attributes).width,
            len_mask: 0,
            attrs_at: 0,
        };
        (plan.len_mask, plan.attrs_at) = match plan.attrs {
            Width::Fixed(n) => (0, plan.fixed - n),
            Width::V1 => (0xff, plan.fixed),
            Width::V2 => (0xffff, plan.fixed),
        };
        let mut seen_address = false;
        for &f in kind.layout() {
            let out = match f {
                Field::Size => OUT_SIZE,
                Field::Address if !seen_address => {
                    seen_address = true;
                    OUT_ADDRESS
                }
                Field::Address => OUT_NEW_ADDRESS,
                Field::Thread => OUT_THREAD,
                Field::Heap => OUT_HEAP,
                Field::Time => OUT_TIME,
                Field::Attributes => continue,
            };
            let st = state.field(f);
            let n = st.width.bytes() as u8;
            let (mode, k) = match (st.interp, n) {
                (Interp::None, 0) => (Mode::Const, 0),
                (Interp::None, _) => (Mode::Raw, 0),
                (Interp::Default(d), _) => (Mode::Const, d),
                (Interp::BaseOffset(b), 0) => (Mode::Const, b),
                (Interp::BaseOffset(b), _) => (Mode::Base, b),
                (Interp::Delta(_), 0) => (Mode::Stride, 0),
                (Interp::Delta(_), _) => (Mode::Delta, 0),
                (Interp::Stride { stride, .. }, _) => (Mode::Stride, stride),
            };
            if mode == Mode::Const {
                // The previous value of a constant field is never read: delta
                // and stride reset it when they are set.
                plan.template[out] = k;
                plan.const_outs |= 1 << out;
                continue;
            }
            // A zero-width stride field reads nothing: mask it to nothing
            // (a shift by 64 would overflow).
            plan.steps[plan.nsteps as usize] = Step {
                k,
                mask: if n == 0 { 0 } else { u64::MAX },
                smask: if matches!(mode, Mode::Base | Mode::Delta) {
                    u64::MAX
                } else {
                    0
                },
                field: f as u8,
                out: out as u8,
                n,
                shift: if n == 0 { 0 } else { 64 - 8 * n },
                mode,
            };
            plan.nsteps += 1;
        }
        plan
    }

    /// Plans for all ten event kinds under `state`.
    pub fn all(state: &State) -> [Plan; 10] {
        EVENT_KINDS.map(|k| Plan::build(state, k))
    }
}
