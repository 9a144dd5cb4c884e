//! PTF's ASCII form (§3.1, §4.2): user notes, `Trace begin`, one event per
//! line (`mnemonic params…`, optionally preceded by an event id), `Trace
//! end`. Reading streams line by line with a bounded line length.

use std::io::{BufRead, Read, Write};

use crate::event::{Event, EventType, FormatObject};
use crate::out::Buffered;
use crate::{EventSink, EventSource, PtfError};

pub const BEGIN: &str = "Trace begin";
pub const END: &str = "Trace end";
/// The longest line accepted (a format object with many members).
pub const MAX_LINE: usize = 1 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Events,
    Ended,
}

/// Reads the ASCII form.
pub struct AsciiReader<R> {
    input: R,
    line: Vec<u8>,
    /// Line number of the next line (1-based).
    lineno: u64,
    offset: u64,
    /// Where the line being parsed starts.
    at: (u64, u64),
    state: State,
    notes: Vec<String>,
    failed: bool,
    /// Keep reading after a malformed event line (the verifier does).
    resume: bool,
    /// Whether the last error came from one line's contents only.
    line_error: bool,
}

impl<R: BufRead> AsciiReader<R> {
    /// Reads the notes up to and including `Trace begin`.
    pub fn new(input: R) -> Result<Self, PtfError> {
        let mut r = AsciiReader {
            input,
            line: Vec::new(),
            lineno: 1,
            offset: 0,
            at: (1, 0),
            state: State::Events,
            notes: Vec::new(),
            failed: false,
            resume: false,
            line_error: false,
        };
        loop {
            if !r.read_line()? {
                return Err(r.err(format!("no `{BEGIN}` line")));
            }
            let text = r.text()?.to_string();
            if text.trim_end() == BEGIN {
                return Ok(r);
            }
            if r.notes.len() >= 10_000 {
                return Err(r.err(format!("more than 10000 lines before `{BEGIN}`")));
            }
            r.notes.push(text);
        }
    }

    fn err(&self, message: impl Into<String>) -> PtfError {
        PtfError::Ascii {
            line: self.at.0,
            offset: self.at.1,
            message: tramp_core::text::clip(message.into()),
        }
    }

    /// Reads one line (without its `\n` / `\r\n`); false at the end.
    fn read_line(&mut self) -> Result<bool, PtfError> {
        self.line.clear();
        self.at = (self.lineno, self.offset);
        let n = (&mut self.input)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut self.line)
            .map_err(PtfError::io(self.offset))?;
        if n == 0 {
            return Ok(false);
        }
        self.offset += n as u64;
        self.lineno += 1;
        if self.line.last() == Some(&b'\n') {
            self.line.pop();
        } else if n > MAX_LINE {
            return Err(self.err(format!("line longer than {MAX_LINE} bytes")));
        }
        if self.line.last() == Some(&b'\r') {
            self.line.pop();
        }
        Ok(true)
    }

    fn text(&self) -> Result<&str, PtfError> {
        std::str::from_utf8(&self.line)
            .map_err(|e| self.err(format!("invalid UTF-8 at column {}", e.valid_up_to() + 1)))
    }

    fn next_inner(&mut self) -> Result<Option<Event>, PtfError> {
        loop {
            if !self.read_line()? {
                return match self.state {
                    State::Ended => Ok(None),
                    State::Events => Err(self.err(format!("the trace ends without `{END}`"))),
                };
            }
            let text = self.text()?;
            let trimmed = text.trim();
            if trimmed.is_empty() {
                continue;
            }
            if self.state == State::Ended {
                return Err(self.err(format!("text after `{END}`")));
            }
            if trimmed == END {
                self.state = State::Ended;
                continue;
            }
            let event = parse_event(text).map_err(|m| {
                self.line_error = true;
                self.err(m)
            })?;
            return Ok(Some(event));
        }
    }
}

impl<R: BufRead> EventSource for AsciiReader<R> {
    fn next_event(&mut self) -> Result<Option<Event>, PtfError> {
        if self.failed {
            return Ok(None);
        }
        self.line_error = false;
        let r = self.next_inner();
        if r.is_err() && !(self.resume && self.line_error) {
            self.failed = true;
        }
        r
    }

    fn location(&self) -> (u64, u64) {
        self.at
    }

    fn notes(&self) -> &[String] {
        &self.notes
    }

    fn resume_after_bad_lines(&mut self, yes: bool) {
        self.resume = yes;
    }
}

/// Whitespace-separated tokens with their byte positions.
struct Tokens<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Tokens<'a> {
    fn skip_space(&mut self) {
        let b = self.s.as_bytes();
        while self.pos < b.len() && (b[self.pos] == b' ' || b[self.pos] == b'\t') {
            self.pos += 1;
        }
    }

    fn next(&mut self) -> Option<&'a str> {
        self.skip_space();
        let b = self.s.as_bytes();
        let start = self.pos;
        while self.pos < b.len() && b[self.pos] != b' ' && b[self.pos] != b'\t' {
            self.pos += 1;
        }
        (self.pos > start).then(|| &self.s[start..self.pos])
    }

    fn rest(&mut self) -> &'a str {
        self.skip_space();
        &self.s[self.pos..]
    }
}

const NAMES_FO: &[&str] = &[
    "FormatId",
    "SuperFormatId",
    "NumberOfPointers",
    "NumberOfDataMembers",
    "NumberOfArrayMembers",
    "LengthOfClassName",
];
const NAMES_OBJ: &[&str] = &["FormatId", "OId"];
const NAMES_CAO: &[&str] = &["FormatId", "OId", "ContainerOId", "NoOfElements"];
const NAMES_DATA: &[&str] = &["FormatId", "OId", "Offset"];
const NAMES_ARRAY: &[&str] = &["FormatId", "OId", "Offset", "Index", "Length"];
const NAMES_ER: &[&str] = &["FormatId", "FromOId", "Edge"];
const NAMES_EW: &[&str] = &["FormatId", "FromOId", "Edge", "ToOId"];

/// The integer parameter names of an event type, as §3 gives them (for
/// `fo`, the six before its lists and name).
pub fn param_names(t: EventType) -> &'static [&'static str] {
    match t {
        EventType::Fo => NAMES_FO,
        EventType::Co | EventType::Do | EventType::Sr => NAMES_OBJ,
        EventType::Cao => NAMES_CAO,
        EventType::Gr | EventType::Ts | EventType::Te => &[],
        EventType::Dr | EventType::Dw => NAMES_DATA,
        EventType::Adr | EventType::Adw => NAMES_ARRAY,
        EventType::Er => NAMES_ER,
        EventType::Ew => NAMES_EW,
    }
}

/// The event type of a mnemonic, without string comparisons.
fn mnemonic(tok: &str) -> Option<EventType> {
    Some(match tok.as_bytes() {
        b"fo" => EventType::Fo,
        b"co" => EventType::Co,
        b"cao" => EventType::Cao,
        b"do" => EventType::Do,
        b"sr" => EventType::Sr,
        b"gr" => EventType::Gr,
        b"dr" => EventType::Dr,
        b"dw" => EventType::Dw,
        b"adr" => EventType::Adr,
        b"adw" => EventType::Adw,
        b"er" => EventType::Er,
        b"ew" => EventType::Ew,
        b"ts" => EventType::Ts,
        b"te" => EventType::Te,
        _ => return None,
    })
}

#[inline]
fn uint(tok: &str, what: &str) -> Result<u64, String> {
    let b = tok.as_bytes();
    // Up to 19 digits cannot overflow; longer ones take the checked path.
    if !b.is_empty() && b.len() <= 19 && b.iter().all(u8::is_ascii_digit) {
        return Ok(b.iter().fold(0u64, |v, d| v * 10 + (d - b'0') as u64));
    }
    tok.parse::<u64>().map_err(|_| {
        if !b.is_empty() && b.iter().all(u8::is_ascii_digit) {
            format!("{what}: `{tok}` does not fit 64 bits")
        } else {
            format!("{what}: `{tok}` is not an unsigned integer")
        }
    })
}

fn int(tok: &str, what: &str) -> Result<i64, String> {
    tok.parse::<i64>()
        .map_err(|_| format!("{what}: `{tok}` is not an integer"))
}

/// Parses one event line (an optional event id, the mnemonic, its
/// parameters).
pub fn parse_event(line: &str) -> Result<Event, String> {
    let mut t = Tokens { s: line, pos: 0 };
    let mut first = t.next().ok_or("empty line")?;
    if first.bytes().all(|b| b.is_ascii_digit()) {
        first = t.next().ok_or("an event id without an event")?;
    }
    let ty = mnemonic(first).ok_or_else(|| format!("unknown event `{first}`"))?;
    let names = param_names(ty);
    let mut p = [0u64; 6];
    for (i, name) in names.iter().enumerate() {
        let tok = t.next().ok_or_else(|| {
            format!(
                "`{ty}` takes {} parameters ({}), found {i}",
                names.len(),
                names.join(", ")
            )
        })?;
        if matches!(ty, EventType::Adr | EventType::Adw) && i == 2 {
            p[i] = int(tok, name)? as u64;
        } else {
            p[i] = uint(tok, name)?;
        }
    }
    let e = match ty {
        EventType::Fo => {
            let (nd, na, len) = (p[3], p[4], p[5]);
            let mut data = Vec::new();
            for k in 0..nd {
                let tok = t
                    .next()
                    .ok_or_else(|| format!("`fo` declares {nd} data members, found {k}"))?;
                data.push(uint(tok, "DataMemberFormatId")?);
            }
            let mut arrays = Vec::new();
            for k in 0..na {
                let (Some(a), Some(n)) = (t.next(), t.next()) else {
                    return Err(format!(
                        "`fo` declares {na} array members (format id and element count each), found {k}"
                    ));
                };
                arrays.push((
                    uint(a, "ArrayDataMemberFormatId")?,
                    uint(n, "NumberOfElements")?,
                ));
            }
            let rest = t.rest();
            let len = usize::try_from(len).unwrap_or(usize::MAX);
            if rest.len() < len || !rest.is_char_boundary(len) {
                return Err(format!(
                    "`fo` class name: LengthOfClassName is {len} but `{rest}` is {} bytes",
                    rest.len()
                ));
            }
            let (name, tail) = rest.split_at(len);
            if !tail.trim().is_empty() {
                return Err(format!(
                    "`fo` class name: LengthOfClassName is {len} but `{}` follows `{name}`",
                    tail.trim()
                ));
            }
            return Ok(Event::FormatObject(FormatObject {
                id: p[0],
                super_id: p[1],
                pointers: p[2],
                data,
                arrays,
                name: name.to_string(),
            }));
        }
        _ => {
            let mut q = [0u64; 5];
            q.copy_from_slice(&p[..5]);
            Event::from_ints(ty, &q).expect("not fo")
        }
    };
    if let Some(extra) = t.next() {
        return Err(format!(
            "`{ty}` takes {} parameters ({}); `{extra}` is one too many",
            names.len(),
            names.join(", ")
        ));
    }
    Ok(e)
}

fn push_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

fn push_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    push_u64(out, v.unsigned_abs());
}

/// Appends the event's line (without the newline) in the written form:
/// no event id, single spaces.
pub fn format_event(out: &mut Vec<u8>, e: &Event) -> Result<(), PtfError> {
    out.extend_from_slice(e.event_type().mnemonic().as_bytes());
    let n = |out: &mut Vec<u8>, v: u64| {
        out.push(b' ');
        push_u64(out, v);
    };
    match e {
        Event::FormatObject(f) => {
            if f.name.starts_with([' ', '\t']) || f.name.contains(['\n', '\r']) {
                return Err(PtfError::Write(format!(
                    "class name {:?}: no leading blank or line break in the ASCII form",
                    f.name
                )));
            }
            for v in f.ints() {
                n(out, v);
            }
            out.push(b' ');
            out.extend_from_slice(f.name.as_bytes());
        }
        other => {
            let (p, count) = other.ints();
            let signed = matches!(
                other,
                Event::ArrayDataRead { .. } | Event::ArrayDataWrite { .. }
            );
            for (k, v) in p[..count].iter().enumerate() {
                if signed && k == 2 {
                    out.push(b' ');
                    push_i64(out, *v as i64);
                } else {
                    n(out, *v);
                }
            }
        }
    }
    Ok(())
}

/// Writes the ASCII form.
pub struct AsciiWriter<W: Write> {
    out: Buffered<W>,
    finished: bool,
}

impl<W: Write> AsciiWriter<W> {
    /// Writes the notes and `Trace begin`.
    pub fn new(out: W, notes: &[String]) -> Result<Self, PtfError> {
        let mut out = Buffered::new(out);
        for note in notes {
            if note.contains(['\n', '\r']) || note.trim_end() == BEGIN {
                return Err(PtfError::Write(format!(
                    "note {note:?}: one line, not `{BEGIN}`"
                )));
            }
            out.buf.extend_from_slice(note.as_bytes());
            out.buf.push(b'\n');
        }
        out.buf.extend_from_slice(BEGIN.as_bytes());
        out.buf.push(b'\n');
        Ok(AsciiWriter {
            out,
            finished: false,
        })
    }

    /// The output (after [`EventSink::finish`]).
    pub fn into_inner(self) -> W {
        self.out.into_inner()
    }
}

impl<W: Write> EventSink for AsciiWriter<W> {
    fn write_event(&mut self, e: &Event) -> Result<(), PtfError> {
        let buf = &mut self.out.buf;
        let mark = buf.len();
        if let Err(err) = format_event(buf, e) {
            buf.truncate(mark);
            return Err(err);
        }
        buf.push(b'\n');
        self.out.spill_if_full()
    }

    fn finish(&mut self) -> Result<(), PtfError> {
        if !self.finished {
            self.finished = true;
            self.out.buf.extend_from_slice(END.as_bytes());
            self.out.buf.push(b'\n');
        }
        self.out.flush()
    }
}
