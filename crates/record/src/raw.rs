//! The raw log written by the capture library (`docs/formats/capture.md`):
//! a sequence of chunks, each `"TRC1"`, thread id (u32 LE), payload length
//! (u32 LE), the clock at the chunk's start and end as (ns, TSC) pairs (four
//! u64 LE), and a payload of events whose times are TSC deltas. Chunks of
//! one thread are in order; chunks of different threads interleave.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

// The wire format is the capture library's own file, included: linking the
// library (to share it) would interpose on tramp's own heap.
#[path = "../../capture/src/wire.rs"]
mod wire;
pub use wire::*;

#[derive(Debug, thiserror::Error)]
pub enum RawError {
    #[error(transparent)]
    Io(#[from] io::Error),
    #[error("bad chunk magic at byte offset {offset}")]
    Magic { offset: u64 },
    #[error("chunk at byte offset {offset} claims {len} bytes (at most {MAX_PAYLOAD})")]
    Length { offset: u64, len: u32 },
    #[error(
        "event {kind} in the chunk at byte offset {offset} is cut short or malformed at payload byte {at}"
    )]
    Event { offset: u64, kind: u8, at: usize },
    #[error("unknown event kind {kind} in the chunk at byte offset {offset}, payload byte {at}")]
    Kind { offset: u64, kind: u8, at: usize },
}

/// Where one chunk is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkRef {
    pub offset: u64,
    pub tid: u32,
    pub len: u32,
    pub base_ns: u64,
    pub base_tsc: u64,
    pub end_ns: u64,
    pub end_tsc: u64,
    /// The chunk ends with a spawn: a thread of the process starts after
    /// `end_tsc`.
    pub spawn: bool,
}

/// Indexes the chunks of a raw log. A cut-off last chunk (the process was
/// killed while writing) ends the index; it is reported in `truncated`.
pub struct Index {
    pub chunks: Vec<ChunkRef>,
    pub truncated: Option<RawError>,
}

pub fn index(path: &Path) -> Result<Index, RawError> {
    let mut f = File::open(path)?;
    let size = f.metadata()?.len();
    let mut chunks = Vec::new();
    let mut offset = 0u64;
    let mut hdr = [0u8; CHUNK_HEADER];
    while offset < size {
        if size - offset < CHUNK_HEADER as u64 {
            return Ok(Index {
                chunks,
                truncated: Some(RawError::Event {
                    offset,
                    kind: 255,
                    at: 0,
                }),
            });
        }
        f.seek(SeekFrom::Start(offset))?;
        f.read_exact(&mut hdr)?;
        let c = match parse_header(&hdr, offset) {
            Ok(c) if offset + CHUNK_HEADER as u64 + c.len as u64 <= size => c,
            Ok(c) => {
                return Ok(Index {
                    chunks,
                    truncated: Some(RawError::Length { offset, len: c.len }),
                });
            }
            Err(e) => {
                return Ok(Index {
                    chunks,
                    truncated: Some(e),
                });
            }
        };
        chunks.push(c);
        offset += CHUNK_HEADER as u64 + c.len as u64;
    }
    Ok(Index {
        chunks,
        truncated: None,
    })
}

/// Parses a chunk header found at byte `offset` of a log: a bad magic or a
/// length no capture buffer can have is damage.
pub fn parse_header(hdr: &[u8; CHUNK_HEADER], offset: u64) -> Result<ChunkRef, RawError> {
    if hdr[..4] != CHUNK_MAGIC {
        return Err(RawError::Magic { offset });
    }
    let tid = u32::from_le_bytes(hdr[4..8].try_into().expect("4 bytes"));
    let word_len = u32::from_le_bytes(hdr[8..12].try_into().expect("4 bytes"));
    let (len, spawn) = (word_len & !CHUNK_SPAWN, word_len & CHUNK_SPAWN != 0);
    let word = |i: usize| u64::from_le_bytes(hdr[i..i + 8].try_into().expect("8 bytes"));
    if len as usize > MAX_PAYLOAD {
        return Err(RawError::Length { offset, len });
    }
    Ok(ChunkRef {
        offset,
        tid,
        len,
        base_ns: word(12),
        base_tsc: word(20),
        end_ns: word(28),
        end_tsc: word(36),
        spawn,
    })
}

/// How a thread's call stacks were taken (the capture's unwinder): stacks
/// taken, those that reused outer frames of the one before (early stops),
/// frames stepped by a rule, and early stops checked against a full
/// unwind (TRAMP_CAPTURE_UNWIND_CHECK) with those that differed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct UnwindStats {
    pub stacks: u64,
    pub early_stops: u64,
    pub frames_unwound: u64,
    pub checks: u64,
    pub mismatches: u64,
}

impl UnwindStats {
    pub fn add(&mut self, o: &UnwindStats) {
        self.stacks += o.stacks;
        self.early_stops += o.early_stops;
        self.frames_unwound += o.frames_unwound;
        self.checks += o.checks;
        self.mismatches += o.mismatches;
    }
}

/// One decoded event. Its `time` is the TSC reading the capture took (the
/// moment that orders it among every thread's events); `tramp record` maps
/// it to nanoseconds with the process's one [`Clock`](crate::clock::Clock).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RawEvent {
    /// `heap` (here and in `Free` and `Realloc`): 0 for the C allocator's
    /// blocks, [`REPORTED_HEAP`] for blocks the program reported from its
    /// own allocator.
    Alloc {
        time: u64,
        size: u64,
        address: u64,
        site: u64,
        heap: u64,
    },
    Free {
        time: u64,
        address: u64,
        /// The call site (pointer captures and reported blocks; 0
        /// otherwise).
        site: u64,
        heap: u64,
    },
    /// `time` is read after the call returned (the new block exists from
    /// then at the latest), `began` before it was made (the old block
    /// existed until then at least).
    Realloc {
        time: u64,
        began: u64,
        size: u64,
        old: u64,
        new: u64,
        site: u64,
        heap: u64,
    },
    ThreadStart {
        time: u64,
    },
    ThreadEnd {
        time: u64,
    },
    /// The thread started another (pthread_create): its first events come
    /// later in the log, with times from here on.
    Spawn {
        time: u64,
    },
    /// The thread's call stack changed: its `keep` outermost frames stay,
    /// `frames` (innermost first) are new inner ones, and inside them the
    /// site of the thread's next allocation or realloc.
    Frames {
        time: u64,
        keep: u64,
        frames: smallvec::SmallVec<[u64; 6]>,
    },
    /// How the thread's stacks were taken (written at its end).
    Unwind {
        time: u64,
        stats: UnwindStats,
    },
    /// The process's resident set size, in bytes.
    Rss {
        time: u64,
        bytes: u64,
    },
    /// A piece of the program's own LeakSanitizer suppressions.
    Lsan {
        time: u64,
        text: Vec<u8>,
    },
    /// A piece of the process's command line (`EV_COMMAND`): `end` 0 when
    /// more follow, 1 at the last, 2 at the last of a line the capture cut.
    Command {
        time: u64,
        end: u8,
        text: Vec<u8>,
    },
    Module {
        time: u64,
        base: u64,
        path: Vec<u8>,
    },
    Process {
        time: u64,
        pid: u64,
        ppid: u64,
        stack_depth: u64,
        /// `--sample`: mean bytes between sample points (0: not sampled).
        sample: u64,
        /// The library was attached to the running process (`record -p`):
        /// blocks allocated before are unknown to the trace.
        attached: bool,
    },
    /// The thread waited this long for `tramp record` to catch up before it
    /// could go on (the capture's back-pressure).
    Stall {
        time: u64,
        waited_ns: u64,
    },
    /// An 8-byte load or store of an instrumented program (`tramp record
    /// --pointers`): the address, the value moved, the instruction.
    Access {
        time: u64,
        store: bool,
        address: u64,
        value: u64,
        site: u64,
    },
}

/// The heap id tramp gives the blocks a program reports from its own
/// allocator (HATF's `heap` field; 0 is the C allocator's).
pub const REPORTED_HEAP: u64 = 1;

fn heap_of(reported: bool) -> u64 {
    if reported { REPORTED_HEAP } else { 0 }
}

/// The value a zigzag varint holds, as the 64 bits a difference adds
/// (tramp-core's codec).
fn unzigzag(v: u64) -> u64 {
    tramp_core::varint::unzigzag(v) as u64
}

impl RawEvent {
    pub fn time(&self) -> u64 {
        match self {
            RawEvent::Alloc { time, .. }
            | RawEvent::Free { time, .. }
            | RawEvent::Realloc { time, .. }
            | RawEvent::ThreadStart { time }
            | RawEvent::ThreadEnd { time }
            | RawEvent::Spawn { time }
            | RawEvent::Frames { time, .. }
            | RawEvent::Unwind { time, .. }
            | RawEvent::Rss { time, .. }
            | RawEvent::Lsan { time, .. }
            | RawEvent::Command { time, .. }
            | RawEvent::Module { time, .. }
            | RawEvent::Process { time, .. }
            | RawEvent::Stall { time, .. }
            | RawEvent::Access { time, .. } => *time,
        }
    }
}

impl RawEvent {
    /// Where the event sits in the merge of a process's threads: its TSC
    /// reading, but for a realloc that ends its old block (moved or freed
    /// it) the reading taken before the call.
    #[inline]
    pub fn key(&self) -> u64 {
        match self {
            RawEvent::Realloc {
                began, old, new, ..
            } if *old != 0 && new != old => *began,
            e => e.time(),
        }
    }

    /// The address a block starts at with this event (an allocation, a
    /// realloc's new block).
    #[inline]
    pub fn starts(&self) -> Option<u64> {
        match self {
            RawEvent::Alloc { address, .. } => Some(*address),
            RawEvent::Realloc { new, old, .. } if *new != 0 && new != old => Some(*new),
            _ => None,
        }
    }

    /// Moves an event without a reading of its own to `tsc` (never back).
    fn set_time(&mut self, tsc: u64) {
        if let RawEvent::Frames { time, .. }
        | RawEvent::Module { time, .. }
        | RawEvent::Process { time, .. }
        | RawEvent::Lsan { time, .. }
        | RawEvent::Command { time, .. } = self
        {
            *time = (*time).max(tsc);
        }
    }

    /// The old block of a realloc (0 for anything else).
    pub fn old(&self) -> u64 {
        match self {
            RawEvent::Realloc { old, .. } => *old,
            _ => 0,
        }
    }

    /// Whether this is a realloc that moved its block (two readings apart).
    #[inline]
    pub fn moves(&self) -> bool {
        matches!(self, RawEvent::Realloc { old, new, began, time, .. }
            if *old != 0 && *new != 0 && old != new && began < time)
    }
}

/// Reads a chunk's payload.
pub fn read_chunk(f: &mut File, c: &ChunkRef, buf: &mut Vec<u8>) -> Result<(), RawError> {
    buf.resize(c.len as usize, 0);
    f.seek(SeekFrom::Start(c.offset + CHUNK_HEADER as u64))?;
    f.read_exact(buf)?;
    Ok(())
}

/// Where decoding is in a chunk's payload, and the running values its
/// differences are taken from.
struct Cursor<'a> {
    c: &'a ChunkRef,
    payload: &'a [u8],
    at: usize,
    kind: u8,
    tsc: u64,
    /// The last address, site and value.
    last: [u64; 3],
}

const ADDR: usize = 0;
const SITE: usize = 1;
const VALUE: usize = 2;

impl<'a> Cursor<'a> {
    fn new(c: &'a ChunkRef, payload: &'a [u8]) -> Cursor<'a> {
        Cursor {
            c,
            payload,
            at: 0,
            kind: 0,
            tsc: c.base_tsc,
            last: [0; 3],
        }
    }

    fn bad(&self) -> RawError {
        RawError::Event {
            offset: self.c.offset,
            kind: self.kind,
            at: self.at,
        }
    }

    /// A LEB128 varint. Most are one or two bytes: those take the short
    /// way, the rest the checked loop.
    #[inline(always)]
    fn varint(&mut self) -> Result<u64, RawError> {
        match self.payload.get(self.at..self.at + 2) {
            Some(&[b0, _]) if b0 < 0x80 => {
                self.at += 1;
                Ok(b0 as u64)
            }
            Some(&[b0, b1]) if b1 < 0x80 => {
                self.at += 2;
                Ok((b0 & 0x7f) as u64 | (b1 as u64) << 7)
            }
            _ => self.varint_long(),
        }
    }

    #[inline(never)]
    fn varint_long(&mut self) -> Result<u64, RawError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&b) = self.payload.get(self.at) else {
                return Err(self.bad());
            };
            self.at += 1;
            v |= ((b & 0x7f) as u64) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(self.bad())
    }

    /// The next address, site or value ([`ADDR`], [`SITE`], [`VALUE`]): a
    /// zigzag difference from the chunk's last of its kind.
    #[inline(always)]
    fn diff(&mut self, which: usize) -> Result<u64, RawError> {
        let d = unzigzag(self.varint()?);
        self.last[which] = self.last[which].wrapping_add(d);
        Ok(self.last[which])
    }

    /// The event's time: its TSC delta comes last (the capture reads the
    /// clock first and uses it last, so its latency overlaps the other
    /// stores).
    #[inline(always)]
    fn clock(&mut self) -> Result<u64, RawError> {
        self.tsc = self.tsc.wrapping_add(self.varint()?);
        Ok(self.tsc)
    }

    /// The event at `at` (there is at least one byte).
    #[inline(always)]
    fn event(&mut self) -> Result<RawEvent, RawError> {
        let kind = self.payload[self.at];
        self.kind = kind;
        self.at += 1;
        // Fields are read in the order written (struct expressions
        // evaluate their fields in source order); addresses, sites and
        // values are differences from the chunk's last.
        Ok(match kind {
            EV_ALLOC | EV_BLOCK_ALLOC => RawEvent::Alloc {
                size: self.varint()?,
                address: self.diff(ADDR)?,
                site: self.diff(SITE)?,
                time: self.clock()?,
                heap: heap_of(kind == EV_BLOCK_ALLOC),
            },
            EV_FREE => RawEvent::Free {
                address: self.diff(ADDR)?,
                site: 0,
                time: self.clock()?,
                heap: 0,
            },
            EV_FREE_AT | EV_BLOCK_FREE => RawEvent::Free {
                address: self.diff(ADDR)?,
                site: self.diff(SITE)?,
                time: self.clock()?,
                heap: heap_of(kind == EV_BLOCK_FREE),
            },
            EV_REALLOC | EV_BLOCK_REALLOC => {
                let size = self.varint()?;
                let old = self.diff(ADDR)?;
                let new = self.diff(ADDR)?;
                let site = self.diff(SITE)?;
                let time = self.clock()?;
                let back = self.varint()?;
                RawEvent::Realloc {
                    time,
                    began: time.saturating_sub(back),
                    size,
                    old,
                    new,
                    site,
                    heap: heap_of(kind == EV_BLOCK_REALLOC),
                }
            }
            EV_LOAD | EV_STORE => RawEvent::Access {
                store: kind == EV_STORE,
                address: self.diff(ADDR)?,
                value: self.diff(VALUE)?,
                site: self.diff(SITE)?,
                time: self.clock()?,
            },
            EV_STALL => RawEvent::Stall {
                waited_ns: self.varint()?,
                time: self.clock()?,
            },
            EV_THREAD_START => RawEvent::ThreadStart {
                time: self.clock()?,
            },
            EV_THREAD_END => RawEvent::ThreadEnd {
                time: self.clock()?,
            },
            _ => self.rare(kind)?,
        })
    }

    /// A length and that many bytes.
    fn byte(&mut self) -> Result<u8, RawError> {
        let Some(&b) = self.payload.get(self.at) else {
            return Err(self.bad());
        };
        self.at += 1;
        Ok(b)
    }

    fn bytes(&mut self) -> Result<Vec<u8>, RawError> {
        let n = self.varint()? as usize;
        let at = self.at;
        let Some(b) = self.payload.get(at..at.saturating_add(n)) else {
            return Err(self.bad());
        };
        self.at += n;
        Ok(b.to_vec())
    }

    /// Events a chunk has few of (or damage).
    #[inline(never)]
    fn rare(&mut self, kind: u8) -> Result<RawEvent, RawError> {
        let time = self.tsc;
        Ok(match kind {
            EV_FRAMES => {
                let keep = self.varint()?;
                let n = self.varint()?;
                if n > 256 || keep > 256 {
                    return Err(self.bad());
                }
                let mut frames = smallvec::SmallVec::with_capacity(n as usize);
                let mut prev = self.last[SITE];
                for _ in 0..n {
                    prev = prev.wrapping_add(unzigzag(self.varint()?));
                    frames.push(prev);
                }
                RawEvent::Frames { time, keep, frames }
            }
            EV_LSAN => RawEvent::Lsan {
                time,
                text: self.bytes()?,
            },
            EV_COMMAND => RawEvent::Command {
                time,
                end: self.byte()?,
                text: self.bytes()?,
            },
            EV_RSS => RawEvent::Rss {
                bytes: self.varint()?,
                time: self.clock()?,
            },
            EV_UNWIND => {
                let stats = UnwindStats {
                    stacks: self.varint()?,
                    early_stops: self.varint()?,
                    frames_unwound: self.varint()?,
                    checks: self.varint()?,
                    mismatches: self.varint()?,
                };
                RawEvent::Unwind {
                    stats,
                    time: self.clock()?,
                }
            }
            EV_MODULE => {
                let base = self.varint()?;
                RawEvent::Module {
                    time,
                    base,
                    path: self.bytes()?,
                }
            }
            EV_SPAWN => RawEvent::Spawn {
                time: self.clock()?,
            },
            EV_PROCESS => RawEvent::Process {
                time,
                pid: self.varint()?,
                ppid: self.varint()?,
                stack_depth: self.varint()?,
                sample: self.varint()?,
                attached: self.varint()? != 0,
            },
            other => {
                return Err(RawError::Kind {
                    offset: self.c.offset,
                    kind: other,
                    at: self.at - 1,
                });
            }
        })
    }
}

/// Decodes a chunk's payload into events (appended to `out`). On damage
/// the events before it are kept in `out`.
pub fn decode_chunk(
    c: &ChunkRef,
    payload: &[u8],
    out: &mut VecDeque<RawEvent>,
) -> Result<(), RawError> {
    let mut cur = Cursor::new(c, payload);
    let mut untimed = None;
    while cur.at < payload.len() {
        push(out, cur.event()?, &mut untimed);
    }
    Ok(())
}

/// Appends an event. Events the capture writes without reading the clock
/// (a stack's frames, a module, the process header, LeakSanitizer text)
/// carry the previous event's reading, which can be long before they were
/// written (a thread that blocked in between): they take the reading of the
/// next event of their chunk, the one they were written for, so that they
/// are not taken for events written late. `untimed`: where in `out` such
/// events wait for it.
fn push(out: &mut VecDeque<RawEvent>, ev: RawEvent, untimed: &mut Option<usize>) {
    let timed = !matches!(
        ev,
        RawEvent::Frames { .. }
            | RawEvent::Module { .. }
            | RawEvent::Process { .. }
            | RawEvent::Lsan { .. }
            | RawEvent::Command { .. }
    );
    if timed {
        if let Some(from) = untimed.take() {
            let key = ev.key();
            for e in out.range_mut(from..) {
                e.set_time(key);
            }
        }
    } else if untimed.is_none() {
        *untimed = Some(out.len());
    }
    out.push_back(ev);
}

/// A chunk decoded a batch of events at a time, so that a reader holds a
/// batch of decoded events per thread rather than a whole chunk's (up to
/// ~2 MB).
pub struct ChunkDecoder {
    c: ChunkRef,
    payload: Vec<u8>,
    at: usize,
    tsc: u64,
    last: [u64; 3],
}

impl ChunkDecoder {
    pub fn new(c: ChunkRef, payload: Vec<u8>) -> ChunkDecoder {
        let tsc = c.base_tsc;
        ChunkDecoder {
            c,
            payload,
            at: 0,
            tsc,
            last: [0; 3],
        }
    }

    /// Decodes up to `n` more events into `out`; on damage the events
    /// before it are kept in `out` and the decoder is spent.
    pub fn decode(&mut self, out: &mut VecDeque<RawEvent>, n: usize) -> Result<(), RawError> {
        let mut cur = Cursor {
            c: &self.c,
            payload: &self.payload,
            at: self.at,
            kind: 0,
            tsc: self.tsc,
            last: self.last,
        };
        // Events without a clock reading of their own go out with the
        // event that gives them one (see `push`).
        let mut untimed = None;
        let mut k = 0;
        while cur.at < cur.payload.len() && (k < n || untimed.is_some()) {
            push(out, cur.event()?, &mut untimed);
            k += 1;
        }
        (self.at, self.tsc, self.last) = (cur.at, cur.tsc, cur.last);
        Ok(())
    }

    /// Whether every event was decoded.
    pub fn done(&self) -> bool {
        self.at >= self.payload.len()
    }
}
