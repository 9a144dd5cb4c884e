//! The per-field streams of a block and their byte coding: unsigned LEB128
//! varints, zigzag for signed differences.

/// The streams of a block, in the order their table lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Stream {
    /// One byte per record: the HATF tag (0–9 events, 10 comment).
    Kind = 0,
    /// Per size: 0–15 index in the recent-size table, 16 = a new size.
    SizeCode,
    /// New sizes, a wide value (see [`wide`]; version 1: a varint).
    SizeRaw,
    /// Per allocated address: which prediction hit (see [`addr_code`]).
    AddrCode,
    /// Missed allocated addresses: zigzag delta from the last allocation of
    /// the same class (else the last allocation).
    AddrRaw,
    /// Varints of the deeper address codes: a freed chunk's depth less one
    /// (code 5), the age of a free of another class (code 7), a depth among
    /// chunks freed as unknown objects (code 8).
    AddrAux,
    /// Per freed address: 0 when it is not an object of the block, else
    /// its age's code (`Model::age_code`), a wide value (see [`wide`];
    /// version 1: the age itself, a varint).
    FreeAge,
    /// Unknown freed addresses: zigzag delta from the last unknown one (else
    /// the last allocation).
    FreeRaw,
    /// Per alloc that follows an event of another kind (or starts the
    /// block): the time's first byte (see [`time_stream`]; version 1: the
    /// zigzag varint of the time's delta, for every alloc).
    Time,
    /// The same for every other event (frees, reallocs, heap and thread
    /// life) that follows an event other than an alloc: their delays differ
    /// from an allocation's.
    TimeOther,
    /// Per thread field: 0 = the previous record's thread, 1 = new.
    ThreadCode,
    /// New threads, varint.
    ThreadRaw,
    /// Per heap field: 0 = the previous record's heap, 1 = new.
    HeapCode,
    /// New heaps, varint.
    HeapRaw,
    /// Per record: 0 no attributes, 1–16 index in the recent-attributes
    /// table plus one, 17 = new attributes.
    AttrCode,
    /// New attributes: varint length, then the bytes.
    AttrRaw,
    /// Comments: varint length, then the bytes.
    Comment,
    /// Per alloc right after an alloc: the time's first byte.
    TimeAfterAlloc,
    /// Per other event right after an alloc: the time's first byte.
    TimeOtherAfterAlloc,
    /// The high bytes of wide time deltas (see [`wide`]).
    TimeHigh,
    /// The low bytes of wide time deltas.
    TimeLow,
    /// Varints of the rare time deltas: negative ones (as `!delta`) and the
    /// widest.
    TimeRaw,
    /// The high bytes of wide free-age codes.
    AgeHigh,
    /// The low bytes of wide free-age codes.
    AgeLow,
    /// Varints of the widest free-age codes.
    AgeRaw,
    /// The high bytes of wide new sizes.
    SizeHigh,
    /// The low bytes of wide new sizes.
    SizeLow,
    /// Varints of the widest new sizes.
    SizeWide,
}

/// Streams in a block of the current format version.
pub const STREAMS: usize = 28;

/// Streams in a block of format version 1 (the first 17; times as zigzag
/// varints in [`Stream::Time`] and [`Stream::TimeOther`]).
pub const STREAMS_V1: usize = 17;

pub const NAMES: [&str; STREAMS] = [
    "kind",
    "size-code",
    "size-raw",
    "addr-code",
    "addr-raw",
    "addr-aux",
    "free-age",
    "free-raw",
    "time",
    "time-other",
    "thread-code",
    "thread-raw",
    "heap-code",
    "heap-raw",
    "attr-code",
    "attr-raw",
    "comment",
    "time-aa",
    "time-ao",
    "time-high",
    "time-low",
    "time-raw",
    "age-high",
    "age-low",
    "age-raw",
    "size-high",
    "size-low",
    "size-wide",
];

/// Wide values, from format version 2: an unsigned value v is one byte in
/// its field's stream when it is under 254, which is all for most values;
/// else the byte 254 there, and v − 254 as a high and a low byte in
/// streams of their own, or, when v − 254 is 65,280 or more, the high byte
/// 255 and the varint v − 254 − 65,280 in a third. One byte per value,
/// and the wide parts apart, compress better than varints (whose bytes
/// mix two distributions in one stream): times 13 to 17 % smaller on the
/// CPython, Perl and gcc recordings (docs/formats/tpack.md, decision 9).
/// The first byte 255 is the field's own: a negative time delta (`!d` in
/// time-raw); no age code or size uses it.
pub mod wide {
    use super::Stream;

    /// First bytes below this are the value itself; this one says it is wide.
    pub const WIDE: u8 = 254;
    /// The first byte a field may give a meaning of its own.
    pub const SPECIAL: u8 = 255;
    /// The high byte that says the rest is a varint in the raw stream.
    pub const HIGH_RAW: u8 = 255;
    /// Values of `WIDE` up to `WIDE + SPAN` (excluded) take a high and a
    /// low byte.
    pub const SPAN: u64 = 255 * 256;

    /// The streams of a field's wide parts.
    #[derive(Clone, Copy)]
    pub struct Parts {
        pub high: Stream,
        pub low: Stream,
        pub raw: Stream,
    }

    /// Times' wide parts.
    pub const TIME: Parts = Parts {
        high: Stream::TimeHigh,
        low: Stream::TimeLow,
        raw: Stream::TimeRaw,
    };

    /// Free ages' wide parts.
    pub const AGE: Parts = Parts {
        high: Stream::AgeHigh,
        low: Stream::AgeLow,
        raw: Stream::AgeRaw,
    };

    /// New sizes' wide parts.
    pub const SIZE: Parts = Parts {
        high: Stream::SizeHigh,
        low: Stream::SizeLow,
        raw: Stream::SizeWide,
    };
}

/// The stream of a time's first byte: by the event's kind (an allocation's
/// delay differs from a free's) and whether the event before it in the
/// block was an allocation (an allocation quickly followed by its use and
/// free, or by another allocation, has delays of its own).
#[inline]
pub fn time_stream(alloc: bool, after_alloc: bool) -> Stream {
    match (alloc, after_alloc) {
        (true, false) => Stream::Time,
        (false, false) => Stream::TimeOther,
        (true, true) => Stream::TimeAfterAlloc,
        (false, true) => Stream::TimeOtherAfterAlloc,
    }
}

/// Codes of the [`Stream::AddrCode`] stream.
pub mod addr_code {
    /// The chunk on top of the size class's bin (LIFO reuse).
    pub const FREED: u8 = 0;
    /// Bump-pointer continuation: the last allocation's address plus its
    /// chunk size.
    pub const BUMP: u8 = 1;
    /// The new address of the last realloc (its implied alloc record).
    pub const REALLOC_NEW: u8 = 2;
    /// Not predicted: a zigzag delta in [`super::Stream::AddrRaw`].
    pub const MISS: u8 = 3;
    /// A realloc's new address equal to its old one.
    pub const SAME_AS_OLD: u8 = 4;
    /// A chunk deeper in the class's bin: depth − 1 in [`super::Stream::AddrAux`].
    pub const FREED_DEEP: u8 = 5;
    /// The top pointer (where the last allocation not taken from a bin ended).
    pub const TOP: u8 = 6;
    /// A chunk freed as another class: its free's age in [`super::Stream::AddrAux`].
    pub const OTHER: u8 = 7;
    /// A chunk freed as an unknown object (of an earlier block): its depth
    /// in the LIFO list of such chunks in [`super::Stream::AddrAux`].
    pub const UNKNOWN: u8 = 8;
    /// The last allocation of the same class plus its chunk size.
    pub const CLASS_BUMP: u8 = 9;
}

/// Entries of the recent-size and recent-attributes tables.
pub const TABLE: usize = 16;
/// Version 3's first attr-code of the recent table (codes 1 to 4 are the
/// last attributes' followers, `succession::FOLLOWERS` of them).
pub const ATTR_RECENT: u8 = 1 + crate::succession::FOLLOWERS as u8;
/// Version 3's attr-code of attributes stored in full.
pub const ATTR_NEW: u8 = ATTR_RECENT + TABLE as u8;

pub use tramp_core::varint::{put as put_varint, unzigzag, zigzag};

/// The varint at `*pos` of `b`, moving `pos` past it; `None` when `b` ends
/// first or the value needs more than 64 bits (tramp-core's codec).
#[inline]
pub fn get_varint(b: &[u8], pos: &mut usize) -> Option<u64> {
    tramp_core::varint::get(b, pos).ok()
}

/// A cursor over one decoded stream.
#[derive(Default)]
pub struct Cursor {
    pub data: Vec<u8>,
    pub pos: usize,
}

impl Cursor {
    #[inline]
    pub fn byte(&mut self) -> Option<u8> {
        let b = *self.data.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    #[inline(always)]
    pub fn varint(&mut self) -> Option<u64> {
        // Most values take one byte: that case without the loop.
        if let Some(&b) = self.data.get(self.pos)
            && b < 0x80
        {
            self.pos += 1;
            return Some(u64::from(b));
        }
        get_varint(&self.data, &mut self.pos)
    }

    #[inline]
    pub fn bytes(&mut self, n: usize) -> Option<&[u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.data.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    pub fn done(&self) -> bool {
        self.pos == self.data.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_zigzag() {
        for v in [0u64, 1, 127, 128, 300, u64::MAX] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            let mut c = Cursor { data: b, pos: 0 };
            assert_eq!(c.varint(), Some(v));
            assert!(c.done());
        }
        let mut b = Vec::new();
        put_varint(&mut b, 300);
        assert_eq!(b, [0xac, 0x02]);
        for d in [0i64, -1, 1, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(d)), d);
        }
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
        // Eleven continuation bytes overflow.
        let mut c = Cursor {
            data: vec![0xff; 11],
            pos: 0,
        };
        assert_eq!(c.varint(), None);
    }
}
