//! The vocabulary of HATF 1.0 (Appendix A): tags, fields, widths,
//! interpretations, metadata operations, and the field order of each record.

use std::fmt;

/// Tag byte of a comment record.
pub const TAG_COMMENT: u8 = 10;
/// Tag byte of a metadata record.
pub const TAG_METADATA: u8 = 11;
/// Metadata op byte: set fieldSize.
pub const OP_SET_SIZE: u8 = 1;
/// Metadata op byte: set fieldInterpretation.
pub const OP_SET_INTERP: u8 = 2;

/// The data record types (tags 0–9; comments and metadata are separate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum EventKind {
    Alloc = 0,
    Free = 1,
    /// realloc called neither malloc nor free (resized in place).
    ReallocNoAlloc = 2,
    /// realloc called free then malloc (moved).
    ReallocAllocFree = 3,
    /// realloc called malloc only (`realloc(NULL, n)`).
    ReallocAlloc = 4,
    /// realloc called free only (`realloc(p, 0)`).
    ReallocFree = 5,
    CreateHeap = 6,
    DestroyHeap = 7,
    CreateThread = 8,
    DestroyThread = 9,
}

/// Every event kind, in tag order.
pub const EVENT_KINDS: [EventKind; 10] = [
    EventKind::Alloc,
    EventKind::Free,
    EventKind::ReallocNoAlloc,
    EventKind::ReallocAllocFree,
    EventKind::ReallocAlloc,
    EventKind::ReallocFree,
    EventKind::CreateHeap,
    EventKind::DestroyHeap,
    EventKind::CreateThread,
    EventKind::DestroyThread,
];

impl EventKind {
    pub fn from_tag(tag: u8) -> Option<EventKind> {
        EVENT_KINDS.get(tag as usize).copied()
    }

    pub fn tag(self) -> u8 {
        self as u8
    }

    /// The name used in the text form.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Alloc => "alloc",
            EventKind::Free => "free",
            EventKind::ReallocNoAlloc => "realloc/no-alloc",
            EventKind::ReallocAllocFree => "realloc/alloc-free",
            EventKind::ReallocAlloc => "realloc/alloc",
            EventKind::ReallocFree => "realloc/free",
            EventKind::CreateHeap => "createHeap",
            EventKind::DestroyHeap => "destroyHeap",
            EventKind::CreateThread => "createThread",
            EventKind::DestroyThread => "destroyThread",
        }
    }

    pub fn from_name(name: &str) -> Option<EventKind> {
        EVENT_KINDS.iter().copied().find(|k| k.name() == name)
    }

    pub fn is_realloc(self) -> bool {
        matches!(
            self,
            EventKind::ReallocNoAlloc
                | EventKind::ReallocAllocFree
                | EventKind::ReallocAlloc
                | EventKind::ReallocFree
        )
    }

    /// Whether records of this kind have field `f` (a bit test: searching
    /// [`EventKind::layout`] was a sixth of the `best` policy's time).
    #[inline]
    pub fn has(self, f: Field) -> bool {
        const fn bits(fields: &[Field]) -> u8 {
            let mut m = 0;
            let mut i = 0;
            while i < fields.len() {
                m |= 1 << fields[i] as u8;
                i += 1;
            }
            m
        }
        const MASKS: [u8; 10] = {
            let mut m = [0u8; 10];
            let mut i = 0;
            while i < 10 {
                m[i] = bits(EVENT_KINDS[i].layout());
                i += 1;
            }
            m
        };
        MASKS[self as usize] >> f as u8 & 1 == 1
    }

    /// The fields of this record after the tag byte, in binary order.
    /// A realloc's first `Address` is the old address, the second the new.
    pub const fn layout(self) -> &'static [Field] {
        use Field::*;
        match self {
            EventKind::Alloc => &[Size, Address, Thread, Heap, Time, Attributes],
            EventKind::Free => &[Address, Thread, Heap, Time, Attributes],
            EventKind::ReallocNoAlloc
            | EventKind::ReallocAllocFree
            | EventKind::ReallocAlloc
            | EventKind::ReallocFree => &[Size, Address, Address, Thread, Heap, Time, Attributes],
            EventKind::CreateHeap | EventKind::DestroyHeap => &[Heap, Thread, Time, Attributes],
            EventKind::CreateThread | EventKind::DestroyThread => &[Thread, Time, Attributes],
        }
    }
}

/// The six field types whose encoding metadata can change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Field {
    Size = 0,
    Address = 1,
    Time = 2,
    Thread = 3,
    Heap = 4,
    Attributes = 5,
}

pub const FIELDS: [Field; 6] = [
    Field::Size,
    Field::Address,
    Field::Time,
    Field::Thread,
    Field::Heap,
    Field::Attributes,
];

impl Field {
    pub fn from_code(code: u8) -> Option<Field> {
        FIELDS.get(code as usize).copied()
    }

    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn name(self) -> &'static str {
        match self {
            Field::Size => "size",
            Field::Address => "address",
            Field::Time => "time",
            Field::Thread => "thread",
            Field::Heap => "heap",
            Field::Attributes => "attributes",
        }
    }

    pub fn from_name(name: &str) -> Option<Field> {
        FIELDS.iter().copied().find(|f| f.name() == name)
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A field width: a fixed byte count, or (attributes only) a byte string
/// preceded by a 1- or 2-byte length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Width {
    Fixed(u8),
    V1,
    V2,
}

impl Width {
    /// Decodes the width byte of a set fieldSize record (0,1,2,4,8; 9 = v1, 10 = v2).
    pub fn from_code(code: u8) -> Option<Width> {
        Some(match code {
            0 | 1 | 2 | 4 | 8 => Width::Fixed(code),
            9 => Width::V1,
            10 => Width::V2,
            _ => return None,
        })
    }

    pub fn code(self) -> u8 {
        match self {
            Width::Fixed(n) => n,
            Width::V1 => 9,
            Width::V2 => 10,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Width::Fixed(0) => "0",
            Width::Fixed(1) => "1",
            Width::Fixed(2) => "2",
            Width::Fixed(4) => "4",
            Width::Fixed(8) => "8",
            Width::Fixed(_) => "?",
            Width::V1 => "v1",
            Width::V2 => "v2",
        }
    }

    pub fn from_name(name: &str) -> Option<Width> {
        Some(match name {
            "v1" => Width::V1,
            "v2" => Width::V2,
            n => Width::from_code(n.parse::<u8>().ok().filter(|c| *c <= 8)?)?,
        })
    }

    pub fn is_zero(self) -> bool {
        self == Width::Fixed(0)
    }

    /// Bytes of a fixed width, or of the length header of a variable one.
    pub fn bytes(self) -> usize {
        match self {
            Width::Fixed(n) => n as usize,
            Width::V1 => 1,
            Width::V2 => 2,
        }
    }
}

impl fmt::Display for Width {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a field's stored bits become its value. Arguments are 8-byte
/// unsigned "hatf data values".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Interp {
    /// The stored value is the value.
    None,
    /// Zero width; the value is the argument.
    Default(u64),
    /// The value is the base plus the signed stored value.
    BaseOffset(u64),
    /// The value is the previous value plus the signed stored value; the
    /// first record after the metadata uses the argument as previous value.
    Delta(u64),
    /// Zero width; the value is the previous value plus the (signed) stride.
    Stride { initial: u64, stride: u64 },
}

impl Interp {
    pub fn code(self) -> u8 {
        match self {
            Interp::None => 0,
            Interp::Default(_) => 1,
            Interp::BaseOffset(_) => 2,
            Interp::Delta(_) => 3,
            Interp::Stride { .. } => 4,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Interp::None => "none",
            Interp::Default(_) => "default",
            Interp::BaseOffset(_) => "baseOffset",
            Interp::Delta(_) => "delta",
            Interp::Stride { .. } => "stride",
        }
    }

    /// Number of 8-byte arguments that follow the code in a metadata record.
    pub fn arg_count_for_code(code: u8) -> Option<usize> {
        Some(match code {
            0 => 0,
            1..=3 => 1,
            4 => 2,
            _ => return None,
        })
    }

    /// Builds an interpretation from its code and arguments.
    pub fn from_code(code: u8, a: u64, b: u64) -> Option<Interp> {
        Some(match code {
            0 => Interp::None,
            1 => Interp::Default(a),
            2 => Interp::BaseOffset(a),
            3 => Interp::Delta(a),
            4 => Interp::Stride {
                initial: a,
                stride: b,
            },
            _ => return None,
        })
    }

    /// Whether this interpretation forces the field's width to zero.
    pub fn is_zero_width(self) -> bool {
        matches!(self, Interp::Default(_) | Interp::Stride { .. })
    }
}

/// A metadata record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Meta {
    SetWidth(Field, Width),
    SetInterp(Field, Interp),
}

impl Meta {
    /// Encoded length in bytes: 4, or 12 / 20 with one / two arguments.
    pub fn encoded_len(self) -> usize {
        match self {
            Meta::SetWidth(..) => 4,
            Meta::SetInterp(_, i) => 4 + 8 * Interp::arg_count_for_code(i.code()).unwrap_or(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn has_agrees_with_the_layout() {
        for k in EVENT_KINDS {
            for f in FIELDS {
                assert_eq!(k.has(f), k.layout().contains(&f), "{} {f:?}", k.name());
            }
        }
        assert!(!EventKind::Free.has(Field::Size));
        assert!(EventKind::CreateThread.has(Field::Thread));
        assert!(!EventKind::CreateThread.has(Field::Heap));
    }
}
