//! HATF's text form: one record per line, readable, greppable and editable,
//! and converted back to binary byte for byte (metadata records are lines
//! too, and data lines carry absolute values).
//!
//! The grammar is in `docs/formats/hatf.md`; in short:
//!
//! ```text
//! # tramp hatf-text 1
//! set fieldSize address 8
//! set fieldInterpretation time delta 0
//! alloc size=24 address=0x7f3a00001000 thread=0 heap=0 time=17
//! realloc/alloc-free size=48 old=0x7f3a00001000 new=0x7f3a00002000 thread=0 heap=0 time=18
//! comment "phase 2 \x00 starts"
//! ```

use std::io::{self, BufRead, Read, Write};

use tramp_core::{Error, Position};

use crate::error::HatfError;
use crate::item::{Event, Item};
use crate::spec::{EventKind, Field, Interp, Meta, Width};

/// First line of every text dump; lines starting with `#` are ignored.
pub const HEADER: &str = "# tramp hatf-text 1";
/// What every HATF text file starts with, whatever its version.
pub const MAGIC: &str = "# tramp hatf-text";
const FORMAT: &str = "hatf-text";
/// Longest line the reader accepts (a 65535-byte attribute in hex is ~131 KB).
pub const MAX_LINE: usize = 1 << 20;

/// Writes HATF items as text lines.
pub struct TextWriter<W: Write> {
    out: W,
    line: Vec<u8>,
    started: bool,
}

fn push_escaped(line: &mut Vec<u8>, bytes: &[u8]) {
    line.push(b'"');
    let mut rest = bytes;
    while !rest.is_empty() {
        let (valid, bad) = match std::str::from_utf8(rest) {
            Ok(s) => (s, &rest[rest.len()..]),
            Err(e) => (
                std::str::from_utf8(&rest[..e.valid_up_to()]).unwrap_or_default(),
                &rest[e.valid_up_to()..],
            ),
        };
        for c in valid.chars() {
            match c {
                '"' => line.extend_from_slice(b"\\\""),
                '\\' => line.extend_from_slice(b"\\\\"),
                '\n' => line.extend_from_slice(b"\\n"),
                '\t' => line.extend_from_slice(b"\\t"),
                '\r' => line.extend_from_slice(b"\\r"),
                c if c.is_control() => {
                    let mut b = [0u8; 4];
                    for byte in c.encode_utf8(&mut b).bytes() {
                        let _ = write!(line, "\\x{byte:02x}");
                    }
                }
                c => {
                    let mut b = [0u8; 4];
                    line.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
                }
            }
        }
        if let Some((&b, tail)) = bad.split_first() {
            let _ = write!(line, "\\x{b:02x}");
            rest = tail;
        } else {
            rest = bad;
        }
    }
    line.push(b'"');
}

fn push_hex(line: &mut Vec<u8>, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        line.push(HEX[(b >> 4) as usize]);
        line.push(HEX[(b & 15) as usize]);
    }
}

/// Formats a metadata argument: addresses in hex, others in decimal.
fn push_arg(line: &mut Vec<u8>, field: Field, v: u64) {
    let _ = if field == Field::Address {
        write!(line, " {v:#x}")
    } else {
        write!(line, " {v}")
    };
}

/// Renders one item as a line (without the newline).
pub fn format_item(line: &mut Vec<u8>, item: &Item<'_>) {
    match item {
        Item::Meta(Meta::SetWidth(f, w)) => {
            let _ = write!(line, "set fieldSize {} {}", f.name(), w.name());
        }
        Item::Meta(Meta::SetInterp(f, i)) => {
            let _ = write!(line, "set fieldInterpretation {} {}", f.name(), i.name());
            match *i {
                Interp::None => {}
                Interp::Default(a) | Interp::BaseOffset(a) | Interp::Delta(a) => {
                    push_arg(line, *f, a)
                }
                Interp::Stride { initial, stride } => {
                    push_arg(line, *f, initial);
                    let _ = write!(line, " {}", stride as i64);
                }
            }
        }
        Item::Comment(c) => {
            line.extend_from_slice(b"comment ");
            push_escaped(line, c);
        }
        Item::Event(e) => {
            line.extend_from_slice(e.kind.name().as_bytes());
            let realloc = e.kind.is_realloc();
            let mut seen_address = false;
            for &f in e.kind.layout() {
                let _ = match f {
                    Field::Size => write!(line, " size={}", e.size),
                    Field::Address if realloc && !seen_address => {
                        seen_address = true;
                        write!(line, " old={:#x}", e.address)
                    }
                    Field::Address if realloc => write!(line, " new={:#x}", e.new_address),
                    Field::Address => write!(line, " address={:#x}", e.address),
                    Field::Thread => write!(line, " thread={}", e.thread),
                    Field::Heap => write!(line, " heap={}", e.heap),
                    Field::Time => write!(line, " time={}", e.time),
                    Field::Attributes if !e.attributes.is_empty() => {
                        line.extend_from_slice(b" attrs=");
                        push_hex(line, e.attributes);
                        Ok(())
                    }
                    Field::Attributes => Ok(()),
                };
            }
        }
    }
}

impl<W: Write> TextWriter<W> {
    pub fn new(out: W) -> Self {
        TextWriter {
            out,
            line: Vec::with_capacity(256),
            started: false,
        }
    }

    pub fn write_item(&mut self, item: &Item<'_>) -> io::Result<()> {
        self.write_noted(item, None)
    }

    /// Writes an item with a note after it (`  # NOTE`), which readers
    /// ignore: what `tramp dump` says of a record (its site by function
    /// and line) without changing what converts back.
    pub fn write_noted(&mut self, item: &Item<'_>, note: Option<&str>) -> io::Result<()> {
        if !self.started {
            self.started = true;
            writeln!(self.out, "{HEADER}")?;
        }
        self.line.clear();
        format_item(&mut self.line, item);
        if let Some(n) = note {
            self.line.extend_from_slice(b"  # ");
            // One line: a newline in a name would start a record.
            for c in n.chars() {
                let mut b = [0u8; 4];
                let c = if c.is_control() { ' ' } else { c };
                self.line
                    .extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            }
        }
        self.line.push(b'\n');
        self.out.write_all(&self.line)
    }

    /// Writes the header if nothing was written, flushes, and returns the writer.
    pub fn into_inner(mut self) -> io::Result<W> {
        if !self.started {
            writeln!(self.out, "{HEADER}")?;
        }
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Parses a number: decimal, `0x` hex, or negative decimal (two's complement).
pub fn parse_number(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if let Some(n) = s.strip_prefix('-') {
        n.parse::<u64>()
            .ok()
            .filter(|v| *v <= 1 << 63)
            .map(|v| v.wrapping_neg())
    } else {
        s.parse().ok()
    }
}

/// An event field's value: an unsigned 64-bit number, decimal or `0x`
/// hex. A negative value or one past 64 bits is an error saying so (a
/// `-1` once became 2^64 − 1).
fn parse_field_value(v: &str, field: &str) -> Result<u64, String> {
    if v.starts_with('-') {
        return Err(format!(
            "`{v}` is negative: `{field}` holds an unsigned 64-bit number"
        ));
    }
    parse_number(v).ok_or_else(|| {
        let numeral = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
            Some(h) => !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()),
            None => !v.is_empty() && v.chars().all(|c| c.is_ascii_digit()),
        };
        if numeral {
            format!("`{v}` does not fit 64 bits (`{field}`)")
        } else {
            format!("`{v}` is not a number for `{field}`")
        }
    })
}

fn parse_hex_bytes(s: &str, out: &mut Vec<u8>) -> Result<(), String> {
    if !s.len().is_multiple_of(2) {
        return Err(format!("attrs `{s}` has an odd number of hex digits"));
    }
    for pair in s.as_bytes().chunks(2) {
        let hex = std::str::from_utf8(pair).map_err(|_| "attrs hold non-hex bytes".to_string())?;
        out.push(u8::from_str_radix(hex, 16).map_err(|_| format!("attrs `{s}` is not hex"))?);
    }
    Ok(())
}

/// Decodes a quoted string with `\" \\ \n \t \r \xHH` escapes.
fn parse_quoted(s: &str, out: &mut Vec<u8>) -> Result<(), String> {
    let inner = s
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .filter(|_| s.len() >= 2)
        .ok_or_else(|| "comment text must be one double-quoted string".to_string())?;
    let b = inner.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => {
                let e = *b.get(i + 1).ok_or("a backslash ends the comment")?;
                i += 2;
                match e {
                    b'"' => out.push(b'"'),
                    b'\\' => out.push(b'\\'),
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'x' => {
                        let h = inner.get(i..i + 2).ok_or("\\x needs two hex digits")?;
                        out.push(
                            u8::from_str_radix(h, 16).map_err(|_| format!("bad escape \\x{h}"))?,
                        );
                        i += 2;
                    }
                    other => return Err(format!("unknown escape \\{}", other as char)),
                }
            }
            b'"' => return Err("unescaped quote inside the comment".into()),
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(())
}

/// A comment record's quoted text without a ` # note` after its closing
/// quote.
fn strip_note_after_quote(rest: &str) -> &str {
    let b = rest.as_bytes();
    if b.first() != Some(&b'"') {
        return rest;
    }
    let mut i = 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return rest[..=i].trim_end(),
            _ => i += 1,
        }
    }
    rest
}

/// A parsed line whose comment text or attributes are in a side buffer.
enum Parsed {
    Event(Event<'static>),
    Comment,
    Meta(Meta),
}

impl Parsed {
    fn lend(self, bytes: &[u8]) -> Item<'_> {
        match self {
            Parsed::Event(mut e) => {
                e.attributes = bytes;
                Item::Event(e)
            }
            Parsed::Comment => Item::Comment(bytes),
            Parsed::Meta(m) => Item::Meta(m),
        }
    }
}

/// Parses one non-blank, non-`#` line. Comment and attribute bytes go to
/// `bytes`, which the returned item borrows.
pub fn parse_line<'b>(line: &str, bytes: &'b mut Vec<u8>) -> Result<Item<'b>, String> {
    let parsed = parse_into(line, bytes)?;
    Ok(parsed.lend(bytes))
}

fn parse_into(line: &str, bytes: &mut Vec<u8>) -> Result<Parsed, String> {
    bytes.clear();
    let line = line.trim();
    let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let rest = rest.trim_start();
    // A note after ` #` (a site `tramp dump` names) is for the reader of
    // the text, not part of the record; a comment record's quoted text may
    // hold `#` itself, and its note follows the closing quote.
    let rest = if word == "comment" {
        rest
    } else {
        rest.split_once(" #").map_or(rest, |(r, _)| r).trim_end()
    };
    match word {
        "comment" => {
            parse_quoted(strip_note_after_quote(rest), bytes)?;
            Ok(Parsed::Comment)
        }
        "set" => parse_meta(rest).map(Parsed::Meta),
        _ => {
            let kind =
                EventKind::from_name(word).ok_or_else(|| format!("unknown record `{word}`"))?;
            let mut ev = Event::new(kind);
            let realloc = kind.is_realloc();
            let mut seen = 0u32;
            for tok in rest.split_whitespace() {
                let (k, v) = tok
                    .split_once('=')
                    .ok_or_else(|| format!("expected key=value, found `{tok}`"))?;
                let (bit, allowed) = match k {
                    "size" => (0, kind.layout().contains(&Field::Size)),
                    "address" => (1, !realloc && kind.layout().contains(&Field::Address)),
                    "old" => (2, realloc),
                    "new" => (3, realloc),
                    "thread" => (4, true),
                    "heap" => (5, kind.layout().contains(&Field::Heap)),
                    "time" => (6, true),
                    "attrs" => (7, true),
                    _ => (8, false),
                };
                if !allowed {
                    return Err(format!("`{k}` is not a field of {}", kind.name()));
                }
                if seen & (1 << bit) != 0 {
                    return Err(format!("`{k}` appears twice"));
                }
                seen |= 1 << bit;
                if k == "attrs" {
                    parse_hex_bytes(v, bytes)?;
                    continue;
                }
                let n = parse_field_value(v, k)?;
                match k {
                    "size" => ev.size = n,
                    "address" | "old" => ev.address = n,
                    "new" => ev.new_address = n,
                    "thread" => ev.thread = n,
                    "heap" => ev.heap = n,
                    _ => ev.time = n,
                }
            }
            // The fields that say which object and how big are required;
            // thread, heap and time may be left out and are 0, as in a
            // binary trace whose state gives them no bytes.
            let layout = kind.layout();
            let required: &[(u32, &str, bool)] = &[
                (0, "size", layout.contains(&Field::Size)),
                (1, "address", !realloc && layout.contains(&Field::Address)),
                (2, "old", realloc),
                (3, "new", realloc),
            ];
            let missing: Vec<&str> = required
                .iter()
                .filter(|(bit, _, needed)| *needed && seen & (1 << bit) == 0)
                .map(|(_, name, _)| *name)
                .collect();
            if !missing.is_empty() {
                return Err(format!(
                    "{} lacks {}",
                    kind.name(),
                    missing
                        .iter()
                        .map(|m| format!("`{m}=`"))
                        .collect::<Vec<_>>()
                        .join(" and ")
                ));
            }
            Ok(Parsed::Event(ev))
        }
    }
}

fn parse_meta(rest: &str) -> Result<Meta, String> {
    let toks: Vec<&str> = rest.split_whitespace().collect();
    let field = |s: Option<&&str>| {
        let s = s.ok_or("missing field name")?;
        Field::from_name(s).ok_or_else(|| format!("unknown field `{s}`"))
    };
    let num = |s: Option<&&str>, what: &str| {
        let s = s.ok_or_else(|| format!("missing {what}"))?;
        parse_number(s).ok_or_else(|| format!("`{s}` is not a number for {what}"))
    };
    let want = |n: usize| {
        if toks.len() == n {
            Ok(())
        } else {
            Err(format!(
                "expected {} words after `set`, found {}",
                n,
                toks.len()
            ))
        }
    };
    match toks.first().copied() {
        Some("fieldSize") => {
            want(3)?;
            let f = field(toks.get(1))?;
            let w = Width::from_name(toks[2])
                .ok_or_else(|| format!("invalid width `{}` (0, 1, 2, 4, 8, v1, v2)", toks[2]))?;
            Ok(Meta::SetWidth(f, w))
        }
        Some("fieldInterpretation") => {
            let f = field(toks.get(1))?;
            let i = match toks.get(2).copied() {
                Some("none") => {
                    want(3)?;
                    Interp::None
                }
                Some("default") => {
                    want(4)?;
                    Interp::Default(num(toks.get(3), "the default value")?)
                }
                Some("baseOffset") => {
                    want(4)?;
                    Interp::BaseOffset(num(toks.get(3), "the base")?)
                }
                Some("delta") => {
                    want(4)?;
                    Interp::Delta(num(toks.get(3), "the initial value")?)
                }
                Some("stride") => {
                    want(5)?;
                    Interp::Stride {
                        initial: num(toks.get(3), "the initial value")?,
                        stride: num(toks.get(4), "the stride")?,
                    }
                }
                Some(other) => return Err(format!("unknown interpretation `{other}`")),
                None => return Err("missing interpretation".into()),
            };
            Ok(Meta::SetInterp(f, i))
        }
        Some(other) => Err(format!(
            "unknown metadata operation `{other}` (fieldSize or fieldInterpretation)"
        )),
        None => Err("`set` needs an operation".into()),
    }
}

/// Reads the text form line by line.
pub struct TextReader<R> {
    input: R,
    line: Vec<u8>,
    bytes: Vec<u8>,
    offset: u64,
    line_no: u64,
    record: u64,
    done: bool,
}

impl<R: BufRead> TextReader<R> {
    pub fn new(input: R) -> Self {
        TextReader {
            input,
            line: Vec::new(),
            bytes: Vec::new(),
            offset: 0,
            line_no: 0,
            record: 0,
            done: false,
        }
    }

    /// Where the next line starts.
    pub fn position(&self) -> Position {
        Position::new(self.offset, self.record).with_line(self.line_no + 1)
    }

    fn fail(&mut self, msg: String) -> Error {
        self.done = true;
        Error::decode(
            FORMAT,
            Position::new(self.offset, self.record).with_line(self.line_no),
            HatfError::Syntax(tramp_core::text::clip(msg)),
        )
    }

    /// The next record, or `None` at the end.
    pub fn next_item(&mut self) -> Result<Option<Item<'_>>, Error> {
        loop {
            if self.done {
                return Ok(None);
            }
            self.offset += self.line.len() as u64;
            self.line.clear();
            let n = (&mut self.input)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut self.line)
                .inspect_err(|_| self.done = true)?;
            if n == 0 {
                if self.record == 0 {
                    // One verdict for every command: a text trace with no
                    // record (only its header, or comments) is no trace.
                    return Err(self.fail(
                        "the file holds no record (only a header or comments): nothing to read"
                            .into(),
                    ));
                }
                self.done = true;
                return Ok(None);
            }
            self.line_no += 1;
            if self.line.len() > MAX_LINE {
                return Err(self.fail(format!("line is longer than {MAX_LINE} bytes")));
            }
            if self.line.last() != Some(&b'\n') {
                return Err(self.fail(
                    "the text ends in the middle of this line (no newline): the file was cut"
                        .into(),
                ));
            }
            let text = match std::str::from_utf8(&self.line) {
                Ok(t) => t.trim(),
                Err(e) => {
                    let msg = format!("invalid UTF-8 at column {}", e.valid_up_to() + 1);
                    return Err(self.fail(msg));
                }
            };
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            match parse_into(text, &mut self.bytes) {
                Ok(parsed) => {
                    self.record += 1;
                    return Ok(Some(parsed.lend(&self.bytes)));
                }
                Err(msg) => return Err(self.fail(msg)),
            }
        }
    }
}
