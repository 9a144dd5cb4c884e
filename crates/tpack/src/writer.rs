//! The tpack writer: HATF items in, blocks of predicted, split and
//! compressed streams out. Memory is bounded by one block, or with
//! threads by a few blocks' records each (the `pool` module).

use std::io::Write;

use rustc_hash::FxHashMap;
use tramp_core::Error;
use tramp_hatf::spec::TAG_COMMENT;
use tramp_hatf::{Event, EventKind, Item};

use crate::error::TpackError;
use crate::model::{FREE_RING, Guess, Model, chunk};
use crate::pool::Pool;
use crate::streams::{STREAMS, Stream, addr_code, put_varint, time_stream, wide, zigzag};
use crate::table::{Cursor, Table};
use crate::{BLOCK_MAGIC, MAGIC};

pub const FORMAT: &str = "tpack";

/// How each stream of a block is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    /// Stored as is.
    Raw,
    /// zstd at this level (1–22).
    Zstd(i32),
    /// xz (LZMA2) at this preset (0–9).
    Xz(u32),
    /// gzip (deflate) at this level (0–9): the HATF paper's compressor.
    Gzip(u32),
}

impl Codec {
    pub fn id(self) -> u8 {
        match self {
            Codec::Raw => 0,
            Codec::Zstd(_) => 1,
            Codec::Xz(_) => 2,
            Codec::Gzip(_) => 3,
        }
    }

    /// `raw`, `zstd`, `zstd-N`, `xz`, `xz-N`, `gzip`, `gzip-N`.
    pub fn parse(s: &str) -> Option<Codec> {
        let (name, level) = match s.split_once('-') {
            Some((n, l)) => (n, Some(l.parse::<i32>().ok()?)),
            None => (s, None),
        };
        match name {
            "raw" if level.is_none() => Some(Codec::Raw),
            "zstd" => {
                let l = level.unwrap_or(DEFAULT_ZSTD);
                (1..=22).contains(&l).then_some(Codec::Zstd(l))
            }
            "xz" => {
                let l = level.unwrap_or(9);
                (0..=9).contains(&l).then_some(Codec::Xz(l as u32))
            }
            "gzip" => {
                let l = level.unwrap_or(6);
                (0..=9).contains(&l).then_some(Codec::Gzip(l as u32))
            }
            _ => None,
        }
    }
}

/// The zstd level tpack uses unless told otherwise: the streams are
/// already predicted, so higher levels gain little and cost much time.
pub const DEFAULT_ZSTD: i32 = 9;

/// Records per block unless told otherwise.
pub const DEFAULT_BLOCK_RECORDS: usize = 1 << 20;

/// Writer settings.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub codec: Codec,
    /// Records per block (the unit of independence and of memory): at most
    /// [`crate::MAX_BLOCK_RECORDS`]; default 1 Mi.
    pub block_records: usize,
    /// Threads that code blocks: 1 (the default) codes them on the
    /// writer's thread; more code whole blocks at once, each on its own,
    /// and write the same bytes.
    pub threads: usize,
}

/// The most threads a writer codes blocks on.
pub const MAX_THREADS: usize = 64;

/// Threads worth coding on for this machine: its cores, four at most (the
/// thread that feeds the writer keeps up with about two, and each thread
/// adds a block's records, 32 bytes a record, to the writer's memory).
pub fn machine_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
}

impl Options {
    /// `CODEC[,block=N][,threads=N]`: a codec as [`Codec::parse`] takes
    /// it, optionally followed by the records per block (`block=4M`,
    /// `block=65536`; K and M are binary, at most
    /// [`crate::MAX_BLOCK_RECORDS`]) and the threads that code blocks (1 to
    /// [`MAX_THREADS`]).
    pub fn parse(s: &str) -> Option<Options> {
        Options::parse_threads_unless_named(s, 1)
    }

    /// [`Options::parse`], coding on [`machine_threads`] unless `s` names
    /// the threads: how `tramp convert` and `tramp record` take a packing.
    pub fn parse_for_machine(s: &str) -> Option<Options> {
        Options::parse_threads_unless_named(s, machine_threads())
    }

    fn parse_threads_unless_named(s: &str, threads: usize) -> Option<Options> {
        Options::explain(s, threads).ok()
    }

    /// [`Options::parse_for_machine`], or an error naming the part of `s`
    /// that is wrong and what it may be.
    pub fn parse_for_machine_explained(s: &str) -> Result<Options, String> {
        Options::explain(s, machine_threads())
    }

    fn explain(s: &str, threads: usize) -> Result<Options, String> {
        let mut parts = s.split(',');
        let codec = parts.next().unwrap_or("");
        let mut o = Options {
            codec: Codec::parse(codec).ok_or_else(|| {
                format!(
                    "`{codec}` is not a codec: zstd, zstd-1 … zstd-22, xz, xz-0 … xz-9, gzip, gzip-0 … gzip-9, raw"
                )
            })?,
            threads,
            ..Options::default()
        };
        for p in parts {
            if let Some(n) = p.strip_prefix("threads=") {
                o.threads = n
                    .parse()
                    .ok()
                    .filter(|t| (1..=MAX_THREADS).contains(t))
                    .ok_or_else(|| format!("`{p}`: threads are 1 … {MAX_THREADS}"))?;
                continue;
            }
            let Some(n) = p.strip_prefix("block=") else {
                return Err(format!("`{p}` is neither block=N nor threads=N"));
            };
            let bad = || format!("`{p}`: records per block are 1 … 16M");
            let v = tramp_core::units::parse(n, tramp_core::units::Base::Binary)
                .ok()
                .and_then(|v| usize::try_from(v).ok())
                .ok_or_else(bad)?;
            if v == 0 || v > crate::MAX_BLOCK_RECORDS {
                return Err(bad());
            }
            o.block_records = v;
        }
        Ok(o)
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            codec: Codec::Zstd(DEFAULT_ZSTD),
            block_records: DEFAULT_BLOCK_RECORDS,
            threads: 1,
        }
    }
}

/// Stream bytes after which a block is closed early (so that no stream,
/// even of long comments or attributes, grows without bound).
const BLOCK_BYTES: usize = 64 << 20;

/// Stream bytes (all streams) after which a block is closed, well under
/// the readers' [`crate::MAX_RAW`] with the 64 MiB of comments and
/// attributes and one check interval on top.
const STREAM_BYTES: usize = 160 << 20;

/// One block's encoding: the model of the allocator and the streams it
/// fills, written out and reset block by block.
pub(crate) struct Encoder {
    codec: Codec,
    streams: [Vec<u8>; STREAMS],
    model: Model,
    /// Live objects of the block: address → index in `model.objects`.
    live: FxHashMap<u64, u32>,
    /// Freed chunks of the block: address → the number of its free.
    freed_at: FxHashMap<u64, u64>,
    records: u32,
    /// The block's first event's time and its least and greatest, and its
    /// comments: its summary (version 4).
    times: Option<(u64, u64, u64)>,
    comments: u32,
    scratch: Vec<u8>,
    pub totals: [StreamTotal; STREAMS],
    /// Codecs the blocks are also sized under, with the bytes the file
    /// would take under each ([`Writer::sizing`]).
    also: Vec<(Codec, u64)>,
}

/// A stream as a block stores it: its codec's id, and the compressed bytes
/// (`None`: stored as is).
type Stored = (u8, Option<Vec<u8>>);

/// Bytes of one stream over all blocks written: before and after
/// compression.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamTotal {
    pub raw: u64,
    pub stored: u64,
}

/// Adds each stream's totals in `from` to those in `to`.
pub(crate) fn add_totals(to: &mut [StreamTotal; STREAMS], from: &[StreamTotal; STREAMS]) {
    for (t, f) in to.iter_mut().zip(from) {
        t.raw += f.raw;
        t.stored += f.stored;
    }
}

impl Encoder {
    pub fn new(codec: Codec) -> Encoder {
        Encoder {
            codec,
            streams: Default::default(),
            model: Model::with_index(),
            live: FxHashMap::default(),
            freed_at: FxHashMap::default(),
            records: 0,
            times: None,
            comments: 0,
            scratch: Vec::new(),
            totals: Default::default(),
            also: Vec::new(),
        }
    }

    #[inline]
    fn s(&mut self, s: Stream) -> &mut Vec<u8> {
        &mut self.streams[s as usize]
    }

    /// Codes an item (HATF metadata records are encoding, not data: tpack
    /// has its own encoding and drops them).
    pub fn item(&mut self, item: &Item<'_>) {
        match item {
            Item::Event(e) => self.event(e),
            Item::Comment(c) => self.comment(c),
            Item::Meta(_) => {}
        }
    }

    pub fn comment(&mut self, text: &[u8]) {
        self.s(Stream::Kind).push(TAG_COMMENT);
        let c = self.s(Stream::Comment);
        put_varint(c, text.len() as u64);
        c.extend_from_slice(text);
        // A sample of its moment goes with the events around it: a reader
        // skipping the block by its times loses nothing it needs.
        if tramp_core::select::sample_time(text).is_none() {
            self.comments += 1;
        }
        self.records += 1;
    }

    pub fn event(&mut self, ev: &Event<'_>) {
        self.s(Stream::Kind).push(ev.kind.tag());
        match ev.kind {
            EventKind::Alloc => {
                self.size(ev.size);
                self.alloc_address(ev.address, ev.size);
                self.heap_thread(ev, true);
            }
            EventKind::Free => {
                self.freed_address(ev.address, true);
                self.heap_thread(ev, true);
            }
            EventKind::ReallocNoAlloc
            | EventKind::ReallocAllocFree
            | EventKind::ReallocAlloc
            | EventKind::ReallocFree => {
                self.size(ev.size);
                let found = self.freed_address(ev.address, false);
                if ev.kind == EventKind::ReallocNoAlloc
                    && let Some(i) = found
                {
                    self.model.resized(i, ev.size);
                }
                if ev.new_address == ev.address {
                    self.s(Stream::AddrCode).push(addr_code::SAME_AS_OLD);
                } else {
                    self.predicted_address(ev.new_address, ev.size);
                }
                self.model.last_realloc_new = ev.new_address;
                self.heap_thread(ev, true);
            }
            EventKind::CreateHeap | EventKind::DestroyHeap => self.heap_thread(ev, true),
            EventKind::CreateThread | EventKind::DestroyThread => self.heap_thread(ev, false),
        }
        self.times = Some(match self.times {
            None => (ev.time, ev.time, ev.time),
            Some((f, lo, hi)) => (f, lo.min(ev.time), hi.max(ev.time)),
        });
        let dt = ev.time.wrapping_sub(self.model.time) as i64;
        self.model.time = ev.time;
        let alloc = ev.kind == EventKind::Alloc;
        let first = time_stream(alloc, self.model.after_alloc);
        self.model.after_alloc = alloc;
        self.time_delta(first, dt);
        self.attributes(ev.attributes);
        self.records += 1;
    }

    /// A time delta: its first byte in `first`, the rest when it is wide
    /// or negative (docs/formats/tpack.md, "Times").
    #[inline]
    fn time_delta(&mut self, first: Stream, d: i64) {
        if d < 0 {
            self.s(first).push(wide::SPECIAL);
            put_varint(self.s(Stream::TimeRaw), !d as u64);
        } else {
            self.put_wide(first, wide::TIME, d as u64);
        }
    }

    /// A wide value (crate::streams::wide): its first byte in `first`, its
    /// wide parts in `parts`.
    #[inline]
    fn put_wide(&mut self, first: Stream, parts: wide::Parts, v: u64) {
        if v < u64::from(wide::WIDE) {
            self.s(first).push(v as u8);
            return;
        }
        self.s(first).push(wide::WIDE);
        let r = v - u64::from(wide::WIDE);
        if r < wide::SPAN {
            self.s(parts.high).push((r >> 8) as u8);
            self.s(parts.low).push(r as u8);
        } else {
            self.s(parts.high).push(wide::HIGH_RAW);
            put_varint(self.s(parts.raw), r - wide::SPAN);
        }
    }

    #[inline]
    fn size(&mut self, size: u64) {
        match self.model.size_index(size) {
            Some(i) => self.s(Stream::SizeCode).push(i as u8),
            None => {
                self.s(Stream::SizeCode).push(crate::streams::TABLE as u8);
                self.put_wide(Stream::SizeRaw, wide::SIZE, size);
            }
        }
    }

    /// The model's guess for an allocation of `size` at `addr`.
    #[inline]
    fn guess(&self, addr: u64, size: u64) -> Guess {
        let m = &self.model;
        if m.maybe_binned(addr, chunk(size))
            && let Some(d) = m.bin(chunk(size)).and_then(|b| b.depth(addr))
        {
            return Guess::Freed(d);
        }
        if addr == m.bump() {
            Guess::Bump
        } else if addr == m.top {
            Guess::Top
        } else if addr == m.last_realloc_new {
            Guess::ReallocNew
        } else if m.resolve(size, Guess::ClassBump) == Some(addr) {
            Guess::ClassBump
        } else if let Some(seq) = self.freed_at.get(&addr)
            && m.frees - seq <= FREE_RING as u64
        {
            Guess::Other(m.frees - seq)
        } else if let Some(d) = m.unknown_depth(addr) {
            Guess::Unknown(d)
        } else {
            Guess::Miss
        }
    }

    /// Codes an allocated address; returns the guess.
    #[inline]
    fn predicted_address(&mut self, addr: u64, size: u64) -> Guess {
        let g = self.guess(addr, size);
        let (code, aux) = match g {
            Guess::Freed(0) => (addr_code::FREED, None),
            Guess::Freed(d) => (addr_code::FREED_DEEP, Some(d as u64 - 1)),
            Guess::Bump => (addr_code::BUMP, None),
            Guess::Top => (addr_code::TOP, None),
            Guess::ReallocNew => (addr_code::REALLOC_NEW, None),
            Guess::ClassBump => (addr_code::CLASS_BUMP, None),
            Guess::Other(age) => (addr_code::OTHER, Some(age)),
            Guess::Unknown(d) => (addr_code::UNKNOWN, Some(d as u64)),
            Guess::Miss => {
                let d = addr.wrapping_sub(self.model.miss_base(size)) as i64;
                put_varint(&mut self.streams[Stream::AddrRaw as usize], zigzag(d));
                (addr_code::MISS, None)
            }
        };
        self.s(Stream::AddrCode).push(code);
        if let Some(a) = aux {
            put_varint(&mut self.streams[Stream::AddrAux as usize], a);
        }
        g
    }

    #[inline]
    fn alloc_address(&mut self, addr: u64, size: u64) {
        let g = self.predicted_address(addr, size);
        let i = self.model.allocated(addr, size, g);
        self.live.insert(addr, i as u32);
    }

    /// Codes a freed (or a realloc's old) address; returns the object's
    /// index when it is one of the block's.
    #[inline]
    fn freed_address(&mut self, addr: u64, free: bool) -> Option<usize> {
        let found = if free {
            self.live.remove(&addr)
        } else {
            self.live.get(&addr).copied()
        };
        match found {
            Some(i) => {
                let age = (self.model.objects.len() - i as usize) as u64;
                let code = self.model.age_code(age);
                self.put_wide(Stream::FreeAge, wide::AGE, code);
                if free {
                    let seq = self.model.frees;
                    self.freed_at.insert(addr, seq);
                    // Only the last FREE_RING frees can be guessed: drop
                    // older ones now and then, so the map stays small
                    // (in cache) instead of growing with the block.
                    if seq.is_multiple_of(FREE_RING as u64) && self.freed_at.len() > 2 * FREE_RING {
                        self.freed_at.retain(|_, s| seq - *s <= FREE_RING as u64);
                    }
                    self.model.freed(i as usize);
                }
                Some(i as usize)
            }
            None => {
                self.s(Stream::FreeAge).push(0);
                let d = addr.wrapping_sub(self.model.unknown_base()) as i64;
                put_varint(&mut self.streams[Stream::FreeRaw as usize], zigzag(d));
                self.model.last_unknown = addr;
                if free {
                    self.model.freed_unknown(addr);
                }
                None
            }
        }
    }

    #[inline]
    fn heap_thread(&mut self, ev: &Event<'_>, heap: bool) {
        let (t, prev) = (ev.thread, self.model.thread);
        repeat_or_raw(&mut self.streams, Stream::ThreadCode, t, prev);
        self.model.thread = t;
        if heap {
            let (h, prev) = (ev.heap, self.model.heap);
            repeat_or_raw(&mut self.streams, Stream::HeapCode, h, prev);
            self.model.heap = h;
        }
    }

    #[inline]
    fn attributes(&mut self, a: &[u8]) {
        if a.is_empty() {
            self.s(Stream::AttrCode).push(0);
            return;
        }
        use crate::model::AttrCode;
        use crate::streams::{ATTR_NEW, ATTR_RECENT};
        match self.model.attr_code(a) {
            AttrCode::Follower(k) => self.s(Stream::AttrCode).push(k as u8 + 1),
            AttrCode::Recent(i) => self.s(Stream::AttrCode).push(ATTR_RECENT + i as u8),
            AttrCode::New => {
                self.s(Stream::AttrCode).push(ATTR_NEW);
                let r = self.s(Stream::AttrRaw);
                put_varint(r, a.len() as u64);
                r.extend_from_slice(a);
            }
        }
    }

    /// Whether the block's streams have reached [`STREAM_BYTES`] (checked
    /// every 4,096 records: a record adds at most ~100 bytes of numbers).
    #[inline]
    pub fn streams_full(&self) -> bool {
        self.records.is_multiple_of(4096)
            && self.streams.iter().map(Vec::len).sum::<usize>() >= STREAM_BYTES
    }

    /// Each stream as the block stores it under `codec`: the codec's id
    /// and the compressed bytes where compressing makes it smaller, else
    /// 0 and `None` (stored as is).
    fn stored(&self, codec: Codec, record: u64) -> Result<Vec<Stored>, Error> {
        self.streams
            .iter()
            .map(|s| {
                let packed = compress(codec, s)
                    .map_err(|e| Error::encode(FORMAT, record, TpackError::Encode(e)))?;
                Ok(match packed {
                    Some(p) if p.len() < s.len() => (codec.id(), Some(p)),
                    _ => (0, None),
                })
            })
            .collect()
    }

    /// The block's stream table (each stream's codec, raw and stored
    /// lengths) into `self.scratch`; returns the bytes after the header.
    fn stream_table(&mut self, stored: &[Stored]) -> usize {
        self.scratch.clear();
        let mut len = 0;
        for (s, (id, packed)) in self.streams.iter().zip(stored) {
            let d = packed.as_ref().map_or(s.len(), Vec::len);
            self.scratch.push(*id);
            put_varint(&mut self.scratch, s.len() as u64);
            put_varint(&mut self.scratch, d as u64);
            len += d;
        }
        len + self.scratch.len()
    }

    /// Compresses the block's streams, writes the block and starts the
    /// next (`record`: the records written so far, for an error's place).
    /// A sizing encoder also adds what the block takes under each of its
    /// other codecs.
    pub fn flush(&mut self, out: &mut impl Write, record: u64) -> Result<(), Error> {
        if self.records == 0 {
            return Ok(());
        }
        for i in 0..self.also.len() {
            let stored = self.stored(self.also[i].0, record)?;
            let len = self.stream_table(&stored);
            self.also[i].1 += (crate::BLOCK_HEADER + crate::SUMMARY + len) as u64;
        }
        // Compress every stream, then write header, table and the stored
        // streams straight out (the CRC runs over the same slices).
        let stored = self.stored(self.codec, record)?;
        let len = self.stream_table(&stored);
        let data = |i: usize| -> &[u8] { stored[i].1.as_deref().unwrap_or(&self.streams[i]) };
        for (i, (s, total)) in self.streams.iter().zip(&mut self.totals).enumerate() {
            total.raw += s.len() as u64;
            total.stored += data(i).len() as u64;
        }
        let summary = crate::framer::Summary {
            first: self.times.map_or(0, |t| t.0),
            min: self.times.map_or(u64::MAX, |t| t.1),
            max: self.times.map_or(0, |t| t.2),
            comments: self.comments,
        }
        .bytes();
        let len = len + summary.len();
        let mut crc = crc32fast::Hasher::new();
        crc.update(&summary);
        crc.update(&self.scratch);
        for i in 0..STREAMS {
            crc.update(data(i));
        }
        let mut header = [0u8; crate::BLOCK_HEADER];
        header[..4].copy_from_slice(&BLOCK_MAGIC);
        header[4..8].copy_from_slice(&self.records.to_le_bytes());
        header[8..12].copy_from_slice(&(len as u32).to_le_bytes());
        header[12..16].copy_from_slice(&crc.finalize().to_le_bytes());
        out.write_all(&header)?;
        out.write_all(&summary)?;
        out.write_all(&self.scratch)?;
        for i in 0..STREAMS {
            out.write_all(data(i))?;
        }
        for s in &mut self.streams {
            s.clear();
        }
        self.model.reset();
        self.live.clear();
        self.freed_at.clear();
        self.records = 0;
        self.times = None;
        self.comments = 0;
        Ok(())
    }

    /// Codes a table's records from `first` on (the records written before
    /// it), closing blocks early where the streams fill, and writes them
    /// and the last block to `out`.
    pub fn table(&mut self, t: &Table, first: u64, out: &mut Vec<u8>) -> Result<(), Error> {
        let mut cursor = Cursor::default();
        let mut record = first;
        while let Some(item) = cursor.next(t) {
            self.item(&item);
            record += 1;
            if self.streams_full() {
                self.flush(out, record)?;
            }
        }
        self.flush(out, record)
    }
}

/// Writes tpack to any `Write`, on the caller's thread or, with
/// [`Options::threads`] above 1, on that many threads.
///
/// Blocks are cut where the serial and the threaded writer agree, from the
/// records alone: after [`Options::block_records`] records, or once the
/// block's text (comments, and attribute values other than the previous
/// event's) reaches 64 MiB. A block whose streams reach 160 MiB first is
/// closed early, and the next block ends where
/// this one would have. So both write the same bytes.
pub struct Writer<W: Write> {
    out: W,
    opts: Options,
    /// Records written, and those and the text of the block being cut.
    records: u64,
    cut_records: usize,
    cut_bytes: usize,
    /// The attributes of the block's last event that had any (serial).
    last_attrs: Vec<u8>,
    mode: Mode,
    /// The threads asked for, taken up at the next cut.
    want_threads: usize,
    totals: [StreamTotal; STREAMS],
}

enum Mode {
    Serial(Box<Encoder>),
    Threads(Box<Pool>),
}

impl<W: Write> Writer<W> {
    pub fn new(mut out: W, opts: Options) -> Result<Self, Error> {
        out.write_all(&MAGIC)?;
        let opts = Options {
            threads: opts.threads.clamp(1, MAX_THREADS),
            ..opts
        };
        let mode = if opts.threads > 1 {
            Mode::Threads(Box::new(Pool::start(opts)?))
        } else {
            Mode::Serial(Box::new(Encoder::new(opts.codec)))
        };
        Ok(Writer {
            out,
            opts,
            records: 0,
            cut_records: 0,
            cut_bytes: 0,
            last_attrs: Vec::new(),
            mode,
            want_threads: opts.threads.max(1),
            totals: Default::default(),
        })
    }

    /// A writer that models every block once, writes it under `opts`'
    /// codec, and sizes it under each of `also` too: [`Writer::sizes`]
    /// then gives the bytes a file written under each would take, to the
    /// byte (blocks are cut from the records alone, whatever the codec).
    /// For measuring codecs side by side (`tramp sizes`); on one thread.
    pub fn sizing(out: W, opts: Options, also: &[Codec]) -> Result<Self, Error> {
        let mut w = Writer::new(out, Options { threads: 1, ..opts })?;
        if let Mode::Serial(enc) = &mut w.mode {
            enc.also = also.iter().map(|&c| (c, MAGIC.len() as u64)).collect();
        }
        Ok(w)
    }

    /// Writes the last block; returns the underlying writer and, for a
    /// [`Writer::sizing`] writer, the bytes of the file under each of its
    /// other codecs (in their order; empty for any other writer).
    pub fn sizes(mut self) -> Result<(W, Vec<u64>), Error> {
        self.end()?;
        let sizes = match &self.mode {
            Mode::Serial(enc) => enc.also.iter().map(|(_, n)| *n).collect(),
            Mode::Threads(_) => Vec::new(),
        };
        Ok((self.out, sizes))
    }

    /// Writes any item: events and comments (HATF metadata records are
    /// encoding, not data: tpack has its own encoding and drops them).
    pub fn write_item(&mut self, item: &Item<'_>) -> Result<(), Error> {
        match item {
            Item::Event(e) => self.write_event(e),
            Item::Comment(c) => self.write_comment(c),
            Item::Meta(_) => Ok(()),
        }
    }

    pub fn write_comment(&mut self, text: &[u8]) -> Result<(), Error> {
        match &mut self.mode {
            Mode::Serial(enc) => enc.comment(text),
            Mode::Threads(pool) => pool.table.push_comment(text),
        }
        self.cut_bytes += text.len();
        self.end_record()
    }

    pub fn write_event(&mut self, ev: &Event<'_>) -> Result<(), Error> {
        match &mut self.mode {
            Mode::Serial(enc) => {
                // The text a table would store: attributes other than the
                // previous event's.
                let a = ev.attributes;
                if !a.is_empty() && a != self.last_attrs {
                    self.cut_bytes += a.len();
                    self.last_attrs.clear();
                    self.last_attrs.extend_from_slice(a);
                }
                enc.event(ev);
            }
            Mode::Threads(pool) => {
                let before = pool.table.text_bytes();
                pool.table.push_event(ev);
                self.cut_bytes += pool.table.text_bytes() - before;
            }
        }
        self.end_record()
    }

    #[inline]
    fn end_record(&mut self) -> Result<(), Error> {
        self.records += 1;
        self.cut_records += 1;
        let limit = self.opts.block_records.clamp(1, crate::MAX_BLOCK_RECORDS);
        if self.cut_records >= limit || self.cut_bytes >= BLOCK_BYTES {
            self.cut_records = 0;
            self.cut_bytes = 0;
            self.last_attrs.clear();
            self.cut()
        } else if let Mode::Serial(enc) = &mut self.mode
            && enc.streams_full()
        {
            enc.flush(&mut self.out, self.records)
        } else {
            Ok(())
        }
    }

    /// Ends the block being cut: written (serial) or handed to a thread.
    /// Then takes up the threads asked for by [`Writer::set_threads`].
    fn cut(&mut self) -> Result<(), Error> {
        match &mut self.mode {
            Mode::Serial(enc) => enc.flush(&mut self.out, self.records)?,
            Mode::Threads(pool) => pool.submit(self.records, &mut self.out, &mut self.totals)?,
        }
        if self.want_threads != self.threads() {
            self.switch()?;
        }
        Ok(())
    }

    /// The threads blocks are coded on now.
    fn threads(&self) -> usize {
        match &self.mode {
            Mode::Serial(_) => 1,
            Mode::Threads(_) => self.opts.threads,
        }
    }

    /// Codes blocks from the next cut on (at once between blocks) on
    /// `threads` threads, 1 being the writer's own: for a writer that
    /// shares the machine with other work now and then (`tramp record`
    /// codes on its own thread while the program runs, and on every core
    /// once it has ended). The bytes written stay the same.
    pub fn set_threads(&mut self, threads: usize) -> Result<(), Error> {
        self.want_threads = threads.clamp(1, MAX_THREADS);
        // Between blocks the mode starts afresh even at the same count:
        // skipping that measured 6 % slower on one thread (Perl's raw log,
        // alternated) for the same work; the cause was not found (likely
        // where the encoder's memory lands).
        if self.cut_records == 0 {
            self.switch()?;
        }
        Ok(())
    }

    /// Between blocks: ends the current mode (its blocks written, its
    /// totals kept) and starts the one asked for.
    fn switch(&mut self) -> Result<(), Error> {
        // A sizing writer stays on its one encoder.
        if let Mode::Serial(enc) = &self.mode
            && !enc.also.is_empty()
        {
            self.want_threads = 1;
            return Ok(());
        }
        self.settle()?;
        self.opts.threads = self.want_threads;
        self.mode = if self.opts.threads > 1 {
            Mode::Threads(Box::new(Pool::start(self.opts)?))
        } else {
            Mode::Serial(Box::new(Encoder::new(self.opts.codec)))
        };
        Ok(())
    }

    /// Writes every block handed to threads and adds the current mode's
    /// stream totals to the writer's (the mode is spent after).
    fn settle(&mut self) -> Result<(), Error> {
        match &mut self.mode {
            Mode::Serial(enc) => {
                add_totals(&mut self.totals, &enc.totals);
                enc.totals = Default::default();
                Ok(())
            }
            Mode::Threads(pool) => pool.drain(0, &mut self.out, &mut self.totals),
        }
    }

    /// Writes the last block, waits for every block on other threads, and
    /// flushes.
    fn end(&mut self) -> Result<(), Error> {
        self.cut()?;
        self.settle()?;
        self.out.flush()?;
        Ok(())
    }

    /// Writes the last block and returns the stream totals with the
    /// underlying writer.
    pub fn finish(mut self) -> Result<(W, [StreamTotal; STREAMS]), Error> {
        self.end()?;
        Ok((self.out, self.totals))
    }

    /// Writes the last block, flushes, and returns the underlying writer.
    pub fn into_inner(mut self) -> Result<W, Error> {
        self.end()?;
        Ok(self.out)
    }

    /// Writes the last block, then `body` as the file's trailer (a
    /// recording's profile index, [`crate::trailer`]), flushes, and returns
    /// the underlying writer.
    pub fn finish_with_trailer(mut self, body: &[u8]) -> Result<W, Error> {
        self.end()?;
        crate::trailer::write(&mut self.out, self.records, body)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Code 0 for the previous value, else 1 and the value in the raw stream
/// after `code`.
#[inline]
fn repeat_or_raw(streams: &mut [Vec<u8>; STREAMS], code: Stream, v: u64, prev: u64) {
    if v == prev {
        streams[code as usize].push(0);
    } else {
        streams[code as usize].push(1);
        put_varint(&mut streams[code as usize + 1], v);
    }
}

fn compress(codec: Codec, s: &[u8]) -> Result<Option<Vec<u8>>, String> {
    if s.is_empty() {
        return Ok(None);
    }
    match codec {
        Codec::Raw => Ok(None),
        Codec::Zstd(level) => zstd::bulk::compress(s, level)
            .map(Some)
            .map_err(|e| e.to_string()),
        Codec::Gzip(level) => {
            let mut enc =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
            enc.write_all(s).map_err(|e| e.to_string())?;
            enc.finish().map(Some).map_err(|e| e.to_string())
        }
        Codec::Xz(preset) => {
            let mut out = Vec::new();
            let mut enc = liblzma::write::XzEncoder::new(&mut out, preset);
            enc.write_all(s).map_err(|e| e.to_string())?;
            enc.finish().map_err(|e| e.to_string())?;
            Ok(Some(out))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes of docs/formats/tpack.md's table of time codes, written
    /// out by hand for the deltas at each edge.
    #[test]
    fn time_deltas_take_one_byte_a_high_and_a_low_byte_or_a_varint() {
        // d, then the bytes of its first-byte stream, time-high, time-low
        // and time-raw.
        type Case = (
            i64,
            &'static [u8],
            &'static [u8],
            &'static [u8],
            &'static [u8],
        );
        let cases: [Case; 9] = [
            (0, &[0], &[], &[], &[]),
            (253, &[253], &[], &[], &[]),
            (254, &[254], &[0], &[0], &[]),
            (1000, &[254], &[0x02], &[0xea], &[]),
            (254 + 65_279, &[254], &[254], &[255], &[]),
            (254 + 65_280, &[254], &[255], &[], &[0]),
            (254 + 65_280 + 300, &[254], &[255], &[], &[0xac, 0x02]),
            (-1, &[255], &[], &[], &[0]),
            (
                i64::MIN,
                &[255],
                &[],
                &[],
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f],
            ),
        ];
        for (d, first, high, low, raw) in cases {
            let mut w = Encoder::new(Codec::Raw);
            let s = time_stream(false, true);
            w.time_delta(s, d);
            assert_eq!(w.streams[s as usize], first, "{d}");
            assert_eq!(w.streams[Stream::TimeHigh as usize], high, "{d}");
            assert_eq!(w.streams[Stream::TimeLow as usize], low, "{d}");
            assert_eq!(w.streams[Stream::TimeRaw as usize], raw, "{d}");
        }
    }

    /// An event of 8 bytes at `address`.
    fn event(kind: EventKind, address: u64) -> Event<'static> {
        let mut e = Event::new(kind);
        e.address = address;
        e.size = 8;
        e
    }

    /// A writer that has allocated `n` objects, 32 bytes apart from 0x1000.
    fn with_objects(n: u64) -> Encoder {
        let mut w = Encoder::new(Codec::Raw);
        for i in 0..n {
            w.event(&event(EventKind::Alloc, 0x1000 + 32 * i));
        }
        w
    }

    /// Ages are coded against the age before them while ages run close:
    /// objects freed in the order they were made cost the same small code
    /// each, and a realloc's old address is an age like a free's.
    #[test]
    fn ages_are_coded_against_the_age_before_them() {
        let mut w = with_objects(5);
        // Ages 5, 4, 3: zigzag(5) + 1 = 11, then zigzag(-1) + 1 = 2.
        for i in 0..3 {
            w.event(&event(EventKind::Free, 0x1000 + 32 * i));
        }
        // A realloc of the object of age 1 (0x1080), kept live: 1 - 3 = -2,
        // zigzag 3, code 4.
        let mut r = event(EventKind::ReallocNoAlloc, 0x1080);
        r.new_address = 0x1080;
        w.event(&r);
        // An address that is no object of the block: 0, and the age
        // before it stays 1 (age 2 of 0x1060: zigzag(1) + 1 = 3).
        w.event(&event(EventKind::Free, 0x9000));
        w.event(&event(EventKind::Free, 0x1060));
        assert_eq!(w.streams[Stream::FreeAge as usize], [11, 2, 2, 4, 0, 3]);
        for s in [Stream::AgeHigh, Stream::AgeLow, Stream::AgeRaw] {
            assert!(w.streams[s as usize].is_empty());
        }
    }

    /// After two ages more than 64 apart, an age is coded as itself, until
    /// two ages come close again.
    #[test]
    fn ages_far_apart_are_coded_as_themselves() {
        let mut w = with_objects(200);
        // Ages 200 (against 0: far), 100 (as itself), 20 (itself), 21
        // (itself; 1 from 20: near), 25 (against 21: zigzag(4) + 1 = 9).
        for i in [0u64, 100, 180, 179, 175] {
            w.event(&event(EventKind::Free, 0x1000 + 32 * i));
        }
        assert_eq!(
            w.streams[Stream::FreeAge as usize],
            [254, 100, 20, 21, 9],
            "the first: zigzag(200) + 1 = 401, wide"
        );
        assert_eq!(w.streams[Stream::AgeHigh as usize], [0]);
        assert_eq!(w.streams[Stream::AgeLow as usize], [147]); // 401 - 254
    }

    /// Wide values split as docs/formats/tpack.md says, the age and size
    /// streams as the time streams.
    #[test]
    fn wide_ages_take_their_own_streams() {
        let mut w = Encoder::new(Codec::Raw);
        w.put_wide(Stream::FreeAge, wide::AGE, 253);
        w.put_wide(Stream::FreeAge, wide::AGE, 254 + 0x1234);
        w.put_wide(Stream::FreeAge, wide::AGE, 254 + 65_280 + 1);
        assert_eq!(w.streams[Stream::FreeAge as usize], [253, 254, 254]);
        assert_eq!(w.streams[Stream::AgeHigh as usize], [0x12, 255]);
        assert_eq!(w.streams[Stream::AgeLow as usize], [0x34]);
        assert_eq!(w.streams[Stream::AgeRaw as usize], [1]);
        w.put_wide(Stream::SizeRaw, wide::SIZE, 0x10000);
        assert_eq!(w.streams[Stream::SizeRaw as usize], [254]);
        // 0x10000 - 254 = 0xff02: the high byte 255 is taken, so the
        // varint 0xff02 - 65,280 = 2.
        assert_eq!(w.streams[Stream::SizeHigh as usize], [255]);
        assert!(w.streams[Stream::SizeLow as usize].is_empty());
        assert_eq!(w.streams[Stream::SizeWide as usize], [2]);
    }

    /// Each first byte goes to the stream of its event's kind and of the
    /// event before it, and a comment does not count as an event.
    #[test]
    fn a_time_is_coded_in_the_stream_of_its_kind_and_its_predecessor() {
        let mut w = Encoder::new(Codec::Raw);
        let at = |kind: EventKind, time: u64| {
            let mut e = Event::new(kind);
            e.address = 0x1000 + time * 64;
            e.size = 8;
            e.time = time;
            e
        };
        w.event(&at(EventKind::Alloc, 1));
        w.event(&at(EventKind::Alloc, 3));
        w.comment(b"between");
        w.event(&at(EventKind::CreateHeap, 6));
        w.event(&at(EventKind::DestroyHeap, 10));
        w.event(&at(EventKind::Alloc, 15));
        let got = |s: Stream| w.streams[s as usize].clone();
        assert_eq!(got(Stream::Time), [1, 5]);
        assert_eq!(got(Stream::TimeAfterAlloc), [2]);
        assert_eq!(got(Stream::TimeOtherAfterAlloc), [3]);
        assert_eq!(got(Stream::TimeOther), [4]);
    }
}
