//! Access lines read as records, whatever the format: a format gives the
//! parser of one line; this reader keeps where each line is, fills one
//! reusable record, and names damage with its line, byte offset and
//! record.

use std::io::BufRead;
use std::sync::Arc;

use tramp_core::lines::Lines;
use tramp_core::{Error, Position, Record, RecordBuf, Schema, Source};

use crate::error::MemTraceError;
use crate::schema::{Access, schema};

/// One line's access (kind, address, size if the format has one), or
/// `None` for a line that is not an access (a banner, a blank line).
pub type Parsed = Option<(Access, u64, Option<u64>)>;

/// Reads access lines with `parse`, as records of [`schema`].
pub struct AccessLines<R> {
    lines: Lines<R>,
    buf: RecordBuf,
    records: u64,
    format: &'static str,
    parse: fn(&[u8]) -> Result<Parsed, MemTraceError>,
}

impl<R: BufRead> AccessLines<R> {
    pub fn new(
        input: R,
        format: &'static str,
        parse: fn(&[u8]) -> Result<Parsed, MemTraceError>,
    ) -> Self {
        AccessLines {
            lines: Lines::new(input),
            buf: RecordBuf::new(),
            records: 0,
            format,
            parse,
        }
    }
}

impl<R: BufRead> Source for AccessLines<R> {
    fn schema(&self) -> &Arc<Schema> {
        schema()
    }

    fn next_record(&mut self) -> Result<Option<Record<'_>>, Error> {
        loop {
            if !self.lines.advance()? {
                return Ok(None);
            }
            match (self.parse)(self.lines.line()) {
                Ok(None) => continue,
                Ok(Some((access, address, size))) => {
                    let ty = access.record_type();
                    self.buf.reset(ty);
                    self.buf.set_u64(0, address);
                    match size {
                        Some(s) => self.buf.set_u64(1, s),
                        None => self.buf.set_absent(1),
                    }
                    self.records += 1;
                    return Ok(Some(self.buf.as_record(ty)));
                }
                Err(e) => return Err(self.lines.error(self.format, self.records, e)),
            }
        }
    }

    fn position(&self) -> Position {
        self.lines.next(self.records)
    }
}

/// Each record of `text` read by `parse` as `name 0xADDRESS[ SIZE]`: what
/// the formats' tests compare.
#[cfg(test)]
pub(crate) fn describe(
    text: &str,
    parse: fn(&[u8]) -> Result<Parsed, MemTraceError>,
) -> Result<Vec<String>, Error> {
    let mut r = AccessLines::new(text.as_bytes(), "test", parse);
    let mut out = Vec::new();
    while let Some(rec) = r.next_record()? {
        let a = rec.get(0).and_then(|v| v.as_u64()).unwrap_or(0);
        let mut line = format!("{} {a:#x}", rec.record_type().name);
        if let Some(s) = rec.get(1).and_then(|v| v.as_u64()) {
            line.push_str(&format!(" {s}"));
        }
        out.push(line);
    }
    Ok(out)
}
