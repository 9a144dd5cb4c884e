//! The tpack reader: blocks in, HATF items out, one at a time. A block
//! whose checksum fails is skipped with a warning (blocks are independent,
//! so every other block still decodes); a block header without its magic
//! is skipped by scanning for the next block magic.
//!
//! Two layers: the framer reads block headers and bodies, checks them and
//! decompresses the streams; the decoder turns the streams into records
//! with the model. [`Reader::read_ahead`] runs the framer on a thread of
//! its own, one block ahead of the decoder, so decompression overlaps with
//! decoding. Memory: a block's body and streams for each layer (three
//! blocks' streams at most when reading ahead).

use std::io::{ErrorKind, Read};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use tramp_core::{Error, Position, Warning};
use tramp_hatf::spec::{EVENT_KINDS, TAG_COMMENT};
use tramp_hatf::{Event, EventKind, Item};

use crate::error::TpackError;
use crate::model::{Guess, Model};
use crate::streams::{Cursor, NAMES, STREAMS, Stream, TABLE, addr_code, get_varint, unzigzag};
use crate::writer::FORMAT;
use crate::{BLOCK_HEADER, BLOCK_MAGIC, MAGIC, MAX_BODY, MAX_RAW};

/// Why a record does not decode (turned into the reader's error, with its
/// position, only on that cold path).
pub struct Bad(String);

type Dec<T> = Result<T, Bad>;

/// What one step of the reader gives (the decoded event by value: kept in
/// the reader and read back, it stalled on store forwarding).
enum Step {
    End,
    Warning(Warning),
    Comment,
    /// An event, in `Reader::cur`.
    Event,
}

/// A decoded event's scalars, every one a full word, kept in the reader
/// (`Reader::cur`) and read back field by field where the `Event` is built.
/// Moving an event through the `Result`s of the decode chain made the
/// compiler copy it in mixed widths, and a wide load over narrower stores
/// stalls on store forwarding: a quarter of the record loop.
#[derive(Clone, Copy, Default)]
struct Decoded {
    kind: u64,
    size: u64,
    address: u64,
    new_address: u64,
    thread: u64,
    heap: u64,
    time: u64,
}

/// What [`Reader::next_entry`] yields: an item, or damage skipped.
pub use tramp_hatf::records::Entry as Next;

/// A block's streams, one buffer per stream.
type Streams = [Vec<u8>; STREAMS];

/// What the framer gives the decoder.
enum Framed {
    /// A block that passed its checksum, its streams decompressed.
    Block {
        /// The offset of its header.
        start: u64,
        records: u32,
        streams: Streams,
    },
    /// Damage skipped.
    Skipped(Warning),
    End,
}

/// The block layer: the file magic, block headers and bodies, checksums,
/// resynchronisation past damage, and decompression of the streams.
struct Framer<R: Read> {
    input: R,
    started: bool,
    /// Decompressed bytes read so far (file offsets: tpack is not itself
    /// wrapped in a stream compressor, though the file may be).
    offset: u64,
    block_start: u64,
    /// Records in the blocks handed on so far (positions in errors: the
    /// decoder asks for a block only when it has decoded every earlier one).
    records: u64,
    body: Vec<u8>,
    /// A header read while resynchronising, to use next.
    pending_header: Option<[u8; BLOCK_HEADER]>,
    /// Bytes read past that header while resynchronising, read again first.
    pushback: Vec<u8>,
    done: bool,
}

/// Where the decoder's blocks come from.
enum Feed<R: Read> {
    /// The framer, called in line.
    Inline(Framer<R>),
    /// The framer on its thread: blocks in order, and a way back for used
    /// buffers.
    Ahead {
        blocks: Receiver<Result<Framed, Error>>,
        spare: SyncSender<Streams>,
    },
}

/// Reads tpack from any `Read`.
pub struct Reader<R: Read> {
    feed: Feed<R>,
    block_start: u64,
    streams: [Cursor; STREAMS],
    model: Model,
    /// The event last decoded.
    cur: Decoded,
    /// Records left in the current block.
    left: u32,
    /// Records delivered in all.
    record: u64,
    /// Record index within the block.
    in_block: u64,
    /// Whether the last event has attributes (the recent table's front).
    has_attrs: bool,
    comment: Vec<u8>,
    done: bool,
    /// A stream the last block did not use up (reported before the next block).
    trailing: Option<usize>,
}

impl<R: Read> Reader<R> {
    /// A reader that frames, decompresses and decodes on the caller's thread.
    pub fn new(input: R) -> Self {
        Self::with_feed(Feed::Inline(Framer::new(input)))
    }

    fn with_feed(feed: Feed<R>) -> Self {
        Reader {
            feed,
            block_start: 0,
            streams: Default::default(),
            model: Model::new(),
            cur: Decoded::default(),
            left: 0,
            record: 0,
            in_block: 0,
            has_attrs: false,
            comment: Vec::new(),
            done: false,
            trailing: None,
        }
    }

    /// Where the next record starts: the offset of its block, and its number.
    pub fn position(&self) -> Position {
        Position::new(self.block_start, self.record)
    }

    /// Decodes the next record, or returns a warning about skipped damage,
    /// or the end.
    fn advance(&mut self) -> Result<Step, Error> {
        while self.left == 0 {
            if let Some(i) = self.trailing.take() {
                self.done = true;
                let b = self.bad(format!(
                    "the block's records end before its {} stream",
                    NAMES[i]
                ));
                return Err(self.record_error(b));
            }
            if self.done {
                return Ok(Step::End);
            }
            if let Some(w) = self.next_block()? {
                return Ok(Step::Warning(w));
            }
        }
        match self.decode_record() {
            Ok(true) => Ok(Step::Event),
            Ok(false) => Ok(Step::Comment),
            Err(e) => {
                self.done = true;
                self.left = 0;
                Err(e)
            }
        }
    }

    /// The next item or warning, `Ok(None)` at the end.
    pub fn next_entry(&mut self) -> Result<Option<Next<'_>>, Error> {
        Ok(match self.advance()? {
            Step::End => None,
            Step::Warning(w) => Some(Next::Warning(w)),
            Step::Comment => Some(Next::Item(Item::Comment(&self.comment))),
            Step::Event => Some(Next::Item(self.item())),
        })
    }

    /// The next item; skipped damage is an error here (use [`Reader::next_entry`]
    /// to read past it).
    pub fn next_item(&mut self) -> Result<Option<Item<'_>>, Error> {
        match self.advance()? {
            Step::End => Ok(None),
            Step::Comment => Ok(Some(Item::Comment(&self.comment))),
            Step::Event => Ok(Some(self.item())),
            Step::Warning(w) => Err(Error::decode(
                FORMAT,
                Position::new(w.offset, self.record),
                TpackError::Stream {
                    stream: "block",
                    why: w.message,
                },
            )),
        }
    }

    /// Takes the next block from the framer; `Ok(Some(w))` when damage was
    /// skipped to find it, `Ok(None)` with `done` set at the end. (Never
    /// inlined: it is rare and would weigh on every record's stack frame.)
    #[inline(never)]
    fn next_block(&mut self) -> Result<Option<Warning>, Error> {
        let used: Streams = std::array::from_fn(|i| std::mem::take(&mut self.streams[i].data));
        let framed = match &mut self.feed {
            Feed::Inline(f) => f.next(used),
            Feed::Ahead { blocks, spare } => {
                // The framer's thread may not want buffers now; a buffer
                // dropped is only allocated again.
                let _ = spare.try_send(used);
                blocks.recv().unwrap_or_else(|_| {
                    Err(std::io::Error::other("tpack's block reading thread stopped").into())
                })
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
                self.block_start = w.offset;
                Ok(Some(w))
            }
            Ok(Framed::Block {
                start,
                records,
                streams,
            }) => {
                self.block_start = start;
                for (c, data) in self.streams.iter_mut().zip(streams) {
                    c.data = data;
                    c.pos = 0;
                }
                self.left = records;
                self.in_block = 0;
                self.model.reset();
                Ok(None)
            }
        }
    }

    #[cold]
    fn bad(&self, why: impl Into<String>) -> Bad {
        Bad(why.into())
    }

    /// A record that does not decode, as the reader's error.
    #[cold]
    fn record_error(&self, b: Bad) -> Error {
        Error::decode(
            FORMAT,
            Position::new(self.block_start, self.record),
            TpackError::Record {
                record: self.in_block,
                why: b.0,
            },
        )
    }

    #[inline]
    fn get(&mut self, s: Stream) -> Dec<u8> {
        match self.streams[s as usize].byte() {
            Some(b) => Ok(b),
            None => Err(self.bad(format!("stream {} ends early", NAMES[s as usize]))),
        }
    }

    #[inline]
    fn var(&mut self, s: Stream) -> Dec<u64> {
        match self.streams[s as usize].varint() {
            Some(v) => Ok(v),
            None => Err(self.bad(format!(
                "stream {} ends early or holds a bad varint",
                NAMES[s as usize]
            ))),
        }
    }

    /// A decoded event with its attributes, lent from the reader.
    #[inline]
    fn item(&self) -> Item<'_> {
        // Each field read alone (`black_box`): merged into 16-byte loads
        // over the 8-byte stores that wrote them, they stall on store
        // forwarding.
        let e = &self.cur;
        let w = std::hint::black_box;
        // A record's attributes are always the front of the recent table
        // (found entries move there, new ones are inserted there).
        let attributes: &[u8] = if self.has_attrs {
            self.model.attr_front_value()
        } else {
            &[]
        };
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
    #[inline]
    fn decode_record(&mut self) -> Result<bool, Error> {
        self.decode_inner().map_err(|b| self.record_error(b))
    }

    #[inline]
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
        let ts = if kind == EventKind::Alloc {
            Stream::Time
        } else {
            Stream::TimeOther
        };
        let dt = unzigzag(self.var(ts)?);
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

    fn end_record(&mut self) {
        self.left -= 1;
        self.record += 1;
        self.in_block += 1;
        if self.left == 0 {
            // Every stream must be used up exactly.
            if let Some(i) = self.streams.iter().position(|s| !s.done()) {
                self.trailing = Some(i);
            }
        }
    }

    #[inline]
    fn size(&mut self) -> Dec<u64> {
        let c = self.get(Stream::SizeCode)? as usize;
        if c < TABLE {
            Ok(self.model.size_at(c))
        } else if c == TABLE {
            let v = self.var(Stream::SizeRaw)?;
            self.model.size_index(v);
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
        let age = self.var(Stream::FreeAge)?;
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

    #[inline]
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

    #[inline]
    fn attributes(&mut self) -> Dec<()> {
        let c = self.get(Stream::AttrCode)? as usize;
        self.has_attrs = c != 0;
        match c {
            0 => {}
            c if c <= TABLE => {
                if self.model.attr_at(c - 1).is_none() {
                    return Err(self.bad(format!("attributes code {c} past the table")));
                }
            }
            c if c == TABLE + 1 => {
                let n = self.var(Stream::AttrRaw)?;
                let r = &mut self.streams[Stream::AttrRaw as usize];
                match r.bytes(usize::try_from(n).unwrap_or(usize::MAX)) {
                    Some(b) => {
                        let v = b.to_vec();
                        self.model.attr_insert(v);
                    }
                    None => return Err(self.bad("attributes cut short")),
                }
            }
            c => return Err(self.bad(format!("attributes code {c}"))),
        }
        Ok(())
    }
}

impl<R: Read + Send + 'static> Reader<R> {
    /// A reader whose framer (reading, checksums, decompression) runs on a
    /// thread of its own, one block ahead of the decoding on the caller's
    /// thread. It yields exactly what [`Reader::new`] yields. The error is
    /// the system's when no thread can be started.
    pub fn read_ahead(input: R) -> std::io::Result<Self> {
        let (tx, blocks) = sync_channel(1);
        let (spare, spares) = sync_channel::<Streams>(2);
        std::thread::Builder::new()
            .name("tpack-blocks".into())
            .spawn(move || {
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
        Ok(Self::with_feed(Feed::Ahead { blocks, spare }))
    }
}

impl<R: Read> Framer<R> {
    fn new(input: R) -> Self {
        Framer {
            input,
            started: false,
            offset: 0,
            block_start: 0,
            records: 0,
            body: Vec::new(),
            pending_header: None,
            pushback: Vec::new(),
            done: false,
        }
    }

    fn err(&self, e: TpackError) -> Error {
        Error::decode(FORMAT, Position::new(self.block_start, self.records), e)
    }

    /// Reads up to `buf.len()` bytes; returns how many (fewer only at the end).
    fn fill(&mut self, buf: &mut [u8]) -> Result<usize, Error> {
        let mut n = self.pushback.len().min(buf.len());
        buf[..n].copy_from_slice(&self.pushback[..n]);
        self.pushback.drain(..n);
        while n < buf.len() {
            match self.input.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        self.offset += n as u64;
        Ok(n)
    }

    /// The next block, decompressed into `streams` (buffers to reuse), or
    /// the damage skipped to find it, or the end. After an error, the end.
    fn next(&mut self, streams: Streams) -> Result<Framed, Error> {
        if self.done {
            return Ok(Framed::End);
        }
        let r = self.read_block(streams);
        if r.is_err() {
            self.done = true;
        }
        r
    }

    fn read_block(&mut self, streams: Streams) -> Result<Framed, Error> {
        if !self.started {
            self.started = true;
            let mut m = [0u8; 8];
            let n = self.fill(&mut m)?;
            if n < 8 || m[..6] != MAGIC[..6] {
                return Err(self.err(TpackError::BadMagic));
            }
            if m[6] != MAGIC[6] {
                return Err(self.err(TpackError::Version(m[6])));
            }
        }
        let start = self.offset;
        let header = match self.pending_header.take() {
            Some(h) => h,
            None => {
                let mut h = [0u8; BLOCK_HEADER];
                let n = self.fill(&mut h)?;
                if n == 0 {
                    self.done = true;
                    return Ok(Framed::End);
                }
                if n < BLOCK_HEADER {
                    self.block_start = start;
                    return Err(self.err(TpackError::Truncated("in a block header")));
                }
                h
            }
        };
        let start = if self.pending_header.is_none() && self.offset >= BLOCK_HEADER as u64 {
            self.offset - BLOCK_HEADER as u64
        } else {
            start
        };
        self.block_start = start;
        if header[..4] != BLOCK_MAGIC {
            return self.resync(header, start, "block header damaged (no block magic)");
        }
        let records = u32::from_le_bytes(header[4..8].try_into().unwrap());
        let len = u32::from_le_bytes(header[8..12].try_into().unwrap());
        let crc = u32::from_le_bytes(header[12..16].try_into().unwrap());
        if len > MAX_BODY {
            return self.resync(header, start, &TpackError::BodyTooLarge(len).to_string());
        }
        // Read as the bytes come (a damaged length on a short file does not
        // allocate what it claims).
        let mut body = std::mem::take(&mut self.body);
        body.clear();
        while body.len() < len as usize {
            let at = body.len();
            let want = (len as usize - at).min(1 << 20);
            body.resize(at + want, 0);
            let n = self.fill(&mut body[at..])?;
            body.truncate(at + n);
            if n == 0 {
                break;
            }
        }
        if body.len() < len as usize {
            self.body = body;
            return Err(self.err(TpackError::Truncated("in a block body")));
        }
        let computed = crc32fast::hash(&body);
        if computed != crc {
            self.body = body;
            return Ok(Framed::Skipped(Warning {
                format: FORMAT,
                offset: start,
                message: format!(
                    "block of {records} records skipped: {}",
                    TpackError::Checksum {
                        stored: crc,
                        computed
                    }
                ),
                skipped: BLOCK_HEADER as u64 + len as u64,
            }));
        }
        let r = self.unpack(&body, streams);
        self.body = body;
        let streams = r?;
        self.records += u64::from(records);
        Ok(Framed::Block {
            start,
            records,
            streams,
        })
    }

    /// Scans from a damaged header for the next block magic. The bytes
    /// skipped are reported; the header found is read next.
    #[cold]
    #[inline(never)]
    fn resync(
        &mut self,
        header: [u8; BLOCK_HEADER],
        start: u64,
        why: &str,
    ) -> Result<Framed, Error> {
        let mut window: Vec<u8> = header[1..].to_vec();
        let mut skipped = 1u64;
        loop {
            if let Some(p) = window.windows(4).position(|w| w == BLOCK_MAGIC) {
                skipped += p as u64;
                window.drain(..p);
                while window.len() < BLOCK_HEADER {
                    let mut b = [0u8; 1];
                    if self.fill(&mut b)? == 0 {
                        self.done = true;
                        break;
                    }
                    window.push(b[0]);
                }
                if window.len() >= BLOCK_HEADER {
                    self.pending_header = Some(window[..BLOCK_HEADER].try_into().unwrap());
                    // Bytes read past the header are read again; bytes
                    // still pushed back were never counted as read.
                    let mut rest = window.split_off(BLOCK_HEADER);
                    self.offset -= rest.len() as u64;
                    rest.append(&mut self.pushback);
                    self.pushback = rest;
                } else {
                    skipped += window.len() as u64;
                }
                break;
            }
            let keep = window.len().saturating_sub(3);
            skipped += keep as u64;
            window.drain(..keep);
            let mut b = vec![0u8; 4096];
            let n = self.fill(&mut b)?;
            if n == 0 {
                skipped += window.len() as u64;
                self.done = true;
                break;
            }
            window.extend_from_slice(&b[..n]);
        }
        Ok(Framed::Skipped(Warning {
            format: FORMAT,
            offset: start,
            message: why.to_string(),
            skipped,
        }))
    }

    /// Splits a block body into its decompressed streams.
    #[inline(never)]
    fn unpack(&self, body: &[u8], mut streams: Streams) -> Result<Streams, Error> {
        let mut pos = 0usize;
        let mut entries = [(0u8, 0usize, 0usize); STREAMS];
        let mut total_raw = 0u64;
        for (i, e) in entries.iter_mut().enumerate() {
            let bad = |why: &str| TpackError::Stream {
                stream: NAMES[i],
                why: why.to_string(),
            };
            let cut = || self.err(bad("table cut short"));
            let codec = *body.get(pos).ok_or_else(cut)?;
            pos += 1;
            let raw = get_varint(body, &mut pos).ok_or_else(cut)?;
            let stored = get_varint(body, &mut pos).ok_or_else(cut)?;
            total_raw = total_raw.saturating_add(raw);
            if total_raw > MAX_RAW || stored > body.len() as u64 {
                return Err(self.err(bad("length out of range")));
            }
            *e = (codec, raw as usize, stored as usize);
        }
        let mut at = pos;
        for (i, ((codec, raw, stored), out)) in entries.into_iter().zip(&mut streams).enumerate() {
            let bad = |why: String| TpackError::Stream {
                stream: NAMES[i],
                why,
            };
            let end = at
                .checked_add(stored)
                .filter(|e| *e <= body.len())
                .ok_or_else(|| self.err(bad("data cut short".into())))?;
            let data = &body[at..end];
            at = end;
            out.clear();
            let r = match codec {
                0 => {
                    out.extend_from_slice(data);
                    Ok(())
                }
                1 => zstd::stream::read::Decoder::new(data)
                    .and_then(|d| d.take(raw as u64 + 1).read_to_end(out))
                    .map(|_| ())
                    .map_err(|e| format!("zstd: {e}")),
                2 => liblzma::read::XzDecoder::new(data)
                    .take(raw as u64 + 1)
                    .read_to_end(out)
                    .map(|_| ())
                    .map_err(|e| format!("xz: {e}")),
                3 => flate2::read::GzDecoder::new(data)
                    .take(raw as u64 + 1)
                    .read_to_end(out)
                    .map(|_| ())
                    .map_err(|e| format!("gzip: {e}")),
                c => Err(format!("unknown codec {c}")),
            };
            r.map_err(|e| self.err(bad(e)))?;
            if out.len() != raw {
                return Err(self.err(bad(format!(
                    "{} bytes decompressed, the table says {raw}",
                    out.len()
                ))));
            }
        }
        if at != body.len() {
            return Err(self.err(TpackError::Stream {
                stream: "block",
                why: format!("{} bytes after the last stream", body.len() - at),
            }));
        }
        Ok(streams)
    }
}
