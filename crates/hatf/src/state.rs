//! The encoding state: for every field, its current width and
//! interpretation and the previous value that delta and stride build on.
//! Reader and writer share it, so both apply metadata by the same rules.

use crate::error::HatfError;
use crate::spec::{EVENT_KINDS, EventKind, Field, Interp, Meta, Width};

/// The encoding of one field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldState {
    /// The width in effect (zero under default and stride).
    pub width: Width,
    pub interp: Interp,
    /// The value of this field in the most recent record that had it.
    pub prev: u64,
    /// The width that none, baseOffset and delta restore.
    pub last_nonzero: Width,
}

/// Encoding state for all six fields, plus the fixed part of each record's
/// length, recomputed whenever metadata changes a width.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    pub fields: [FieldState; 6],
    /// Per event kind: tag byte plus all fixed-width fields plus the
    /// attributes length header.
    fixed_len: [usize; 10],
}

impl Default for State {
    fn default() -> Self {
        State::new()
    }
}

fn fs(width: u8, interp: Interp, last_nonzero: Width) -> FieldState {
    FieldState {
        width: Width::Fixed(width),
        interp,
        prev: 0,
        last_nonzero,
    }
}

impl State {
    /// The standard default configuration of Appendix A: size and address
    /// 4 bytes, none; time, thread and heap default 0; attributes default 0.
    pub fn new() -> State {
        let mut s = State {
            fields: [
                fs(4, Interp::None, Width::Fixed(4)),
                fs(4, Interp::None, Width::Fixed(4)),
                fs(0, Interp::Default(0), Width::Fixed(8)),
                fs(0, Interp::Default(0), Width::Fixed(8)),
                fs(0, Interp::Default(0), Width::Fixed(8)),
                fs(0, Interp::Default(0), Width::V2),
            ],
            fixed_len: [0; 10],
        };
        s.recompute();
        s
    }

    pub fn field(&self, f: Field) -> &FieldState {
        &self.fields[f as usize]
    }

    /// Bytes before the attribute data of a record of `kind`.
    #[inline]
    pub fn fixed_len(&self, kind: EventKind) -> usize {
        self.fixed_len[kind as usize]
    }

    fn recompute(&mut self) {
        for k in EVENT_KINDS {
            self.fixed_len[k as usize] = 1 + k
                .layout()
                .iter()
                .map(|f| self.fields[*f as usize].width.bytes())
                .sum::<usize>();
        }
    }

    /// Checks a metadata record against the rules without applying it.
    pub fn check(&self, meta: &Meta) -> Result<(), HatfError> {
        match *meta {
            Meta::SetWidth(field, w @ (Width::V1 | Width::V2)) if field != Field::Attributes => {
                Err(HatfError::VariableWidthOnNumber { field, width: w })
            }
            Meta::SetInterp(Field::Attributes, i)
                if !matches!(i, Interp::None | Interp::Default(0)) =>
            {
                Err(HatfError::AttributesInterp(format!("{} {:?}", i.name(), i)))
            }
            _ => Ok(()),
        }
    }

    /// Applies a metadata record.
    ///
    /// * set fieldSize to a non-zero width while the interpretation is
    ///   default or stride only records the width: it takes effect when
    ///   none, baseOffset or delta is set.
    /// * set fieldInterpretation default/stride sets the width to zero;
    ///   none/baseOffset/delta restore the last non-zero width; delta and
    ///   stride reset the previous value to their initial value.
    pub fn apply(&mut self, meta: &Meta) -> Result<(), HatfError> {
        self.check(meta)?;
        match *meta {
            Meta::SetWidth(field, w) => {
                let f = &mut self.fields[field as usize];
                if !w.is_zero() {
                    f.last_nonzero = w;
                }
                if !f.interp.is_zero_width() {
                    f.width = w;
                }
            }
            Meta::SetInterp(field, i) => {
                let f = &mut self.fields[field as usize];
                f.interp = i;
                f.width = if i.is_zero_width() {
                    Width::Fixed(0)
                } else {
                    f.last_nonzero
                };
                match i {
                    Interp::Delta(init) | Interp::Stride { initial: init, .. } => f.prev = init,
                    _ => {}
                }
            }
        }
        self.recompute();
        Ok(())
    }
}

/// Sign-extends the low `n` bytes of `raw`.
#[inline]
pub fn sign_extend(raw: u64, n: usize) -> u64 {
    if n == 0 || n >= 8 {
        return raw;
    }
    let shift = 64 - 8 * n as u32;
    (((raw << shift) as i64) >> shift) as u64
}

/// Whether `d` fits in `n` bytes as a two's-complement number.
#[inline]
pub fn fits_signed(d: i64, n: usize) -> bool {
    match n {
        0 => d == 0,
        8.. => true,
        _ => {
            let bits = 8 * n as u32;
            d >= -(1i64 << (bits - 1)) && d < (1i64 << (bits - 1))
        }
    }
}

/// Whether `v` fits in `n` bytes unsigned.
#[inline]
pub fn fits_unsigned(v: u64, n: usize) -> bool {
    n >= 8 || v >> (8 * n as u32) == 0
}

/// The smallest fixed width that holds `v` unsigned (at least 1 byte).
pub fn min_width(v: u64) -> Width {
    match v {
        0..=0xff => Width::Fixed(1),
        0x100..=0xffff => Width::Fixed(2),
        0x1_0000..=0xffff_ffff => Width::Fixed(4),
        _ => Width::Fixed(8),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_appendix_a() {
        let s = State::new();
        assert_eq!(s.fixed_len(EventKind::Alloc), 9);
        assert_eq!(s.fixed_len(EventKind::Free), 5);
        assert_eq!(s.fixed_len(EventKind::ReallocAllocFree), 13);
        assert_eq!(s.fixed_len(EventKind::CreateThread), 1);
        assert_eq!(s.field(Field::Time).interp, Interp::Default(0));
    }

    #[test]
    fn interpretation_changes_width() {
        let mut s = State::new();
        s.apply(&Meta::SetWidth(Field::Size, Width::Fixed(1)))
            .unwrap();
        s.apply(&Meta::SetInterp(Field::Size, Interp::Default(16)))
            .unwrap();
        assert_eq!(s.field(Field::Size).width, Width::Fixed(0));
        s.apply(&Meta::SetInterp(Field::Size, Interp::None))
            .unwrap();
        assert_eq!(s.field(Field::Size).width, Width::Fixed(1));
        // A width set while the interpretation implies zero waits for the next
        // none/baseOffset/delta.
        s.apply(&Meta::SetInterp(
            Field::Time,
            Interp::Stride {
                initial: 0,
                stride: 10,
            },
        ))
        .unwrap();
        s.apply(&Meta::SetWidth(Field::Time, Width::Fixed(2)))
            .unwrap();
        assert_eq!(s.field(Field::Time).width, Width::Fixed(0));
        s.apply(&Meta::SetInterp(Field::Time, Interp::Delta(5)))
            .unwrap();
        assert_eq!(s.field(Field::Time).width, Width::Fixed(2));
        assert_eq!(s.field(Field::Time).prev, 5);
        // fieldSize 0 under none does not forget the last non-zero width.
        s.apply(&Meta::SetWidth(Field::Time, Width::Fixed(0)))
            .unwrap();
        s.apply(&Meta::SetInterp(Field::Time, Interp::None))
            .unwrap();
        assert_eq!(s.field(Field::Time).width, Width::Fixed(2));
    }

    #[test]
    fn illegal_metadata_is_rejected() {
        let mut s = State::new();
        assert!(s.apply(&Meta::SetWidth(Field::Size, Width::V1)).is_err());
        assert!(
            s.apply(&Meta::SetInterp(Field::Attributes, Interp::Delta(0)))
                .is_err()
        );
        assert!(
            s.apply(&Meta::SetInterp(Field::Attributes, Interp::Default(3)))
                .is_err()
        );
        assert_eq!(s, State::new());
    }

    #[test]
    fn sign_helpers() {
        assert_eq!(sign_extend(0xff, 1), u64::MAX);
        assert_eq!(sign_extend(0x7f, 1), 0x7f);
        assert_eq!(sign_extend(0x8000, 2) as i64, -32768);
        assert!(fits_signed(-128, 1) && !fits_signed(128, 1));
        assert!(fits_unsigned(0xffff_ffff, 4) && !fits_unsigned(0x1_0000_0000, 4));
        assert_eq!(min_width(0), Width::Fixed(1));
        assert_eq!(min_width(1 << 40), Width::Fixed(8));
    }
}
