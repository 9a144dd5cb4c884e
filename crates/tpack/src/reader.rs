//! The tpack reader: blocks in, HATF items out, one at a time. A block
//! whose checksum fails is skipped with a warning (blocks are independent,
//! so every other block still decodes); a block header without its magic
//! is skipped by scanning for the next block magic.
//!
//! Three ways to read, all yielding the same items, warnings and errors:
//! [`Reader::new`] frames, decompresses and decodes on the caller's thread;
//! [`Reader::read_ahead`] runs the framer (crate::framer) on a thread of
//! its own, one block ahead; [`Reader::parallel`] decodes whole blocks on
//! several threads (crate::parallel). Memory: a block's body and streams
//! for each layer; for the parallel reader, decoded blocks too.

use std::io::Read;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use tramp_core::{Error, Position, Warning};
use tramp_hatf::spec::{EVENT_KINDS, TAG_COMMENT};
use tramp_hatf::{Event, EventKind, Item};

use crate::error::TpackError;
use crate::framer::{Framed, Framer, Streams};
use crate::model::{Guess, Model};
use crate::parallel::Parallel;
use crate::streams::{
    ATTR_NEW, ATTR_RECENT, Cursor, NAMES, STREAMS, Stream, TABLE, addr_code, time_stream, unzigzag,
    wide,
};
use crate::threads::Threads;
use crate::writer::FORMAT;

/// Why a record does not decode (turned into the reader's error, with its
/// position, only on that cold path). A boxed `str`, so that a `Result`
/// of a decoding step is two words and comes back in registers.
pub struct Bad(Box<str>);

type Dec<T> = Result<T, Bad>;

/// What one step of the serial reader gives (the decoded event by value:
/// kept in the decoder and read back, it stalled on store forwarding).
enum Step {
    End,
    Warning(Warning),
    Comment,
    /// An event, in `Decoder::cur`.
    Event,
}

/// A decoded event's scalars, every one a full word, kept in the decoder
/// (`Decoder::cur`) and read back field by field where the `Event` is
/// built. Moving an event through the `Result`s of the decode chain made
/// the compiler copy it in mixed widths, and a wide load over narrower
/// stores stalls on store forwarding: a quarter of the record loop.
#[derive(Clone, Copy, Default)]
pub(crate) struct Decoded {
    pub kind: u64,
    pub size: u64,
    pub address: u64,
    pub new_address: u64,
    pub thread: u64,
    pub heap: u64,
    pub time: u64,
}

/// What [`Reader::next_entry`] yields: an item, or damage skipped.
pub use tramp_hatf::records::Entry as Next;

/// Reads tpack from any `Read`.
pub struct Reader<R: Read>(Inner<R>);

// One a reader; boxing the serial reader would put an indirection on
// every record's path.
#[allow(clippy::large_enum_variant)]
enum Inner<R: Read> {
    Serial(Serial<R>),
    Parallel(Parallel),
}

impl<R: Read> Reader<R> {
    /// A reader that frames, decompresses and decodes on the caller's thread.
    pub fn new(input: R) -> Self {
        Self::from_framer(Framer::new(input))
    }

    /// A reader over a framer set up by the caller (one that skips blocks
    /// outside a time range, [`Framer::skipping`]).
    pub fn from_framer(framer: Framer<R>) -> Self {
        Reader(Inner::Serial(Serial::new(Feed::Inline(framer))))
    }

    /// Where the next record starts: the offset of its block, and its number.
    pub fn position(&self) -> Position {
        match &self.0 {
            Inner::Serial(s) => s.dec.position(),
            Inner::Parallel(p) => p.position(),
        }
    }

    /// The next item or warning, `Ok(None)` at the end.
    #[inline]
    pub fn next_entry(&mut self) -> Result<Option<Next<'_>>, Error> {
        match &mut self.0 {
            Inner::Serial(s) => s.next_entry(),
            Inner::Parallel(p) => p.next_entry(),
        }
    }

    /// Calls `f` with every item or warning in order until the end, an
    /// error, or `f` breaks; the parallel reader walks its blocks' tables
    /// in place (faster than pulled: docs/benchmarks.md).
    pub fn each_entry(
        &mut self,
        mut f: impl FnMut(&Next<'_>) -> std::ops::ControlFlow<()>,
    ) -> Result<(), Error> {
        match &mut self.0 {
            Inner::Serial(s) => {
                while let Some(entry) = s.next_entry()? {
                    if f(&entry).is_break() {
                        break;
                    }
                }
                Ok(())
            }
            Inner::Parallel(p) => p.each_entry(f),
        }
    }

    /// The next item; skipped damage is an error here (use [`Reader::next_entry`]
    /// to read past it).
    #[inline]
    pub fn next_item(&mut self) -> Result<Option<Item<'_>>, Error> {
        // Each way straight to its items: going through `next_entry` and
        // its `Next` copied every event once more (a quarter slower).
        match &mut self.0 {
            Inner::Serial(s) => s.next_item(),
            Inner::Parallel(p) => {
                let record = p.position().record;
                match p.next_entry()? {
                    None => Ok(None),
                    Some(Next::Item(i)) => Ok(Some(i)),
                    Some(Next::Warning(w)) => Err(damage(w, record)),
                }
            }
        }
    }
}

/// Skipped damage as an error (for [`Reader::next_item`]).
#[cold]
fn damage(w: Warning, record: u64) -> Error {
    Error::decode(
        FORMAT,
        Position::new(w.offset, record),
        TpackError::Stream {
            stream: "block",
            why: w.message,
        },
    )
}

impl<R: Read + Send + 'static> Reader<R> {
    /// A reader whose framer (reading, checksums, decompression) runs on a
    /// thread of its own, one block ahead of the decoding on the caller's
    /// thread. The error is the system's when no thread can be started.
    pub fn read_ahead(input: R) -> std::io::Result<Self> {
        let (tx, blocks) = sync_channel(1);
        let (spare, spares) = sync_channel::<Streams>(2);
        let mut threads = Threads::default();
        let token = threads.token();
        let h = std::thread::Builder::new()
            .name("tpack-blocks".into())
            .spawn(move || {
                let _running = token;
                let mut framer = Framer::new(input);
                loop {
                    let buffers = spares.try_recv().unwrap_or_default();
                    let framed = framer.next(buffers);
                    let last = !matches!(framed, Ok(Framed::Block { .. } | Framed::Skipped(_)));
                    // A send fails when the reader was dropped: stop.
                    if tx.send(framed).is_err() || last {
                        break;
                    }
                }
            })?;
        threads.push(h);
        Ok(Reader(Inner::Serial(Serial::new(Feed::Ahead {
            blocks,
            spare,
            threads,
        }))))
    }

    /// A reader that decodes `workers` blocks at a time, each on a thread
    /// of its own, while a further thread reads the blocks; the caller
    /// takes the records in order. Memory: decoded blocks (32 bytes a
    /// record) of [`crate::parallel::RECORD_BUDGET`] records at most, or one
    /// block larger than that, besides the one being read. The error is
    /// the system's when no thread can be started.
    pub fn parallel(input: R, workers: usize) -> std::io::Result<Self> {
        Self::parallel_within(input, workers, crate::parallel::RECORD_BUDGET)
    }

    /// [`Reader::parallel`] with another budget of records out at once.
    pub fn parallel_within(input: R, workers: usize, budget: u64) -> std::io::Result<Self> {
        Self::parallel_from(Framer::new(input), workers, budget)
    }

    /// [`Reader::parallel_within`] over a framer set up by the caller.
    pub fn parallel_from(framer: Framer<R>, workers: usize, budget: u64) -> std::io::Result<Self> {
        Ok(Reader(Inner::Parallel(Parallel::start(
            framer, workers, budget,
        )?)))
    }
}

/// Where the serial reader's blocks come from.
enum Feed<R: Read> {
    /// The framer, called in line.
    Inline(Framer<R>),
    /// The framer on its thread: blocks in order, and a way back for used
    /// buffers (the thread last: dropped after the channels).
    Ahead {
        blocks: Receiver<Result<Framed, Error>>,
        spare: SyncSender<Streams>,
        threads: Threads,
    },
}

/// Decodes the records of one block after another on the caller's thread.
struct Serial<R: Read> {
    feed: Feed<R>,
    dec: Decoder,
    done: bool,
}

impl<R: Read> Serial<R> {
    fn new(feed: Feed<R>) -> Self {
        Serial {
            feed,
            dec: Decoder::new(),
            done: false,
        }
    }

    /// Decodes the next record, or returns a warning about skipped damage,
    /// or the end.
    fn advance(&mut self) -> Result<Step, Error> {
        while self.dec.left == 0 {
            if let Some(e) = self.dec.trailing_error() {
                self.done = true;
                return Err(e);
            }
            if self.done {
                return Ok(Step::End);
            }
            if let Some(w) = self.next_block()? {
                return Ok(Step::Warning(w));
            }
        }
        match self.dec.decode_record() {
            Ok(true) => Ok(Step::Event),
            Ok(false) => Ok(Step::Comment),
            Err(e) => {
                self.done = true;
                self.dec.left = 0;
                Err(e)
            }
        }
    }

    fn next_entry(&mut self) -> Result<Option<Next<'_>>, Error> {
        Ok(match self.advance()? {
            Step::End => None,
            Step::Warning(w) => Some(Next::Warning(w)),
            Step::Comment => Some(Next::Item(Item::Comment(&self.dec.comment))),
            Step::Event => Some(Next::Item(self.dec.item())),
        })
    }

    fn next_item(&mut self) -> Result<Option<Item<'_>>, Error> {
        match self.advance()? {
            Step::End => Ok(None),
            Step::Comment => Ok(Some(Item::Comment(&self.dec.comment))),
            Step::Event => Ok(Some(self.dec.item())),
            Step::Warning(w) => Err(damage(w, self.dec.record)),
        }
    }

    /// Takes the next block from the framer; `Ok(Some(w))` when damage was
    /// skipped to find it, `Ok(None)` with `done` set at the end. (Never
    /// inlined: it is rare and would weigh on every record's stack frame.)
    #[inline(never)]
    fn next_block(&mut self) -> Result<Option<Warning>, Error> {
        let used = self.dec.take_streams();
        let framed = match &mut self.feed {
            Feed::Inline(f) => f.next(used),
            Feed::Ahead {
                blocks,
                spare,
                threads,
            } => {
                // The framer's thread may not want buffers now; a buffer
                // dropped is only allocated again.
                let _ = spare.try_send(used);
                let framed = blocks.recv().unwrap_or_else(|_| {
                    Err(std::io::Error::other("tpack's block reading thread stopped").into())
                });
                // Its last message: the thread is ending.
                threads.finished = !matches!(framed, Ok(Framed::Block { .. } | Framed::Skipped(_)));
                framed
            }
        };
        match framed {
            Err(e) => {
                self.done = true;
                Err(e)
            }
            Ok(Framed::End) => {
                self.done = true;
                Ok(None)
            }
            Ok(Framed::Skipped(w)) => {
                self.dec.block_start = w.offset;
                Ok(Some(w))
            }
            Ok(Framed::Block {
                start,
                records,
                streams,
                version,
            }) => {
                self.dec.start_block(start, records, streams, version);
                Ok(None)
            }
        }
    }
}

/// Decodes the records of a block from its streams with the model.
pub(crate) struct Decoder {
    /// The offset of the block's header.
    pub block_start: u64,
    streams: [Cursor; STREAMS],
    model: Model,
    /// The event last decoded.
    pub cur: Decoded,
    /// Records left in the current block.
    pub left: u32,
    /// Records decoded in all (the blocks before included).
    pub record: u64,
    /// Record index within the block.
    in_block: u64,
    /// Whether the last event has attributes (the recent table's front).
    pub has_attrs: bool,
    /// Whether they are those of the event before it that had any (code 1:
    /// the table's front, unmoved).
    pub attrs_same: bool,
    /// The comment last decoded.
    pub comment: Vec<u8>,
    /// A stream the last block did not use up (reported before the next block).
    trailing: Option<usize>,
    /// The block is of format version 1 (times as zigzag varints, ages and
    /// new sizes as varints).
    version_1: bool,
    /// The block's format version.
    version: u8,
}

impl Decoder {
    pub fn new() -> Self {
        Decoder {
            block_start: 0,
            streams: Default::default(),
            model: Model::new(),
            cur: Decoded::default(),
            left: 0,
            record: 0,
            in_block: 0,
            has_attrs: false,
            attrs_same: false,
            comment: Vec::new(),
            trailing: None,
            version_1: false,
            version: crate::MAGIC[6],
        }
    }

    pub fn position(&self) -> Position {
        Position::new(self.block_start, self.record)
    }

    /// The streams' buffers, for reuse.
    pub fn take_streams(&mut self) -> Streams {
        std::array::from_fn(|i| std::mem::take(&mut self.streams[i].data))
    }

    /// Starts a block: its header's offset, its records, its streams and
    /// its file's format version.
    pub fn start_block(&mut self, start: u64, records: u32, streams: Streams, version: u8) {
        self.block_start = start;
        self.version_1 = version == 1;
        self.version = version;
        for (c, data) in self.streams.iter_mut().zip(streams) {
            c.data = data;
            c.pos = 0;
        }
        self.left = records;
        self.in_block = 0;
        self.model.reset();
        // The count is outside the block's checksum: a block that claims no
        // records must hold no data either, or it is damage (no record of
        // it would ever end the block and check its streams).
        if records == 0 {
            self.end_block();
        }
    }

    /// The error for a block whose streams hold more than its records used
    /// (once, after its last record).
    pub fn trailing_error(&mut self) -> Option<Error> {
        let i = self.trailing.take()?;
        let b = self.bad(format!(
            "the block's records end before its {} stream",
            NAMES[i]
        ));
        Some(self.record_error(b))
    }

    /// The attributes of the event last decoded.
    #[inline(always)]
    pub fn attributes_value(&self) -> &[u8] {
        // A record's attributes are always the front of the recent table
        // (found entries move there, new ones are inserted there).
        if self.has_attrs {
            self.model.attr_front_value()
        } else {
            &[]
        }
    }

    #[cold]
    fn bad(&self, why: impl Into<String>) -> Bad {
        Bad(why.into().into_boxed_str())
    }

    /// A record that does not decode, as the reader's error.
    #[cold]
    fn record_error(&self, b: Bad) -> Error {
        Error::decode(
            FORMAT,
            Position::new(self.block_start, self.record),
            TpackError::Record {
                record: self.in_block,
                why: b.0.into_string(),
            },
        )
    }

    #[inline(always)]
    fn get(&mut self, s: Stream) -> Dec<u8> {
        match self.streams[s as usize].byte() {
            Some(b) => Ok(b),
            None => Err(self.bad(format!("stream {} ends early", NAMES[s as usize]))),
        }
    }

    #[inline(always)]
    fn var(&mut self, s: Stream) -> Dec<u64> {
        match self.streams[s as usize].varint() {
            Some(v) => Ok(v),
            None => Err(self.bad(format!(
                "stream {} ends early or holds a bad varint",
                NAMES[s as usize]
            ))),
        }
    }

    /// A decoded event with its attributes, lent from the decoder.
    #[inline(always)]
    fn item(&self) -> Item<'_> {
        // Each field read alone (`black_box`): merged into 16-byte loads
        // over the 8-byte stores that wrote them, they stall on store
        // forwarding.
        let e = &self.cur;
        let w = std::hint::black_box;
        let attributes = self.attributes_value();
        Item::Event(Event {
            kind: EVENT_KINDS[e.kind as usize],
            size: w(e.size),
            address: w(e.address),
            new_address: w(e.new_address),
            thread: w(e.thread),
            heap: w(e.heap),
            time: w(e.time),
            attributes,
        })
    }

    /// Decodes one record from the block's streams: the event, or `None`
    /// for a comment (in `self.comment`).
    #[inline(always)]
    pub fn decode_record(&mut self) -> Result<bool, Error> {
        self.decode_inner().map_err(|b| self.record_error(b))
    }

    #[inline(always)]
    fn decode_inner(&mut self) -> Dec<bool> {
        let tag = self.get(Stream::Kind)?;
        if tag == TAG_COMMENT {
            let n = self.var(Stream::Comment)?;
            let c = &mut self.streams[Stream::Comment as usize];
            match c.bytes(usize::try_from(n).unwrap_or(usize::MAX)) {
                Some(b) => {
                    self.comment.clear();
                    self.comment.extend_from_slice(b);
                }
                None => return Err(self.bad("comment cut short")),
            }
            self.end_record();
            return Ok(false);
        }
        let Some(kind) = EventKind::from_tag(tag) else {
            return Err(self.bad(format!("unknown record kind {tag}")));
        };
        // Scalars first, the event built once at the end (filling a stack
        // event field by field and copying it stalled on store forwarding).
        let (mut size, mut address, mut new_address) = (0, 0, 0);
        let has_heap = match kind {
            EventKind::Alloc => {
                size = self.size()?;
                let (a, g) = self.predicted_address(size, None)?;
                address = a;
                self.model.allocated(address, size, g);
                true
            }
            EventKind::Free => {
                address = self.freed_address(true)?.0;
                true
            }
            EventKind::ReallocNoAlloc
            | EventKind::ReallocAllocFree
            | EventKind::ReallocAlloc
            | EventKind::ReallocFree => {
                size = self.size()?;
                let (old, found) = self.freed_address(false)?;
                address = old;
                if kind == EventKind::ReallocNoAlloc
                    && let Some(i) = found
                {
                    self.model.resized(i, size);
                }
                new_address = self.predicted_address(size, Some(address))?.0;
                self.model.last_realloc_new = new_address;
                true
            }
            EventKind::CreateHeap | EventKind::DestroyHeap => true,
            EventKind::CreateThread | EventKind::DestroyThread => false,
        };
        let (thread, heap) = self.heap_thread(has_heap)?;
        let dt = self.time_delta(kind == EventKind::Alloc)?;
        self.model.time = self.model.time.wrapping_add(dt as u64);
        self.attributes()?;
        self.end_record();
        self.cur = Decoded {
            kind: kind as u64,
            size,
            address,
            new_address,
            thread,
            heap,
            time: self.model.time,
        };
        Ok(true)
    }

    #[inline(always)]
    fn end_record(&mut self) {
        self.left -= 1;
        self.record += 1;
        self.in_block += 1;
        if self.left == 0 {
            self.end_block();
        }
    }

    /// After a block's last record: every stream must be used up exactly.
    #[cold]
    fn end_block(&mut self) {
        if let Some(i) = self.streams.iter().position(|s| !s.done()) {
            self.trailing = Some(i);
        }
    }

    #[inline(always)]
    fn size(&mut self) -> Dec<u64> {
        let c = self.get(Stream::SizeCode)? as usize;
        if c < TABLE {
            Ok(self.model.size_at(c))
        } else if c == TABLE {
            let v = self.new_size()?;
            self.model.size_insert(v);
            Ok(v)
        } else {
            Err(self.bad(format!("size code {c}")))
        }
    }

    /// Decodes an allocated address and the guess that gave it.
    #[inline]
    fn predicted_address(&mut self, size: u64, old: Option<u64>) -> Dec<(u64, Guess)> {
        let c = self.get(Stream::AddrCode)?;
        let g = match c {
            addr_code::FREED => Guess::Freed(0),
            addr_code::FREED_DEEP => {
                let d = self.var(Stream::AddrAux)?;
                Guess::Freed(usize::try_from(d).unwrap_or(usize::MAX).saturating_add(1))
            }
            addr_code::BUMP => Guess::Bump,
            addr_code::TOP => Guess::Top,
            addr_code::REALLOC_NEW => Guess::ReallocNew,
            addr_code::CLASS_BUMP => Guess::ClassBump,
            addr_code::OTHER => Guess::Other(self.var(Stream::AddrAux)?),
            addr_code::UNKNOWN => {
                Guess::Unknown(usize::try_from(self.var(Stream::AddrAux)?).unwrap_or(usize::MAX))
            }
            addr_code::MISS => {
                let d = unzigzag(self.var(Stream::AddrRaw)?);
                return Ok((
                    self.model.miss_base(size).wrapping_add(d as u64),
                    Guess::Miss,
                ));
            }
            addr_code::SAME_AS_OLD if old.is_some() => {
                return Ok((old.unwrap_or(0), Guess::Miss));
            }
            c => return Err(self.bad(format!("address code {c}"))),
        };
        match self.model.resolve(size, g) {
            Some(a) => Ok((a, g)),
            None => Err(self.bad(format!("address code {c} names no chunk the model has"))),
        }
    }

    /// Decodes a freed (or a realloc's old) address, with the object's
    /// index when it is one of the block's.
    #[inline]
    fn freed_address(&mut self, free: bool) -> Dec<(u64, Option<usize>)> {
        let age = self.free_age()?;
        if age == 0 {
            let d = unzigzag(self.var(Stream::FreeRaw)?);
            let addr = self.model.unknown_base().wrapping_add(d as u64);
            self.model.last_unknown = addr;
            if free {
                self.model.freed_unknown(addr);
            }
            return Ok((addr, None));
        }
        let n = self.model.objects.len() as u64;
        if age > n {
            return Err(self.bad(format!(
                "frees an object of age {age} with {n} allocated in the block"
            )));
        }
        let i = (n - age) as usize;
        if free {
            self.model.freed(i);
        }
        Ok((self.model.objects[i].0, Some(i)))
    }

    /// The event's time − the previous event's (docs/formats/tpack.md,
    /// "Times"). In line only the one-byte case: the rest, and version 1,
    /// out of line (a bigger record loop no longer inlined into callers).
    #[inline(always)]
    fn time_delta(&mut self, alloc: bool) -> Dec<i64> {
        if self.version_1 {
            return self.time_delta_v1(alloc);
        }
        let s = time_stream(alloc, self.model.after_alloc);
        self.model.after_alloc = alloc;
        let b = self.get(s)?;
        if b < wide::WIDE {
            Ok(i64::from(b))
        } else {
            self.wide_time(b)
        }
    }

    #[inline(never)]
    fn time_delta_v1(&mut self, alloc: bool) -> Dec<i64> {
        let s = if alloc {
            Stream::Time
        } else {
            Stream::TimeOther
        };
        Ok(unzigzag(self.var(s)?))
    }

    /// A time delta whose first byte was 254 (wide) or 255 (negative).
    #[inline(never)]
    fn wide_time(&mut self, first: u8) -> Dec<i64> {
        if first == wide::SPECIAL {
            Ok(!(self.var(Stream::TimeRaw)? as i64))
        } else {
            Ok(self.wide_rest(wide::TIME)? as i64)
        }
    }

    /// The rest of a wide value whose first byte was `wide::WIDE`.
    #[inline(always)]
    fn wide_rest(&mut self, parts: wide::Parts) -> Dec<u64> {
        let high = self.get(parts.high)?;
        let r = if high == wide::HIGH_RAW {
            self.var(parts.raw)?.wrapping_add(wide::SPAN)
        } else {
            u64::from(high) << 8 | u64::from(self.get(parts.low)?)
        };
        Ok(r.wrapping_add(u64::from(wide::WIDE)))
    }

    /// A new size: a wide value (version 1: a varint).
    #[inline(always)]
    fn new_size(&mut self) -> Dec<u64> {
        self.wide_field(Stream::SizeRaw, wide::SIZE)
    }

    /// A freed address's age: 0 for an address that is no object of the
    /// block.
    #[inline(always)]
    fn free_age(&mut self) -> Dec<u64> {
        let v = self.wide_field(Stream::FreeAge, wide::AGE)?;
        if v == 0 || self.version_1 {
            return Ok(v);
        }
        self.age_of_code(v)
    }

    /// A wide value in `stream` whose first byte 255 names nothing (version
    /// 1: a varint). In line only the one-byte case: the whole of it in
    /// line made the record loop too big to be inlined into its callers
    /// (5 to 9 % slower).
    #[inline(always)]
    fn wide_field(&mut self, stream: Stream, parts: wide::Parts) -> Dec<u64> {
        let c = &mut self.streams[stream as usize];
        if let Some(&b) = c.data.get(c.pos)
            && b < wide::WIDE
            && !self.version_1
        {
            c.pos += 1;
            return Ok(u64::from(b));
        }
        self.wide_field_rest(stream, parts)
    }

    /// [`Decoder::wide_field`] past its one-byte case: a wide value, the
    /// byte 255 (an error), the stream's end, or version 1.
    #[inline(never)]
    fn wide_field_rest(&mut self, stream: Stream, parts: wide::Parts) -> Dec<u64> {
        if self.version_1 {
            return self.var(stream);
        }
        if self.get(stream)? == wide::SPECIAL {
            return Err(self.bad(format!("{} code 255", NAMES[stream as usize])));
        }
        self.wide_rest(parts)
    }

    /// The age a free-age code ≥ 1 names (never 0).
    #[inline(always)]
    fn age_of_code(&mut self, v: u64) -> Dec<u64> {
        match self.model.age_of_code(v) {
            0 => Err(self.bad("frees an object of age 0")),
            age => Ok(age),
        }
    }

    #[inline(always)]
    /// The thread, and the heap when the record has one (else 0).
    fn heap_thread(&mut self, heap: bool) -> Dec<(u64, u64)> {
        if self.get(Stream::ThreadCode)? != 0 {
            self.model.thread = self.var(Stream::ThreadRaw)?;
        }
        if !heap {
            return Ok((self.model.thread, 0));
        }
        if self.get(Stream::HeapCode)? != 0 {
            self.model.heap = self.var(Stream::HeapRaw)?;
        }
        Ok((self.model.thread, self.model.heap))
    }

    #[inline(always)]
    fn attributes(&mut self) -> Dec<()> {
        let c = self.get(Stream::AttrCode)? as usize;
        self.has_attrs = c != 0;
        if self.version < 3 {
            self.attrs_same = c == 1;
            return self.attributes_v2(c);
        }
        let same = match c {
            0 => Some(false),
            c if c < ATTR_RECENT as usize => self.model.attr_follow(c - 1),
            c if c < ATTR_NEW as usize => self.model.attr_recent(c - ATTR_RECENT as usize),
            c if c == ATTR_NEW as usize => {
                let n = self.var(Stream::AttrRaw)?;
                let r = &mut self.streams[Stream::AttrRaw as usize];
                match r.bytes(usize::try_from(n).unwrap_or(usize::MAX)) {
                    Some(b) => Some(self.model.attr_new(b)),
                    None => return Err(self.bad("attributes cut short")),
                }
            }
            c => return Err(self.bad(format!("attributes code {c}"))),
        };
        match same {
            Some(same) => {
                self.attrs_same = same;
                Ok(())
            }
            None => Err(self.bad(format!("attributes code {c} names no entry"))),
        }
    }

    /// Attributes in blocks of versions 1 and 2: the recent table alone.
    fn attributes_v2(&mut self, c: usize) -> Dec<()> {
        match c {
            0 => {}
            c if c <= TABLE => {
                if !self.model.attr_use(c - 1) {
                    return Err(self.bad(format!("attributes code {c} past the table")));
                }
            }
            c if c == TABLE + 1 => {
                let n = self.var(Stream::AttrRaw)?;
                let r = &mut self.streams[Stream::AttrRaw as usize];
                match r.bytes(usize::try_from(n).unwrap_or(usize::MAX)) {
                    Some(b) => self.model.attr_insert(b),
                    None => return Err(self.bad("attributes cut short")),
                }
            }
            c => return Err(self.bad(format!("attributes code {c}"))),
        }
        Ok(())
    }
}
