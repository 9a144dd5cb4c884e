//! Field types: how many bytes a field takes and how they encode its value.

use crate::lex::Span;

/// Byte order of a multi-byte integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    Little,
    Big,
}

impl Order {
    /// The order of the machine tramp runs on (the paper's `bytes(n)`).
    pub const HOST: Order = if cfg!(target_endian = "big") {
        Order::Big
    } else {
        Order::Little
    };

    /// The other order (the paper's `swap_halfword`, `swap_fullword`).
    pub fn swapped(self) -> Order {
        match self {
            Order::Little => Order::Big,
            Order::Big => Order::Little,
        }
    }
}

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

/// An integer encoding, one variant each (size, order, sign), so that a
/// reader that knows a field's encoding in advance decodes it with one jump
/// and one load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntRead {
    U8,
    I8,
    U16Le,
    U16Be,
    I16Le,
    I16Be,
    U32Le,
    U32Be,
    I32Le,
    I32Be,
    U64Le,
    U64Be,
    I64Le,
    I64Be,
}

impl IntRead {
    /// The encoding of `size` bytes (1, 2, 4 or 8) in `order`.
    pub fn of(size: u8, order: Order, signed: bool) -> IntRead {
        use Order::{Big, Little};
        match (size, order, signed) {
            (1, _, false) => IntRead::U8,
            (1, _, true) => IntRead::I8,
            (2, Little, false) => IntRead::U16Le,
            (2, Big, false) => IntRead::U16Be,
            (2, Little, true) => IntRead::I16Le,
            (2, Big, true) => IntRead::I16Be,
            (4, Little, false) => IntRead::U32Le,
            (4, Big, false) => IntRead::U32Be,
            (4, Little, true) => IntRead::I32Le,
            (4, Big, true) => IntRead::I32Be,
            (_, Little, false) => IntRead::U64Le,
            (_, Big, false) => IntRead::U64Be,
            (_, Little, true) => IntRead::I64Le,
            (_, Big, true) => IntRead::I64Be,
        }
    }

    /// The value at offset `off` of `b`, as `unsigned` of it or, for a signed
    /// encoding, as `signed` of it sign-extended (a reader builds its own
    /// value in the same jump).
    #[inline(always)]
    pub fn read<T>(
        self,
        b: &[u8],
        off: usize,
        unsigned: impl FnOnce(u64) -> T,
        signed: impl FnOnce(i64) -> T,
    ) -> T {
        fn at<const N: usize>(b: &[u8], off: usize) -> [u8; N] {
            b[off..off + N].try_into().expect("the field's bytes")
        }
        match self {
            IntRead::U8 => unsigned(b[off] as u64),
            IntRead::I8 => signed(b[off] as i8 as i64),
            IntRead::U16Le => unsigned(u16::from_le_bytes(at(b, off)) as u64),
            IntRead::U16Be => unsigned(u16::from_be_bytes(at(b, off)) as u64),
            IntRead::I16Le => signed(i16::from_le_bytes(at(b, off)) as i64),
            IntRead::I16Be => signed(i16::from_be_bytes(at(b, off)) as i64),
            IntRead::U32Le => unsigned(u32::from_le_bytes(at(b, off)) as u64),
            IntRead::U32Be => unsigned(u32::from_be_bytes(at(b, off)) as u64),
            IntRead::I32Le => signed(i32::from_le_bytes(at(b, off)) as i64),
            IntRead::I32Be => signed(i32::from_be_bytes(at(b, off)) as i64),
            IntRead::U64Le => unsigned(u64::from_le_bytes(at(b, off))),
            IntRead::U64Be => unsigned(u64::from_be_bytes(at(b, off))),
            IntRead::I64Le => signed(i64::from_le_bytes(at(b, off))),
            IntRead::I64Be => signed(i64::from_be_bytes(at(b, off))),
        }
    }
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
