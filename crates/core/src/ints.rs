//! Integers at fixed places in a record's bytes: their byte orders, their
//! encodings (one variant per size, order and sign, so that a reader that
//! knows a field's encoding in advance decodes it with one jump and one
//! load), and [`FixedInt`], where a field of a fixed-layout record type
//! lies, which lets a source hand records whose fields are read from
//! their bytes on demand (see [`crate::RecordType::fixed_ints`]).

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

/// An integer encoding, one variant each (size, order, sign).
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
    /// value in the same jump). `b` must hold the integer's bytes.
    #[inline(always)]
    pub fn read<T>(
        self,
        b: &[u8],
        off: usize,
        unsigned: impl FnOnce(u64) -> T,
        signed: impl FnOnce(i64) -> T,
    ) -> T {
        self.try_read(b, off, unsigned, signed)
            .expect("the integer's bytes")
    }

    /// [`IntRead::read`], or `None` when `b` ends before the integer does.
    #[inline(always)]
    pub fn try_read<T>(
        self,
        b: &[u8],
        off: usize,
        unsigned: impl FnOnce(u64) -> T,
        signed: impl FnOnce(i64) -> T,
    ) -> Option<T> {
        #[inline(always)]
        fn at<const N: usize>(b: &[u8], off: usize) -> Option<[u8; N]> {
            b.get(off..off.checked_add(N)?)?.try_into().ok()
        }
        Some(match self {
            IntRead::U8 => unsigned(*b.get(off)? as u64),
            IntRead::I8 => signed(*b.get(off)? as i8 as i64),
            IntRead::U16Le => unsigned(u16::from_le_bytes(at(b, off)?) as u64),
            IntRead::U16Be => unsigned(u16::from_be_bytes(at(b, off)?) as u64),
            IntRead::I16Le => signed(i16::from_le_bytes(at(b, off)?) as i64),
            IntRead::I16Be => signed(i16::from_be_bytes(at(b, off)?) as i64),
            IntRead::U32Le => unsigned(u32::from_le_bytes(at(b, off)?) as u64),
            IntRead::U32Be => unsigned(u32::from_be_bytes(at(b, off)?) as u64),
            IntRead::I32Le => signed(i32::from_le_bytes(at(b, off)?) as i64),
            IntRead::I32Be => signed(i32::from_be_bytes(at(b, off)?) as i64),
            IntRead::U64Le => unsigned(u64::from_le_bytes(at(b, off)?)),
            IntRead::U64Be => unsigned(u64::from_be_bytes(at(b, off)?)),
            IntRead::I64Le => signed(i64::from_le_bytes(at(b, off)?)),
            IntRead::I64Be => signed(i64::from_be_bytes(at(b, off)?)),
        })
    }
}

/// An integer field of a fixed-layout record type: its offset in the
/// record's bytes and how they read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedInt {
    pub off: u32,
    pub read: IntRead,
}

impl FixedInt {
    /// The field's value in `bytes` (a record of its type), as a signed
    /// integer (unsigned values reinterpreted as two's complement), or
    /// `None` if `bytes` ends first.
    #[inline(always)]
    pub fn int(self, bytes: &[u8]) -> Option<i64> {
        self.read
            .try_read(bytes, self.off as usize, |v| v as i64, |v| v)
    }

    /// The field's value in `bytes` as a record value (unsigned or signed
    /// as its encoding says), or `None` if `bytes` ends first.
    #[inline]
    pub fn value(self, bytes: &[u8]) -> Option<crate::Slot> {
        self.read
            .try_read(bytes, self.off as usize, crate::Slot::U, crate::Slot::I)
    }
}
