//! Field types: how many bytes a field takes and how they encode its value.

use crate::lex::Span;

pub use tramp_core::ints::{IntRead, Order};

/// How a field's bytes encode its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// An integer of 1, 2, 4 or 8 bytes.
    Int {
        size: u8,
        order: Order,
        signed: bool,
    },
    /// `n` bytes of characters, kept whole (padding included).
    Chars(u32),
    /// A length of 1, 2 or 4 bytes, then that many bytes.
    Prefixed { len_size: u8, order: Order },
}

impl Encoding {
    /// Size in bytes when fixed.
    pub fn fixed_size(self) -> Option<usize> {
        match self {
            Encoding::Int { size, .. } => Some(size as usize),
            Encoding::Chars(n) => Some(n as usize),
            Encoding::Prefixed { .. } => None,
        }
    }
}

/// Whether a field is a time stamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeKind {
    No,
    /// An absolute time (`time`).
    Absolute,
    /// An increment over the previous record's time (`time_incr`); scripts
    /// and tramp see the absolute time.
    Increment,
}

/// One field.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldDesc {
    pub name: String,
    pub span: Span,
    pub enc: Encoding,
    pub time: TimeKind,
    /// Named values, for printing.
    pub values: Vec<(u64, String)>,
}

/// One record type.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordDesc {
    pub name: String,
    pub span: Span,
    /// The type byte's value, when the description has type bytes.
    pub tag: Option<u8>,
    /// The fields after the type byte.
    pub fields: Vec<FieldDesc>,
    /// Size in bytes (type byte included) when every field is fixed.
    pub fixed_size: Option<usize>,
}

/// Reads an integer field's value (sign-extended when signed). `b` holds at
/// least `size` bytes.
#[inline(always)]
pub fn read_int(b: &[u8], size: u8, order: Order, signed: bool) -> u64 {
    IntRead::of(size, order, signed).read(b, 0, |v| v, |v| v as u64)
}

/// Writes the low `size` bytes of `v` in `order`.
pub fn write_int(out: &mut Vec<u8>, v: u64, size: u8, order: Order) {
    let n = size as usize;
    match order {
        Order::Little => out.extend_from_slice(&v.to_le_bytes()[..n]),
        Order::Big => out.extend_from_slice(&v.to_be_bytes()[8 - n..]),
    }
}

/// Whether `v` fits an integer field (as unsigned or, if signed, as a
/// two's-complement value of that width).
pub fn fits(v: u64, size: u8, signed: bool) -> bool {
    if size >= 8 {
        return true;
    }
    let bits = 8 * size as u32;
    if signed {
        let x = v as i64;
        x >= -(1i64 << (bits - 1)) && x < (1i64 << (bits - 1))
    } else {
        v >> bits == 0
    }
}
