//! The generic text form of records: one record per line,
//! `TYPE field=value ...`, for formats without a text form of their own.
//!
//! Values: unsigned and signed decimals (`0x` hex accepted on input),
//! floats, byte strings as `x:` and hex digits (or, when they are text, in
//! double quotes like strings), strings in double quotes with
//! `\" \\ \n \t \xHH` escapes, lists as `[v,v,...]`, attribute lists as
//! `{key=v,...}`. Absent fields are not written; on input they stay absent.

use std::fmt::Write as _;

use crate::Record;
use crate::record::{RecordBuf, Slot, Value};
use crate::schema::{FieldType, RecordType, Schema};

/// A string in double quotes with `\" \\ \n \t \xHH` escapes.
fn push_quoted(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            // Each byte of the character, as the reader takes `\xHH`.
            c if c.is_control() => {
                let mut b = [0u8; 4];
                for byte in c.encode_utf8(&mut b).bytes() {
                    let _ = write!(out, "\\x{byte:02x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn push_value(out: &mut String, v: Value<'_>) {
    match v {
        Value::U64(x) => out.push_str(itoa::Buffer::new().format(x)),
        Value::I64(x) => out.push_str(itoa::Buffer::new().format(x)),
        Value::F64(x) => {
            let _ = write!(out, "{x:?}");
        }
        // Bytes that are text (a Meta-TF note: `tramp:module 0x… /lib/…`)
        // are written as a quoted string, which reads back as the same
        // bytes; others in hex.
        Value::Bytes(b) => match std::str::from_utf8(b) {
            Ok(text)
                if !b.is_empty()
                    && text
                        .chars()
                        .all(|c| !c.is_control() || c == '\n' || c == '\t') =>
            {
                push_quoted(out, text)
            }
            _ => {
                out.push_str("x:");
                for byte in b {
                    let _ = write!(out, "{byte:02x}");
                }
            }
        },
        Value::Str(s) => push_quoted(out, s),
        Value::List(l) => {
            out.push('[');
            for (i, item) in l.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_value(out, item);
            }
            out.push(']');
        }
        Value::Attrs(a) => {
            out.push('{');
            for (i, (k, item)) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(k);
                out.push('=');
                push_value(out, item);
            }
            out.push('}');
        }
    }
}

/// Formats one record (without a newline).
pub fn format_record(out: &mut String, rec: &Record<'_>) {
    let ty = rec.record_type();
    out.push_str(&ty.name);
    for (i, f) in ty.fields.iter().enumerate() {
        // Integers straight from the record (no `Value` made: the common
        // case, and a `Value` returned through memory costs more than the
        // formatting).
        let int = match f.ty {
            FieldType::U64 | FieldType::I64 => rec.int(i),
            _ => None,
        };
        if let Some(x) = int {
            out.push(' ');
            out.push_str(&f.name);
            out.push('=');
            let mut b = itoa::Buffer::new();
            out.push_str(if f.ty == FieldType::U64 {
                b.format(x as u64)
            } else {
                b.format(x)
            });
        } else if let Some(v) = rec.get(i) {
            out.push(' ');
            out.push_str(&f.name);
            out.push('=');
            push_value(out, v);
        }
    }
}

struct Cursor<'a> {
    s: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn token(&mut self) -> &str {
        let start = self.at;
        while let Some(c) = self.peek() {
            if c == b',' || c == b']' || c == b'}' || c == b' ' {
                break;
            }
            self.at += 1;
        }
        std::str::from_utf8(&self.s[start..self.at]).unwrap_or("")
    }
}

fn parse_u64(t: &str) -> Option<u64> {
    match t.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => t.parse().ok(),
    }
}

/// The bytes of a quoted string at the cursor (`\xHH` is the byte HH).
fn quoted(c: &mut Cursor<'_>) -> Result<Vec<u8>, String> {
    if c.peek() != Some(b'"') {
        return Err("a string starts with `\"`".into());
    }
    c.at += 1;
    let mut s = Vec::new();
    loop {
        match c.peek() {
            None => return Err("unterminated string".into()),
            Some(b'"') => {
                c.at += 1;
                return Ok(s);
            }
            Some(b'\\') => {
                let e =
                    c.s.get(c.at + 1)
                        .copied()
                        .ok_or("a backslash ends the line")?;
                c.at += 2;
                match e {
                    b'"' => s.push(b'"'),
                    b'\\' => s.push(b'\\'),
                    b'n' => s.push(b'\n'),
                    b't' => s.push(b'\t'),
                    b'x' => {
                        let h = c.s.get(c.at..c.at + 2).ok_or("\\x needs two hex digits")?;
                        let h = std::str::from_utf8(h).map_err(|_| "bad escape")?;
                        s.push(u8::from_str_radix(h, 16).map_err(|_| "bad escape")?);
                        c.at += 2;
                    }
                    _ => return Err("unknown escape".into()),
                }
            }
            Some(b) => {
                s.push(b);
                c.at += 1;
            }
        }
    }
}

/// Parses one value of type `ty` into `buf`, returning its slot.
fn parse_value(
    c: &mut Cursor<'_>,
    ty: &FieldType,
    buf: &mut RecordBuf,
    depth: usize,
) -> Result<Slot, String> {
    if depth > 32 {
        return Err("values nest too deeply".into());
    }
    match ty {
        FieldType::U64 => {
            let t = c.token();
            parse_u64(t)
                .map(Slot::U)
                .ok_or_else(|| format!("`{t}` is not an unsigned number"))
        }
        FieldType::I64 => {
            let t = c.token();
            t.parse::<i64>()
                .map(Slot::I)
                .map_err(|_| format!("`{t}` is not a signed number"))
        }
        FieldType::F64 => {
            let t = c.token();
            t.parse::<f64>()
                .map(Slot::F)
                .map_err(|_| format!("`{t}` is not a number"))
        }
        FieldType::Bytes => {
            if c.peek() == Some(b'"') {
                let bytes = quoted(c)?;
                return Ok(buf.store_value(Value::Bytes(&bytes)));
            }
            let t = c.token().to_string();
            let hex = t
                .strip_prefix("x:")
                .ok_or_else(|| format!("`{t}` is not a byte string (x:hex or a quoted string)"))?;
            if hex.len() % 2 != 0 {
                return Err(format!("`{t}` has an odd number of hex digits"));
            }
            // Checked as ASCII first: slicing text that is not (a
            // multi-byte character) would split a character (found by the
            // record_text fuzz target).
            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(format!("`{t}` is not hex"));
            }
            let bytes: Vec<u8> = hex
                .as_bytes()
                .chunks(2)
                .map(|p| {
                    let d = |b: u8| (b as char).to_digit(16).unwrap_or(0) as u8;
                    d(p[0]) << 4 | d(p[1])
                })
                .collect();
            Ok(buf.store_value(Value::Bytes(&bytes)))
        }
        FieldType::Str => {
            let s = String::from_utf8(quoted(c)?).map_err(|_| "string is not UTF-8".to_string())?;
            Ok(buf.store_value(Value::Str(&s)))
        }
        FieldType::List(elem) => {
            if c.peek() != Some(b'[') {
                return Err("a list starts with `[`".into());
            }
            c.at += 1;
            let mut items = Vec::new();
            while c.peek() != Some(b']') {
                items.push(parse_value(c, elem, buf, depth + 1)?);
                match c.peek() {
                    Some(b',') => c.at += 1,
                    Some(b']') => {}
                    _ => return Err("expected `,` or `]` in a list".into()),
                }
                if items.len() > 1 << 20 {
                    return Err("list too long".into());
                }
            }
            c.at += 1;
            Ok(buf.push_slots(&items))
        }
        FieldType::Attrs => Err("attribute lists cannot be read from text yet".into()),
    }
}

/// Parses a line written by [`format_record`] into `buf`; returns the type.
pub fn parse_record<'s>(
    line: &str,
    schema: &'s Schema,
    buf: &mut RecordBuf,
) -> Result<&'s RecordType, String> {
    let line = line.trim();
    let (name, rest) = line.split_once(' ').unwrap_or((line, ""));
    let ty = schema
        .type_named(name)
        .ok_or_else(|| format!("unknown record type `{name}`"))?;
    buf.reset(ty);
    let mut c = Cursor {
        s: rest.as_bytes(),
        at: 0,
    };
    // Every field is required, once: a missing field would otherwise read
    // as absent, and a writer downstream would make it a zero.
    let mut seen = vec![false; ty.fields.len()];
    loop {
        while c.peek() == Some(b' ') {
            c.at += 1;
        }
        if c.peek().is_none() {
            break;
        }
        let start = c.at;
        while c.peek().is_some_and(|b| b != b'=' && b != b' ') {
            c.at += 1;
        }
        let key = std::str::from_utf8(&c.s[start..c.at]).unwrap_or("");
        if c.peek() != Some(b'=') {
            return Err(format!("expected `field=value`, found `{key}`"));
        }
        c.at += 1;
        let i = ty
            .field_index(key)
            .ok_or_else(|| format!("`{name}` has no field `{key}`"))?;
        if std::mem::replace(&mut seen[i], true) {
            return Err(format!("`{key}` appears twice"));
        }
        let slot =
            parse_value(&mut c, &ty.fields[i].ty, buf, 0).map_err(|e| format!("{key}: {e}"))?;
        buf.set_slot(i, slot);
        if c.peek().is_some_and(|b| b != b' ') {
            return Err(format!("{key}: unexpected text after the value"));
        }
    }
    let missing: Vec<&str> = ty
        .fields
        .iter()
        .zip(&seen)
        .filter(|(_, s)| !**s)
        .map(|(f, _)| f.name.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "`{name}` lacks field{} {}",
            if missing.len() == 1 { "" } else { "s" },
            missing
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(ty)
}

/// Longest error message a text reader prints about one line: a message
/// quoting a 5 MB token is cut, not printed whole.
pub const MAX_MESSAGE: usize = 400;

/// `msg` cut to [`MAX_MESSAGE`] bytes (at a character boundary), saying how
/// much was left out.
pub fn clip(msg: String) -> String {
    if msg.len() <= MAX_MESSAGE {
        return msg;
    }
    let mut end = MAX_MESSAGE;
    while !msg.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} more bytes)", &msg[..end], msg.len() - end)
}

/// Writes records of any schema in the generic text form, one per line
/// (for formats without a text form of their own).
pub struct TextSink<W: crate::output::Finish> {
    out: W,
    /// Lines not yet written (gathered up to 64 KB: one write a line
    /// would cost more than the formatting).
    line: String,
}

impl<W: crate::output::Finish> TextSink<W> {
    pub fn new(out: W) -> Self {
        TextSink {
            out,
            line: String::new(),
        }
    }
}

impl<W: crate::output::Finish> crate::Sink for TextSink<W> {
    fn write_record(&mut self, rec: &Record<'_>) -> Result<(), crate::Error> {
        format_record(&mut self.line, rec);
        self.line.push('\n');
        if self.line.len() >= 1 << 16 {
            self.out.write_all(self.line.as_bytes())?;
            self.line.clear();
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<(), crate::Error> {
        self.out.write_all(self.line.as_bytes())?;
        self.out.finish()?;
        Ok(())
    }
}

#[cfg(test)]
mod bytes_tests {
    use super::*;
    use crate::schema::{FieldDef, Schema};

    fn round_trip(bytes: &[u8]) -> String {
        let mut schema = Schema::new("t");
        schema.add_type(
            "note",
            crate::RecordKind::Other,
            vec![FieldDef::new("data", FieldType::Bytes, None)],
        );
        let ty = &schema.types[0];
        let mut buf = RecordBuf::new();
        buf.reset(ty);
        buf.set(0, Value::Bytes(bytes));
        let mut line = String::new();
        format_record(&mut line, &buf.as_record(ty));
        let mut back = RecordBuf::new();
        parse_record(&line, &schema, &mut back).unwrap();
        assert_eq!(
            back.as_record(ty).get(0),
            Some(Value::Bytes(bytes)),
            "{line}"
        );
        line
    }

    #[test]
    fn text_bytes_are_quoted_and_others_hex_and_both_read_back() {
        assert_eq!(
            round_trip(b"tramp:module 0x10 /usr/bin/ls"),
            "note data=\"tramp:module 0x10 /usr/bin/ls\""
        );
        assert_eq!(
            round_trip(b"a \"quoted\"\\ line\n"),
            "note data=\"a \\\"quoted\\\"\\\\ line\\n\""
        );
        assert_eq!(round_trip(b"\x00\x01\xff"), "note data=x:0001ff");
        assert_eq!(round_trip(b"\x1b[0m"), "note data=x:1b5b306d");
    }

    #[test]
    fn hex_with_a_multibyte_character_is_an_error_not_a_panic() {
        let mut schema = Schema::new("t");
        schema.add_type(
            "note",
            crate::RecordKind::Other,
            vec![FieldDef::new("data", FieldType::Bytes, None)],
        );
        let mut buf = RecordBuf::new();
        let e = parse_record("note data=x:0\u{e9}0", &schema, &mut buf).unwrap_err();
        assert!(e.contains("not hex"), "{e}");
    }
}
