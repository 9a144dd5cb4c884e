//! PTF's binary form (§4.1): an ASCII header — the version line, user
//! note lines, a line holding `$` — then events, each a type byte (the
//! [`EventType`] number) and its parameters as LEB128 varints; the signed
//! `Offset` of `adr`/`adw` is zigzag-encoded. Trace.h, the original
//! layout, is not in the seed: this layout is tramp's (docs/formats/ptf.md).

use std::io::{BufRead, Write};

use tramp_core::varint::{put, unzigzag, zigzag};
use tramp_core::window::{Stream, Window};

use crate::event::{Event, EventType, FormatObject};
use crate::out::Buffered;
use crate::{EventSink, EventSource, PtfError};

/// Every binary trace starts with this (then the version number).
pub const VERSION_PREFIX: &str = "PTF ";
/// The version line tramp writes.
pub const VERSION: &str = "PTF 1.0";
/// The header may not be longer than this.
pub const MAX_HEADER: usize = 1 << 20;
/// Bounds on a format object's lists and name (memory stays bounded).
pub const MAX_MEMBERS: u64 = 1 << 20;
pub const MAX_NAME: u64 = 1 << 16;

/// Why a decode stopped.
enum Stop {
    More,
    Bad(String),
}

/// Reads one unsigned LEB128 value at `*at` (tramp-core's codec).
#[inline]
fn leb(d: &[u8], at: &mut usize) -> Result<u64, Stop> {
    use tramp_core::varint::{VarintError, get};
    get(d, at).map_err(|e| match e {
        VarintError::End => Stop::More,
        VarintError::TooLong => Stop::Bad("a varint overflows 64 bits".into()),
    })
}

/// Decodes one event from the start of `d`: the event and its length.
fn decode(d: &[u8]) -> Result<(Event, usize), Stop> {
    let Some(&code) = d.first() else {
        return Err(Stop::More);
    };
    let ty = EventType::from_code(code)
        .ok_or_else(|| Stop::Bad(format!("unknown event type byte {code:#04x}")))?;
    let mut at = 1usize;
    let mut p = [0u64; 6];
    for v in p.iter_mut().take(ty.arity()) {
        *v = leb(d, &mut at)?;
    }
    let e = match ty {
        EventType::Fo => {
            let (nd, na, len) = (p[3], p[4], p[5]);
            if nd > MAX_MEMBERS || na > MAX_MEMBERS {
                return Err(Stop::Bad(format!(
                    "a format object with {nd} data and {na} array members (at most {MAX_MEMBERS})"
                )));
            }
            if len > MAX_NAME {
                return Err(Stop::Bad(format!(
                    "a class name of {len} bytes (at most {MAX_NAME})"
                )));
            }
            let mut data = Vec::with_capacity(nd.min(1024) as usize);
            for _ in 0..nd {
                data.push(leb(d, &mut at)?);
            }
            let mut arrays = Vec::with_capacity(na.min(1024) as usize);
            for _ in 0..na {
                let a = leb(d, &mut at)?;
                arrays.push((a, leb(d, &mut at)?));
            }
            let len = len as usize;
            if d.len() < at + len {
                return Err(Stop::More);
            }
            let name = std::str::from_utf8(&d[at..at + len])
                .map_err(|_| Stop::Bad("the class name is not UTF-8".into()))?
                .to_string();
            at += len;
            Event::FormatObject(FormatObject {
                id: p[0],
                super_id: p[1],
                pointers: p[2],
                data,
                arrays,
                name,
            })
        }
        _ => {
            let mut q = [0u64; 5];
            q.copy_from_slice(&p[..5]);
            if signed_offset(ty) {
                q[2] = unzigzag(q[2]) as u64;
            }
            Event::from_ints(ty, &q).expect("not fo")
        }
    };
    Ok((e, at))
}

/// Appends the binary encoding of `e`.
pub fn encode(out: &mut Vec<u8>, e: &Event) {
    out.push(e.event_type() as u8);
    match e {
        Event::FormatObject(f) => {
            for v in f.ints() {
                put(out, v);
            }
            out.extend_from_slice(f.name.as_bytes());
        }
        other => {
            let (p, n) = other.ints();
            for (k, v) in p[..n].iter().enumerate() {
                let signed = k == 2 && signed_offset(other.event_type());
                put(out, if signed { zigzag(*v as i64) } else { *v });
            }
        }
    }
}

/// Whether parameter 2 of `ty` is the signed, zigzag-encoded `Offset`.
fn signed_offset(ty: EventType) -> bool {
    matches!(ty, EventType::Adr | EventType::Adw)
}

/// Reads the binary form.
pub struct BinaryReader<R> {
    win: Window<Stream<R>>,
    event: u64,
    /// Where the last event read starts.
    last: u64,
    version: String,
    notes: Vec<String>,
    failed: bool,
}

impl<R: BufRead> BinaryReader<R> {
    /// Reads the header.
    pub fn new(mut input: R) -> Result<Self, PtfError> {
        let mut offset = 0u64;
        let mut lines = Vec::new();
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = std::io::Read::take(&mut input, (MAX_HEADER as u64 + 1).saturating_sub(offset))
                .read_until(b'\n', &mut line)
                .map_err(PtfError::io(offset))?;
            let bad = |message: String| PtfError::Binary {
                offset,
                event: 0,
                message,
            };
            if lines.is_empty()
                && !line.starts_with(&VERSION_PREFIX.as_bytes()[..line.len().min(4)])
            {
                return Err(bad(format!(
                    "not a binary PTF trace (the first line must start with `{VERSION_PREFIX}`)"
                )));
            }
            if n == 0 || line.last() != Some(&b'\n') {
                return Err(bad(if offset + n as u64 > MAX_HEADER as u64 {
                    format!("no `$` line in the first {MAX_HEADER} bytes")
                } else {
                    "the header ends without a `$` line".into()
                }));
            }
            line.pop();
            let text = String::from_utf8(line.clone())
                .map_err(|_| bad("a header line is not UTF-8".into()))?;
            if lines.is_empty() && !text.starts_with(VERSION_PREFIX) {
                return Err(bad(format!(
                    "not a binary PTF trace (the first line must start with `{VERSION_PREFIX}`)"
                )));
            }
            offset += n as u64;
            if text == "$" {
                break;
            }
            lines.push(text);
        }
        let version = lines.remove(0);
        Ok(BinaryReader {
            win: Window::stream(input, 1 << 16, offset),
            event: 0,
            last: offset,
            version,
            notes: lines,
            failed: false,
        })
    }

    /// The version line (`PTF 1.0`).
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Buffers at least one more byte unless the input has ended.
    fn fill(&mut self) -> Result<(), PtfError> {
        let at = self.win.offset() + self.win.len() as u64;
        self.win.fill_more().map(|_| ()).map_err(PtfError::io(at))
    }

    fn err(&self, message: String) -> PtfError {
        PtfError::Binary {
            offset: self.win.offset(),
            event: self.event,
            message,
        }
    }

    fn next_inner(&mut self) -> Result<Option<Event>, PtfError> {
        loop {
            if self.win.is_empty() {
                if self.win.at_eof() {
                    return Ok(None);
                }
                self.fill()?;
                continue;
            }
            match decode(self.win.buffered()) {
                Ok((e, len)) => {
                    self.last = self.win.offset();
                    self.win.consume(len);
                    self.event += 1;
                    return Ok(Some(e));
                }
                Err(Stop::Bad(m)) => {
                    self.last = self.win.offset();
                    return Err(self.err(m));
                }
                Err(Stop::More) => {
                    if self.win.at_eof() {
                        self.last = self.win.offset();
                        let have = self.win.len();
                        return Err(self.err(format!("event cut short after {have} bytes")));
                    }
                    // The longest event is bounded by the format object's
                    // limits; past that, more data cannot help.
                    let limit = (2 * MAX_MEMBERS as usize + 8) * 10 + MAX_NAME as usize;
                    if self.win.len() > limit {
                        return Err(self.err("an event longer than any valid one".into()));
                    }
                    self.fill()?;
                }
            }
        }
    }
}

impl<R: BufRead> EventSource for BinaryReader<R> {
    fn next_event(&mut self) -> Result<Option<Event>, PtfError> {
        if self.failed {
            return Ok(None);
        }
        let r = self.next_inner();
        if r.is_err() {
            self.failed = true;
        }
        r
    }

    fn location(&self) -> (u64, u64) {
        (0, self.last)
    }

    fn notes(&self) -> &[String] {
        &self.notes
    }
}

/// Writes the binary form.
pub struct BinaryWriter<W: Write> {
    out: Buffered<W>,
}

impl<W: Write> BinaryWriter<W> {
    /// Writes the header: the version line, the notes, `$`.
    pub fn new(out: W, notes: &[String]) -> Result<Self, PtfError> {
        let mut out = Buffered::new(out);
        let buf = &mut out.buf;
        buf.extend_from_slice(VERSION.as_bytes());
        buf.push(b'\n');
        for note in notes {
            if note.contains(['\n', '\r']) || note == "$" {
                return Err(PtfError::Write(format!("note {note:?}: one line, not `$`")));
            }
            buf.extend_from_slice(note.as_bytes());
            buf.push(b'\n');
        }
        buf.extend_from_slice(b"$\n");
        if buf.len() > MAX_HEADER {
            return Err(PtfError::Write(format!(
                "notes longer than the {MAX_HEADER}-byte header"
            )));
        }
        Ok(BinaryWriter { out })
    }

    /// The output (after [`EventSink::finish`]).
    pub fn into_inner(self) -> W {
        self.out.into_inner()
    }
}

impl<W: Write> EventSink for BinaryWriter<W> {
    fn write_event(&mut self, e: &Event) -> Result<(), PtfError> {
        if let Event::FormatObject(f) = e {
            let members = f.data.len().max(f.arrays.len()) as u64;
            if members > MAX_MEMBERS || f.name.len() as u64 > MAX_NAME {
                return Err(PtfError::Write(format!(
                    "format object {}: more members or a longer name than readers accept",
                    f.id
                )));
            }
        }
        encode(&mut self.out.buf, e);
        self.out.spill_if_full()
    }

    fn finish(&mut self) -> Result<(), PtfError> {
        self.out.flush()
    }
}
