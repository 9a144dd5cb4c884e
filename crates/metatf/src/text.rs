//! Meta-TF's text form: a header line, the DTD itself on `#| ` lines, then
//! one record per line in tramp's generic text form. A file in this form
//! describes itself, so it converts to the binary form with nothing else.
//!
//! ```text
//! # tramp metatf-text 1
//! #| tag.width = 1;
//! #| ...
//! open tag=4 time=17 fd=3 flags=2 plen=4 path=x:2f746d70
//! ```

use std::io::{self, BufRead, Read};
use std::sync::Arc;

use tramp_core::output::Finish;
use tramp_core::{Error, Position, Record, RecordBuf, Schema, Sink, Source};

use crate::plan::Plan;

pub const HEADER: &str = "# tramp metatf-text 1";
const FORMAT: &str = "metatf-text";
const MAX_LINE: usize = 1 << 24;

/// Writes the text form.
pub struct MetaTextSink<W: Finish> {
    out: W,
    line: String,
}

impl<W: Finish> MetaTextSink<W> {
    /// Writes the header and the DTD text.
    pub fn new(mut out: W, dtd_text: &str) -> io::Result<Self> {
        writeln!(out, "{HEADER}")?;
        for l in dtd_text.lines() {
            writeln!(out, "#| {l}")?;
        }
        Ok(MetaTextSink {
            out,
            line: String::new(),
        })
    }
}

impl<W: Finish> Sink for MetaTextSink<W> {
    fn write_record(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        self.line.clear();
        tramp_core::text::format_record(&mut self.line, rec);
        self.line.push('\n');
        Ok(self.out.write_all(self.line.as_bytes())?)
    }

    fn finish(mut self: Box<Self>) -> Result<(), Error> {
        self.out.flush()?;
        Ok(self.out.finish()?)
    }
}

/// Reads the text form.
pub struct MetaTextSource<R> {
    input: R,
    plan: Arc<Plan>,
    header: tramp_core::Header,
    buf: RecordBuf,
    line: Vec<u8>,
    offset: u64,
    line_no: u64,
    record: u64,
    pending: Option<Vec<u8>>,
    done: bool,
}

fn syntax(pos: Position, msg: String) -> Error {
    Error::decode(
        FORMAT,
        pos,
        crate::codec::MetaError::Encode {
            record: "line".into(),
            field: String::new(),
            why: tramp_core::text::clip(msg),
        },
    )
}

impl<R: BufRead> MetaTextSource<R> {
    /// Reads the header and the DTD (from `#| ` lines, or `dtd` if there
    /// are none).
    pub fn open(mut input: R, dtd: Option<&str>) -> Result<Self, Error> {
        let mut dtd_text = String::new();
        let mut line = Vec::new();
        let mut offset = 0u64;
        let mut line_no = 0u64;
        let mut pending = None;
        loop {
            line.clear();
            let n = (&mut input)
                .take(MAX_LINE as u64)
                .read_until(b'\n', &mut line)?;
            if n == 0 {
                break;
            }
            line_no += 1;
            let text = String::from_utf8_lossy(&line);
            if let Some(d) = text.strip_prefix("#| ").or_else(|| text.strip_prefix("#|")) {
                dtd_text.push_str(d.trim_end_matches('\n'));
                dtd_text.push('\n');
            } else if text.starts_with('#') || text.trim().is_empty() {
            } else {
                pending = Some(line.clone());
                break;
            }
            offset += n as u64;
        }
        if dtd_text.is_empty() {
            match dtd {
                Some(d) => dtd_text = d.to_string(),
                None => {
                    return Err(Error::Usage(
                        "the text has no `#| ` DTD lines; pass the DTD with --dtd".into(),
                    ));
                }
            }
        }
        let checked = crate::load(&dtd_text)
            .map_err(|d| Error::Language(crate::render("dtd", &dtd_text, &d)))?;
        Ok(MetaTextSource {
            input,
            plan: Arc::new(Plan::compile(&checked)),
            header: tramp_core::Header {
                dtd: Some(dtd_text),
                notes: Vec::new(),
            },
            buf: RecordBuf::new(),
            line: Vec::new(),
            offset,
            line_no: line_no.saturating_sub(pending.is_some() as u64),
            record: 0,
            pending,
            done: false,
        })
    }

    pub fn dtd_text(&self) -> &str {
        self.header.dtd.as_deref().unwrap_or_default()
    }
}

impl<R: BufRead> Source for MetaTextSource<R> {
    fn schema(&self) -> &Arc<Schema> {
        &self.plan.schema
    }

    fn next_record(&mut self) -> Result<Option<Record<'_>>, Error> {
        loop {
            if self.done {
                return Ok(None);
            }
            self.line.clear();
            match self.pending.take() {
                Some(l) => self.line = l,
                None => {
                    let n = (&mut self.input)
                        .take(MAX_LINE as u64 + 1)
                        .read_until(b'\n', &mut self.line)?;
                    if n == 0 {
                        self.done = true;
                        return Ok(None);
                    }
                }
            }
            self.line_no += 1;
            let pos = Position::new(self.offset, self.record).with_line(self.line_no);
            self.offset += self.line.len() as u64;
            if self.line.len() > MAX_LINE {
                self.done = true;
                return Err(syntax(pos, format!("line is longer than {MAX_LINE} bytes")));
            }
            if self.line.last() != Some(&b'\n') {
                self.done = true;
                return Err(syntax(
                    pos,
                    "the text ends in the middle of this line (no newline): the file was cut"
                        .into(),
                ));
            }
            let Ok(text) = std::str::from_utf8(&self.line) else {
                self.done = true;
                return Err(syntax(pos, "invalid UTF-8".into()));
            };
            let text = text.trim();
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            match tramp_core::text::parse_record(text, &self.plan.schema, &mut self.buf) {
                Ok(ty) => {
                    self.record += 1;
                    let ty = &self.plan.schema.types[ty.index];
                    return Ok(Some(self.buf.as_record(ty)));
                }
                Err(msg) => {
                    self.done = true;
                    return Err(syntax(pos, msg));
                }
            }
        }
    }

    fn position(&self) -> Position {
        Position::new(self.offset, self.record).with_line(self.line_no + 1)
    }

    fn header(&self) -> &tramp_core::Header {
        &self.header
    }
}
