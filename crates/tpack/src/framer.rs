//! The block layer of tpack: the file magic, block headers and bodies,
//! checksums, resynchronisation past damage, and decompression of a
//! block's streams. The record decoder (crate::reader) and the parallel
//! decoder (crate::parallel) take their blocks from here.

use std::io::{ErrorKind, Read};

use tramp_core::{Error, Position, Warning};

use crate::error::TpackError;
use crate::streams::{NAMES, STREAMS, STREAMS_V1, get_varint};
use crate::writer::FORMAT;
use crate::{BLOCK_HEADER, BLOCK_MAGIC, MAGIC, MAX_BODY, MAX_RAW, SUMMARY};

/// A block's streams, one buffer per stream.
pub type Streams = [Vec<u8>; STREAMS];

/// What a version-4 block's summary says of its records: the first
/// event's time, the least and greatest time of its events (`u64::MAX`
/// and 0 when it has none), and how many comments it holds. A reader
/// skips, by these alone, a block it has no use for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Summary {
    pub first: u64,
    pub min: u64,
    pub max: u64,
    pub comments: u32,
}

impl Summary {
    /// The summary as it opens a body.
    pub fn bytes(&self) -> [u8; SUMMARY] {
        let mut b = [0u8; SUMMARY];
        b[..8].copy_from_slice(&self.first.to_le_bytes());
        b[8..16].copy_from_slice(&self.min.to_le_bytes());
        b[16..24].copy_from_slice(&self.max.to_le_bytes());
        b[24..].copy_from_slice(&self.comments.to_le_bytes());
        b
    }

    /// The summary opening `body`, if it has one.
    pub fn of(body: &[u8]) -> Option<Summary> {
        let u = |r: std::ops::Range<usize>| -> Option<u64> {
            Some(u64::from_le_bytes(body.get(r)?.try_into().ok()?))
        };
        Some(Summary {
            first: u(0..8)?,
            min: u(8..16)?,
            max: u(16..24)?,
            comments: u32::from_le_bytes(body.get(24..28)?.try_into().ok()?),
        })
    }

    /// Whether the block has events.
    pub fn has_events(&self) -> bool {
        self.min <= self.max
    }
}

/// A block as stored, its checksum matched.
pub struct RawBlock {
    /// The offset of its header.
    pub start: u64,
    pub records: u32,
    /// Records in the blocks before it.
    pub record_base: u64,
    pub body: Vec<u8>,
    /// The file's format version (1 or 2).
    pub version: u8,
}

impl RawBlock {
    /// Where its first record is (errors in the block name it).
    pub fn position(&self) -> Position {
        Position::new(self.start, self.record_base)
    }
}

/// A block as stored, or what stood in its place.
pub enum Frame {
    Block(RawBlock),
    /// Damage skipped.
    Skipped(Warning),
    End,
}

/// A block with its streams decompressed, or what stood in its place.
// One a block, moved once: boxing the streams would save nothing.
#[allow(clippy::large_enum_variant)]
pub enum Framed {
    Block {
        /// The offset of its header.
        start: u64,
        records: u32,
        streams: Streams,
        /// The file's format version (1 or 2).
        version: u8,
    },
    /// Damage skipped.
    Skipped(Warning),
    End,
}

/// Reads blocks from any `Read`.
pub struct Framer<R: Read> {
    input: R,
    started: bool,
    /// Decompressed bytes read so far (file offsets: tpack is not itself
    /// wrapped in a stream compressor, though the file may be).
    offset: u64,
    block_start: u64,
    /// Records in the blocks handed on so far (positions in errors: a
    /// block's records come after every earlier block's).
    records: u64,
    body: Vec<u8>,
    /// A header read while resynchronising, to use next.
    pending_header: Option<[u8; BLOCK_HEADER]>,
    /// Bytes read past that header while resynchronising, read again first.
    pushback: Vec<u8>,
    done: bool,
    /// The format version the magic named.
    version: u8,
    /// A time range `[lo, hi)` from the first event: blocks wholly outside
    /// it and without comments are skipped by their summaries.
    window: Option<(u64, u64)>,
    /// The first event's time (from the first block with events).
    origin: Option<u64>,
    /// Records in the blocks skipped so.
    pub skipped_records: u64,
}

impl<R: Read> Framer<R> {
    pub fn new(input: R) -> Self {
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
            version: MAGIC[6],
            window: None,
            origin: None,
            skipped_records: 0,
        }
    }

    /// Skips the blocks a selection of `window` (`[lo, hi)` ns from the
    /// first event) has no use for: version-4 blocks whose events all lie
    /// outside it and that hold no comment. The first block with events is
    /// always read (its first event is where the range counts from).
    pub fn skipping(mut self, window: Option<(u64, u64)>) -> Self {
        self.window = window;
        self
    }

    /// Whether a block of this summary lies wholly outside the window.
    fn outside(&mut self, s: &Summary) -> bool {
        let Some((lo, hi)) = self.window else {
            return false;
        };
        if !s.has_events() {
            return false;
        }
        let Some(origin) = self.origin else {
            self.origin = Some(s.first);
            return false;
        };
        if s.comments > 0 {
            return false;
        }
        // As the selection counts: a time before the origin is at 0.
        let after = s.min >= origin.saturating_add(hi);
        let before = lo > 0 && s.max < origin.saturating_add(lo);
        after || before
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
    pub fn next(&mut self, streams: Streams) -> Result<Framed, Error> {
        let r = match self.next_raw() {
            Ok(Frame::Block(b)) => {
                let r = unpack(&b.body, streams, b.position(), b.version);
                self.body = b.body;
                r.map(|streams| Framed::Block {
                    start: b.start,
                    records: b.records,
                    streams,
                    version: b.version,
                })
            }
            Ok(Frame::Skipped(w)) => Ok(Framed::Skipped(w)),
            Ok(Frame::End) => Ok(Framed::End),
            Err(e) => Err(e),
        };
        if r.is_err() {
            self.done = true;
        }
        r
    }

    /// The next block's body as stored (checksum checked), or the damage
    /// skipped to find it, or the end. After an error, the end.
    pub fn next_raw(&mut self) -> Result<Frame, Error> {
        loop {
            if self.done {
                return Ok(Frame::End);
            }
            let r = self.read_frame();
            if r.is_err() {
                self.done = true;
            }
            if let Ok(Frame::Block(b)) = &r
                && b.version >= 4
                && let Some(s) = Summary::of(&b.body)
                && self.outside(&s)
            {
                self.skipped_records += u64::from(b.records);
                continue;
            }
            return r;
        }
    }

    fn read_frame(&mut self) -> Result<Frame, Error> {
        if !self.started {
            self.started = true;
            let mut m = [0u8; 8];
            let n = self.fill(&mut m)?;
            if n < 8 || m[..6] != MAGIC[..6] {
                return Err(self.err(TpackError::BadMagic));
            }
            // Version 1 (times as varints in two streams) still reads.
            if !(1..=MAGIC[6]).contains(&m[6]) {
                return Err(self.err(TpackError::Version(m[6])));
            }
            self.version = m[6];
        }
        let start = self.offset;
        let header = match self.pending_header.take() {
            Some(h) => h,
            None => {
                let mut h = [0u8; BLOCK_HEADER];
                let n = self.fill(&mut h)?;
                if n == 0 {
                    self.done = true;
                    return Ok(Frame::End);
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
        if header[..4] == crate::trailer::MAGIC_TRAILER && self.version >= crate::trailer::SINCE {
            return self.trailer(header, start);
        }
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
            return Ok(Frame::Skipped(Warning {
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
        let record_base = self.records;
        self.records += u64::from(records);
        Ok(Frame::Block(RawBlock {
            start,
            records,
            record_base,
            body,
            version: self.version,
        }))
    }

    /// Reads past the trailer whose header starts with `first` (its body's
    /// checksum, its record count and its footer checked; nothing may
    /// follow it): the end of the records, or the damage found.
    #[cold]
    fn trailer(&mut self, first: [u8; BLOCK_HEADER], start: u64) -> Result<Frame, Error> {
        use crate::trailer::{FOOTER, HEADER, Header, check_footer};
        self.done = true;
        let mut h = [0u8; HEADER];
        h[..BLOCK_HEADER].copy_from_slice(&first);
        let damaged = |why: String, skipped: u64| {
            Ok(Frame::Skipped(Warning {
                format: FORMAT,
                offset: start,
                message: format!("the index after the last block: {why}"),
                skipped,
            }))
        };
        if self.fill(&mut h[BLOCK_HEADER..])? < HEADER - BLOCK_HEADER {
            return damaged("cut short".into(), (self.offset - start).max(1));
        }
        let header = match Header::parse(&h) {
            Ok(h) => h,
            Err(e) => return damaged(e.to_string(), self.offset - start),
        };
        let (mut left, mut crc) = (header.body_len as usize, crc32fast::Hasher::new());
        let mut buf = std::mem::take(&mut self.body);
        buf.resize(1 << 16, 0);
        while left > 0 {
            let n = self.fill(&mut buf[..left.min(1 << 16)])?;
            if n == 0 {
                break;
            }
            crc.update(&buf[..n]);
            left -= n;
        }
        self.body = buf;
        let mut footer = [0u8; FOOTER];
        let got = if left == 0 {
            self.fill(&mut footer)?
        } else {
            0
        };
        let mut rest = [0u8; 1];
        let trailing = got == FOOTER && self.fill(&mut rest)? > 0;
        let skipped = self.offset - start;
        if left > 0 || got < FOOTER {
            return damaged("cut short".into(), skipped);
        }
        if let Err(e) = check_footer(&footer, header.body_len) {
            return damaged(e.to_string(), skipped);
        }
        let computed = crc.finalize();
        if computed != header.crc {
            let e = TpackError::Checksum {
                stored: header.crc,
                computed,
            };
            return damaged(e.to_string(), skipped);
        }
        if header.records != self.records {
            return damaged(
                format!(
                    "it counts {} records, the blocks before it {}",
                    header.records, self.records
                ),
                skipped,
            );
        }
        if trailing {
            return damaged("bytes follow it".into(), 1);
        }
        Ok(Frame::End)
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
    ) -> Result<Frame, Error> {
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
        Ok(Frame::Skipped(Warning {
            format: FORMAT,
            offset: start,
            message: why.to_string(),
            skipped,
        }))
    }
}

/// Splits a block body of format `version` into its streams, decompressed
/// into `streams` (buffers to reuse; those a version-1 table lacks are left
/// empty); errors are reported at `pos`.
pub fn unpack(
    body: &[u8],
    mut streams: Streams,
    pos: Position,
    version: u8,
) -> Result<Streams, Error> {
    let err = |e: TpackError| Error::decode(FORMAT, pos, e);
    let mut pos = 0usize;
    if version >= 4 {
        if body.len() < SUMMARY {
            return Err(err(TpackError::Truncated("in a block summary")));
        }
        pos = SUMMARY;
    }
    let listed = if version == 1 { STREAMS_V1 } else { STREAMS };
    for s in &mut streams[listed..] {
        s.clear();
    }
    let mut entries = [(0u8, 0usize, 0usize); STREAMS];
    let mut total_raw = 0u64;
    for (i, e) in entries[..listed].iter_mut().enumerate() {
        let bad = |why: &str| TpackError::Stream {
            stream: NAMES[i],
            why: why.to_string(),
        };
        let cut = || err(bad("table cut short"));
        let codec = *body.get(pos).ok_or_else(cut)?;
        pos += 1;
        let raw = get_varint(body, &mut pos).ok_or_else(cut)?;
        let stored = get_varint(body, &mut pos).ok_or_else(cut)?;
        total_raw = total_raw.saturating_add(raw);
        if total_raw > MAX_RAW || stored > body.len() as u64 {
            return Err(err(bad("length out of range")));
        }
        *e = (codec, raw as usize, stored as usize);
    }
    let mut at = pos;
    for (i, ((codec, raw, stored), out)) in entries[..listed]
        .iter()
        .copied()
        .zip(&mut streams)
        .enumerate()
    {
        let bad = |why: String| TpackError::Stream {
            stream: NAMES[i],
            why,
        };
        let end = at
            .checked_add(stored)
            .filter(|e| *e <= body.len())
            .ok_or_else(|| err(bad("data cut short".into())))?;
        let data = &body[at..end];
        at = end;
        // The buffer still holds the last block's stream: zstd overwrites
        // it in place (no zeroing first), the others start it afresh.
        if codec != 1 {
            out.clear();
        }
        let r = match codec {
            0 => {
                out.extend_from_slice(data);
                Ok(())
            }
            1 => unzstd(data, raw, out).map_err(|e| format!("zstd: {e}")),
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
        r.map_err(|e| err(bad(e)))?;
        if out.len() != raw {
            return Err(err(bad(format!(
                "{} bytes decompressed, the table says {raw}",
                out.len()
            ))));
        }
    }
    if at != body.len() {
        return Err(err(TpackError::Stream {
            stream: "block",
            why: format!("{} bytes after the last stream", body.len() - at),
        }));
    }
    Ok(streams)
}

/// Decompresses a zstd stream into `out` (which may hold old bytes: they
/// are overwritten or cut off). A frame that states its size,
/// the size the table gives, is decompressed in one call straight into the
/// buffer; the streaming decoder, used otherwise, copies everything once
/// more through its window (a tenth of a block's decoding). The streaming
/// decoder grows the buffer only as data comes, so a table that lies
/// about an unsized frame allocates nothing it claims.
fn unzstd(data: &[u8], raw: usize, out: &mut Vec<u8>) -> std::io::Result<()> {
    if zstd::zstd_safe::get_frame_content_size(data).ok().flatten() == Some(raw as u64) {
        // Exactly `raw` bytes of room, whatever the buffer's capacity from
        // earlier blocks: how far damaged data decodes, and so the error,
        // must not depend on which buffer a reader happened to reuse.
        // Sized from the length it had (the last block's bytes, to be
        // overwritten): only growth is zeroed.
        out.resize(raw, 0);
        let r = zstd::bulk::Decompressor::new()?.decompress_to_buffer(data, &mut out[..]);
        out.truncate(*r.as_ref().unwrap_or(&0));
        return r.map(|_| ());
    }
    // Through a buffer of fixed size, not `read_to_end` into `out`: the
    // streaming decoder's error on damaged data depends on how much room
    // each read offers, which `read_to_end` takes from the buffer's
    // capacity (readers that reuse buffers and readers that do not gave
    // different errors for the same damage; fuzzed).
    out.clear();
    let mut d = zstd::stream::read::Decoder::new(data)?.take(raw as u64 + 1);
    let mut chunk = [0u8; 16 << 10];
    loop {
        match d.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(n) => out.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Sets every block's CRC-32 to the checksum of its body, in place, walking
/// the blocks from the magic while their headers hold; stops at the first
/// header that does not. For tests and fuzzing that damage a body on
/// purpose and want the decoders behind the checksum to see it.
pub fn reseal_checksums(data: &mut [u8]) {
    let mut at = MAGIC.len();
    while at + BLOCK_HEADER <= data.len() && data[at..at + 4] == BLOCK_MAGIC {
        let len = u32::from_le_bytes(data[at + 8..at + 12].try_into().unwrap()) as usize;
        let Some(end) = (at + BLOCK_HEADER)
            .checked_add(len)
            .filter(|e| *e <= data.len())
        else {
            return;
        };
        let crc = crc32fast::hash(&data[at + BLOCK_HEADER..end]);
        data[at + 12..at + 16].copy_from_slice(&crc.to_le_bytes());
        at = end;
    }
}
