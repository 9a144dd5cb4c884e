//! The replay plan's layout, written once for both of its sides: `tramp`
//! writes plans (`tramp_heap::replay::PlanWriter`) and the replay driver
//! (`tramp-replay`, in the capture crate, which has no dependencies)
//! decodes them by including this very file. So it uses `std` alone and
//! no `unsafe`. The layout is described in docs/formats/replay-plan.md.
//!
//! A plan is a 64-byte header, a body of operations, and a trailer with
//! one 16-byte row per replay thread:
//!
//! * header: magic `TRAMPOPS`, version (u32), flags (u32), then u64s:
//!   operations (thread items), slots, threads, heaps, body length and
//!   peak live bytes in plan order; all little-endian.
//! * body: one byte per operation, its code in the low three bits and
//!   [`HEAP_FLAG`] when a heap number follows, then LEB128 numbers.
//! * trailer: per thread, in order of first appearance: the trace's
//!   thread id and how many items the thread executes (u64 each).

/// The first eight bytes of every plan.
pub const MAGIC: [u8; 8] = *b"TRAMPOPS";
/// The layout's version.
pub const VERSION: u32 = 1;
/// Bytes before the first operation.
pub const HEADER_LEN: usize = 64;
/// Bytes per trailer row.
pub const TRAILER_ROW: usize = 16;
/// The longest an encoded operation can be: a code byte and three
/// ten-byte numbers.
pub const MAX_OP_LEN: usize = 31;

/// Operation codes (the low three bits of the code byte).
pub const SWITCH: u8 = 0;
pub const MALLOC: u8 = 1;
pub const FREE: u8 = 2;
pub const REALLOC: u8 = 3;
pub const HEAP_CREATE: u8 = 4;
pub const HEAP_DESTROY: u8 = 5;
pub const THREAD_START: u8 = 6;
/// Set on a malloc, free or realloc in a heap other than heap 0: the heap
/// number follows the operation's other numbers.
pub const HEAP_FLAG: u8 = 8;
/// Set on a realloc that moved its block in the trace: for a moment both
/// blocks were live (what the trace's peak live bytes count).
pub const MOVED_FLAG: u8 = 16;

/// One operation of a plan. Slots, threads and heaps are dense numbers
/// from 0; heap 0 is the allocator's default heap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// The operations that follow belong to this thread (until the next
    /// switch). Not an item of any thread.
    Switch {
        thread: u32,
    },
    /// The thread starts now, before its first operation. Not an item.
    ThreadStart {
        thread: u32,
    },
    Malloc {
        slot: u32,
        size: u64,
        heap: u32,
    },
    Free {
        slot: u32,
        heap: u32,
    },
    /// `moved`: the trace's realloc moved the block (both blocks were
    /// live for a moment).
    Realloc {
        slot: u32,
        size: u64,
        heap: u32,
        moved: bool,
    },
    HeapCreate {
        heap: u32,
    },
    HeapDestroy {
        heap: u32,
    },
}

impl Op {
    /// Whether the operation is one of its thread's items (executed by the
    /// thread and counted in the trailer).
    pub fn is_item(&self) -> bool {
        !matches!(self, Op::Switch { .. } | Op::ThreadStart { .. })
    }
}

/// The header's fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    pub flags: u32,
    /// Thread items in the body (every operation but switches and starts).
    pub items: u64,
    /// Slots the driver needs: slot numbers are below this.
    pub slots: u64,
    /// Threads, and so trailer rows.
    pub threads: u64,
    /// Heaps: heap numbers are below this.
    pub heaps: u64,
    /// Bytes of the body.
    pub body_len: u64,
    /// The most requested bytes live at once, in plan order.
    pub peak_live_bytes: u64,
}

impl Header {
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[..8].copy_from_slice(&MAGIC);
        b[8..12].copy_from_slice(&VERSION.to_le_bytes());
        b[12..16].copy_from_slice(&self.flags.to_le_bytes());
        let words = [
            self.items,
            self.slots,
            self.threads,
            self.heaps,
            self.body_len,
            self.peak_live_bytes,
        ];
        for (i, w) in words.iter().enumerate() {
            b[16 + 8 * i..24 + 8 * i].copy_from_slice(&w.to_le_bytes());
        }
        b
    }

    /// Reads a header, refusing anything but this version's.
    pub fn decode(b: &[u8]) -> Result<Header, String> {
        if b.len() < HEADER_LEN {
            return Err(format!(
                "a replay plan starts with a {HEADER_LEN}-byte header; the input has {} bytes",
                b.len()
            ));
        }
        if b[..8] != MAGIC {
            return Err("not a replay plan (no TRAMPOPS at byte 0)".into());
        }
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
        let version = u32_at(8);
        if version != VERSION {
            return Err(format!(
                "replay plan version {version}; this driver reads version {VERSION}"
            ));
        }
        let h = Header {
            flags: u32_at(12),
            items: u64_at(16),
            slots: u64_at(24),
            threads: u64_at(32),
            heaps: u64_at(40),
            body_len: u64_at(48),
            peak_live_bytes: u64_at(56),
        };
        if h.slots > u32::MAX as u64 || h.threads > u32::MAX as u64 || h.heaps > u32::MAX as u64 {
            return Err(format!(
                "replay plan header out of range: {} slots, {} threads, {} heaps (at most 2^32 each)",
                h.slots, h.threads, h.heaps
            ));
        }
        Ok(h)
    }

    /// The byte offset of the trailer.
    pub fn trailer_offset(&self) -> u64 {
        (HEADER_LEN as u64).saturating_add(self.body_len)
    }

    /// Checks the header against the plan's length in bytes: the body and
    /// trailer fill it exactly, and nothing it counts can be more than
    /// the body holds (every operation takes two bytes or more; every
    /// slot and heap is used by an operation), so that what a reader
    /// allocates for it is bounded by the file's size.
    pub fn check(&self, len: u64) -> Result<(), String> {
        let want = self
            .trailer_offset()
            .checked_add(self.threads.saturating_mul(TRAILER_ROW as u64));
        if want != Some(len) {
            return Err(format!(
                "the plan is {len} bytes; its header says {} bytes of body and {} threads",
                self.body_len, self.threads
            ));
        }
        let ops = self.body_len / 2;
        if self.items > ops
            || self.slots > self.items
            || self.heaps > self.items + 1
            || self.threads > ops
        {
            return Err(format!(
                "the plan's header counts more than its {} body bytes hold: {} operations, {} slots, {} heaps, {} threads",
                self.body_len, self.items, self.slots, self.heaps, self.threads
            ));
        }
        Ok(())
    }
}

/// Appends `v` as LEB128.
#[inline]
fn put(out: &mut [u8; MAX_OP_LEN], n: &mut usize, mut v: u64) {
    while v >= 0x80 {
        out[*n] = (v as u8) | 0x80;
        v >>= 7;
        *n += 1;
    }
    out[*n] = v as u8;
    *n += 1;
}

/// Encodes one operation into `out`, returning its length.
#[inline]
pub fn encode(op: &Op, out: &mut [u8; MAX_OP_LEN]) -> usize {
    let mut n = 1;
    let mut flags = 0;
    let (code, heap) = match *op {
        Op::Switch { thread } => {
            put(out, &mut n, thread as u64);
            (SWITCH, 0)
        }
        Op::ThreadStart { thread } => {
            put(out, &mut n, thread as u64);
            (THREAD_START, 0)
        }
        Op::Malloc { slot, size, heap } => {
            put(out, &mut n, slot as u64);
            put(out, &mut n, size);
            (MALLOC, heap)
        }
        Op::Free { slot, heap } => {
            put(out, &mut n, slot as u64);
            (FREE, heap)
        }
        Op::Realloc {
            slot,
            size,
            heap,
            moved,
        } => {
            put(out, &mut n, slot as u64);
            put(out, &mut n, size);
            if moved {
                flags = MOVED_FLAG;
            }
            (REALLOC, heap)
        }
        Op::HeapCreate { heap } => {
            put(out, &mut n, heap as u64);
            (HEAP_CREATE, 0)
        }
        Op::HeapDestroy { heap } => {
            put(out, &mut n, heap as u64);
            (HEAP_DESTROY, 0)
        }
    };
    out[0] = code | flags;
    if heap != 0 {
        out[0] |= HEAP_FLAG;
        put(out, &mut n, heap as u64);
    }
    n
}

/// Why a plan's body could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The bytes end inside an operation.
    Truncated,
    /// Anything else, said in words.
    Bad(String),
}

/// Reads one LEB128 number at `*at`.
#[inline]
fn get(b: &[u8], at: &mut usize) -> Result<u64, DecodeError> {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let Some(&byte) = b.get(*at) else {
            return Err(DecodeError::Truncated);
        };
        *at += 1;
        if shift == 63 && byte > 1 {
            return Err(DecodeError::Bad("a number longer than 64 bits".into()));
        }
        v |= ((byte & 0x7f) as u64) << shift;
        if byte < 0x80 {
            return Ok(v);
        }
        shift += 7;
    }
}

#[inline]
fn get32(b: &[u8], at: &mut usize, what: &str) -> Result<u32, DecodeError> {
    let v = get(b, at)?;
    u32::try_from(v).map_err(|_| DecodeError::Bad(format!("{what} {v} is over 2^32")))
}

/// Decodes the operation at the start of `b`, returning it and its length.
#[inline]
pub fn decode(b: &[u8]) -> Result<(Op, usize), DecodeError> {
    let Some(&code) = b.first() else {
        return Err(DecodeError::Truncated);
    };
    let mut at = 1;
    let with_heap = code & HEAP_FLAG != 0;
    let moved = code & MOVED_FLAG != 0;
    if code & !(HEAP_FLAG | MOVED_FLAG | 7) != 0 || (moved && code & 7 != REALLOC) {
        return Err(DecodeError::Bad(format!("operation byte {code:#04x}")));
    }
    let op = match code & 7 {
        SWITCH => Op::Switch {
            thread: get32(b, &mut at, "thread")?,
        },
        THREAD_START => Op::ThreadStart {
            thread: get32(b, &mut at, "thread")?,
        },
        MALLOC => Op::Malloc {
            slot: get32(b, &mut at, "slot")?,
            size: get(b, &mut at)?,
            heap: 0,
        },
        FREE => Op::Free {
            slot: get32(b, &mut at, "slot")?,
            heap: 0,
        },
        REALLOC => Op::Realloc {
            slot: get32(b, &mut at, "slot")?,
            size: get(b, &mut at)?,
            heap: 0,
            moved,
        },
        HEAP_CREATE => Op::HeapCreate {
            heap: get32(b, &mut at, "heap")?,
        },
        HEAP_DESTROY => Op::HeapDestroy {
            heap: get32(b, &mut at, "heap")?,
        },
        _ => return Err(DecodeError::Bad(format!("operation code {}", code & 7))),
    };
    if !with_heap {
        return Ok((op, at));
    }
    let h = get32(b, &mut at, "heap")?;
    let op = match op {
        Op::Malloc { slot, size, .. } => Op::Malloc {
            slot,
            size,
            heap: h,
        },
        Op::Free { slot, .. } => Op::Free { slot, heap: h },
        Op::Realloc {
            slot, size, moved, ..
        } => Op::Realloc {
            slot,
            size,
            heap: h,
            moved,
        },
        _ => {
            return Err(DecodeError::Bad(format!(
                "a heap number on operation code {}",
                code & 7
            )));
        }
    };
    Ok((op, at))
}

/// One trailer row: the trace's thread id and the thread's item count.
pub fn decode_trailer_row(b: &[u8; TRAILER_ROW]) -> (u64, u64) {
    (
        u64::from_le_bytes(b[..8].try_into().expect("8 bytes")),
        u64::from_le_bytes(b[8..].try_into().expect("8 bytes")),
    )
}

/// Encodes one trailer row.
pub fn encode_trailer_row(trace_thread: u64, items: u64) -> [u8; TRAILER_ROW] {
    let mut b = [0u8; TRAILER_ROW];
    b[..8].copy_from_slice(&trace_thread.to_le_bytes());
    b[8..].copy_from_slice(&items.to_le_bytes());
    b
}
