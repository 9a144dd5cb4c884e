//! The universal Meta-TF reader and writer: any DTD, run from its compiled
//! [`Plan`], as a tramp [`Source`] and [`Sink`].
//!
//! Container (docs/formats/metatf.md, "Trace files"): the Appendix B header
//! (`\x7fMTF`, class, byte order, DTD name, section index), the DTD's own
//! text as section 0 when it is embedded, then the record stream. Metadata
//! records change a field's width or interpretation for one record type in
//! the current section; section records switch the current section.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::sync::Arc;

use tramp_core::io::Finish;
use tramp_core::{Error, Position, Record, RecordBuf, Schema, Sink, Source, Value};

use crate::check::Interp;
use crate::plan::{Op, Plan, Step, StepWidth, TAG_METADATA, TAG_SECTION};

pub const MAGIC: [u8; 4] = [0x7f, b'M', b'T', b'F'];
const FORMAT: &str = "metatf";
/// Longest record accepted (a width taken from a field could claim more).
pub const MAX_RECORD: usize = 16 << 20;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetaError {
    #[error("not a Meta-TF trace (magic {0:02x?}, expected 7f 4d 54 46)")]
    Magic(Vec<u8>),
    #[error("header field {field} has an impossible value {value}")]
    Header { field: &'static str, value: u64 },
    #[error("the header's section index points past the end of the file ({0})")]
    Index(String),
    /// A field that reads a data section, and what is wrong with it.
    #[error("data section: {0}")]
    DataSection(String),
    #[error("the trace names DTD `{0}` and does not embed it; pass its file (--dtd)")]
    NoDtd(String),
    #[error("the embedded DTD does not check: {0}")]
    BadDtd(String),
    #[error("unknown tag {tag} in section {section}")]
    UnknownTag { tag: u64, section: u8 },
    #[error("record `{record}` is cut short: it needs {needed} bytes, the input has {available}")]
    Truncated {
        record: String,
        needed: usize,
        available: usize,
    },
    #[error("field `{field}` of `{record}` claims {len} bytes (at most {MAX_RECORD})")]
    Absurd {
        record: String,
        field: String,
        len: u64,
    },
    #[error("metadata names record tag {tag}, field {field}, property {property}: {why}")]
    Metadata {
        tag: u64,
        field: u64,
        property: u64,
        why: String,
    },
    #[error("field `{field}` of `{record}`: {why}")]
    Encode {
        record: String,
        field: String,
        why: String,
    },
    #[error("record type `{0}` has no place in this DTD")]
    Unmapped(String),
}

/// The trace header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// 1: 32-bit, 2: 64-bit (also the width of the header's own integers).
    pub class: u8,
    pub big_endian: bool,
    pub dtd_name: String,
    pub nrecords: u64,
    pub start: u64,
    /// (number, start, size); number 0 holds the embedded DTD.
    pub sections: Vec<(u8, u64, u64)>,
}

fn put(out: &mut Vec<u8>, v: u64, n: usize, big: bool) {
    let b = v.to_le_bytes();
    if big {
        out.extend(b[..n].iter().rev());
    } else {
        out.extend_from_slice(&b[..n]);
    }
}

#[inline(always)]
fn get(b: &[u8], big: bool) -> u64 {
    match (b.len(), big) {
        (1, _) => return b[0] as u64,
        (2, true) => return u16::from_be_bytes([b[0], b[1]]) as u64,
        (2, false) => return u16::from_le_bytes([b[0], b[1]]) as u64,
        (4, true) => return u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as u64,
        (4, false) => return u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64,
        (8, true) => return u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        (8, false) => return u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        _ => {}
    }
    let mut v = 0u64;
    if big {
        for x in b {
            v = v << 8 | *x as u64;
        }
    } else {
        for x in b.iter().rev() {
            v = v << 8 | *x as u64;
        }
    }
    v
}

impl Header {
    fn int(&self) -> usize {
        if self.class == 2 { 8 } else { 4 }
    }

    /// Encodes the header and index (offsets as given).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&MAGIC);
        out.push(self.class);
        out.push(if self.big_endian { 2 } else { 1 });
        out.push(self.dtd_name.len() as u8);
        out.extend_from_slice(&[0; 9]);
        let (n, big) = (self.int(), self.big_endian);
        put(&mut out, self.sections.len() as u64, n, big);
        put(&mut out, self.start, n, big);
        put(&mut out, self.nrecords, n, big);
        out.extend_from_slice(self.dtd_name.as_bytes());
        for (num, start, size) in &self.sections {
            put(&mut out, *num as u64, n, big);
            put(&mut out, *start, n, big);
            put(&mut out, *size, n, big);
        }
        out
    }

    /// Length of the encoded header and index.
    pub fn encoded_len(&self) -> usize {
        16 + 3 * self.int() + self.dtd_name.len() + self.sections.len() * 3 * self.int()
    }
}

/// Reads exactly `n` bytes or reports how many there were.
fn read_n(r: &mut dyn Read, n: usize, what: &'static str) -> Result<Vec<u8>, MetaError> {
    let mut v = vec![0u8; n];
    let mut got = 0;
    while got < n {
        match r.read(&mut v[got..]) {
            Ok(0) => {
                return Err(MetaError::Truncated {
                    record: what.into(),
                    needed: n,
                    available: got,
                });
            }
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => {
                return Err(MetaError::Truncated {
                    record: what.into(),
                    needed: n,
                    available: got,
                });
            }
        }
    }
    Ok(v)
}

/// Skips `n` bytes in bounded steps (a header may claim anything).
fn skip(r: &mut dyn Read, n: u64, what: &'static str) -> Result<(), MetaError> {
    let got = io::copy(&mut r.take(n), &mut io::sink()).unwrap_or(0);
    if got < n {
        return Err(MetaError::Truncated {
            record: what.into(),
            needed: n.min(usize::MAX as u64) as usize,
            available: got as usize,
        });
    }
    Ok(())
}

/// Reads the header, its index and the embedded DTD text (if any), leaving
/// `r` at the start of the record stream. Returns the bytes consumed.
pub fn read_header(r: &mut dyn Read) -> Result<(Header, Option<String>, u64), MetaError> {
    read_header_sections(r, &mut |_, _| Ok(()))
}

/// A data section read during the header: its number and the reader of
/// its (raw) bytes.
pub type SectionSink<'a> = dyn FnMut(u8, &mut dyn Read) -> Result<(), MetaError> + 'a;

/// Like [`read_header`], handing each data section's bytes to `data`.
pub fn read_header_sections(
    r: &mut dyn Read,
    data: &mut SectionSink<'_>,
) -> Result<(Header, Option<String>, u64), MetaError> {
    let fixed = read_n(r, 16, "header")?;
    if fixed[..4] != MAGIC {
        return Err(MetaError::Magic(fixed[..4].to_vec()));
    }
    let class = fixed[4];
    let big = match fixed[5] {
        1 => false,
        2 => true,
        v => {
            return Err(MetaError::Header {
                field: "byteorder",
                value: v as u64,
            });
        }
    };
    let n = match class {
        1 => 4,
        2 => 8,
        v => {
            return Err(MetaError::Header {
                field: "class",
                value: v as u64,
            });
        }
    };
    let dtdlen = fixed[6] as usize;
    let ints = read_n(r, 3 * n, "header")?;
    let nsections = get(&ints[..n], big);
    let start = get(&ints[n..2 * n], big);
    let nrecords = get(&ints[2 * n..], big);
    if nsections > 256 {
        return Err(MetaError::Header {
            field: "nsections",
            value: nsections,
        });
    }
    let name = read_n(r, dtdlen, "header")?;
    let dtd_name = String::from_utf8(name).map_err(|_| MetaError::Header {
        field: "dtd",
        value: dtdlen as u64,
    })?;
    let mut sections = Vec::new();
    for _ in 0..nsections {
        let e = read_n(r, 3 * n, "section index")?;
        let num = get(&e[..n], big);
        if num > 255 {
            return Err(MetaError::Header {
                field: "section number",
                value: num,
            });
        }
        sections.push((num as u8, get(&e[n..2 * n], big), get(&e[2 * n..], big)));
    }
    let mut consumed = (16 + 3 * n + dtdlen + nsections as usize * 3 * n) as u64;
    if start < consumed {
        return Err(MetaError::Index(format!(
            "the records start at byte {start}, inside the header"
        )));
    }
    let mut dtd = None;
    // Sections lie between the index and the record stream, in order.
    let mut ordered = sections.clone();
    ordered.sort_by_key(|(_, s, _)| *s);
    for (num, s, size) in ordered {
        if s < consumed || s.checked_add(size).is_none_or(|e| e > start) {
            return Err(MetaError::Index(format!("section {num} at {s}+{size}")));
        }
        skip(r, s - consumed, "section")?;
        if num != 0 {
            let mut body = r.take(size);
            data(num, &mut body)?;
            if body.limit() > 0 {
                let left = body.limit();
                skip(r, left, "section")?;
            }
            consumed = s + size;
            continue;
        }
        if size > MAX_RECORD as u64 {
            return Err(MetaError::Index(format!(
                "section {num} claims {size} bytes"
            )));
        }
        let body = read_n(r, size as usize, "section")?;
        consumed = s + size;
        if num == 0 {
            dtd = Some(String::from_utf8(body).map_err(|_| MetaError::BadDtd("not UTF-8".into()))?);
        }
    }
    skip(r, start - consumed, "header")?;
    let header = Header {
        class,
        big_endian: big,
        dtd_name,
        nrecords,
        start,
        sections,
    };
    Ok((header, dtd, start))
}

/// Encoding in effect for one field, after metadata.
#[derive(Clone, Debug)]
struct FieldState {
    width: Option<u32>,
    interp: Interp,
}

/// Widths, interpretations and previous values that metadata and records
/// change as the trace goes on; shared by reader and writer.
#[derive(Default)]
struct Live {
    section: u8,
    overrides: HashMap<(u8, u64, usize), FieldState>,
    /// Previous values by (section, name id): `prev[section * names + id]`.
    prev: Vec<Option<u64>>,
    names: usize,
}

impl Live {
    fn new(names: usize) -> Live {
        Live {
            names,
            prev: vec![None; 256 * names.max(1)],
            ..Live::default()
        }
    }

    fn get_prev(&self, id: usize) -> Option<u64> {
        self.prev[self.section as usize * self.names + id]
    }

    fn set_prev(&mut self, id: usize, v: u64) {
        let i = self.section as usize * self.names + id;
        self.prev[i] = Some(v);
    }

    fn state(&self, rec_tag: u64, s: &Step) -> (Option<u32>, Interp) {
        let found = if self.overrides.is_empty() {
            None
        } else {
            self.overrides.get(&(self.section, rec_tag, s.pos))
        };
        match found {
            Some(f) => (f.width, f.interp.clone()),
            None => (
                match s.width {
                    StepWidth::Bytes(n) => Some(n),
                    StepWidth::Of(_) => None,
                },
                s.interp.clone(),
            ),
        }
    }

    fn apply_metadata(
        &mut self,
        plan: &Plan,
        tag: u64,
        field: u64,
        property: u64,
        values: &[u64],
    ) -> Result<(), MetaError> {
        let bad = |why: &str| MetaError::Metadata {
            tag,
            field,
            property,
            why: why.into(),
        };
        let r = plan
            .record(self.section, tag)
            .ok_or_else(|| bad("no such record in this section"))?;
        let rp = &plan.records[r];
        let step = find_step(&rp.ops, field as usize).ok_or_else(|| bad("no such field"))?;
        let key = (self.section, tag, field as usize);
        let cur = self.overrides.get(&key).cloned().unwrap_or(FieldState {
            width: match step.width {
                StepWidth::Bytes(n) => Some(n),
                StepWidth::Of(_) => None,
            },
            interp: step.interp.clone(),
        });
        let v = |i: usize| values.get(i).copied().ok_or_else(|| bad("missing value"));
        let next = match property {
            0 => FieldState {
                width: Some(v(0)? as u32),
                interp: cur.interp,
            },
            1 => FieldState {
                width: cur.width,
                interp: Interp::None,
            },
            2 => FieldState {
                width: cur.width,
                interp: Interp::BaseOffset(v(0)?),
            },
            3 => {
                self.set_prev(step.name_id, v(0)?);
                FieldState {
                    width: cur.width,
                    interp: Interp::Delta(v(0)?),
                }
            }
            4 => FieldState {
                width: Some(0),
                interp: Interp::Default(v(0)?),
            },
            6 => {
                self.set_prev(step.name_id, v(0)?);
                FieldState {
                    width: Some(0),
                    interp: Interp::Stride {
                        initial: v(0)?,
                        stride: v(1)? as u32 as i32 as i64,
                    },
                }
            }
            5 | 7 => {
                return Err(bad(
                    "section interpretations are not supported by this reader yet",
                ));
            }
            _ => return Err(bad("unknown property code")),
        };
        self.overrides.insert(key, next);
        Ok(())
    }
}

fn find_step(ops: &[Op], pos: usize) -> Option<&Step> {
    for op in ops {
        match op {
            Op::Field(s) if s.pos == pos => return Some(s),
            Op::Field(_) => {}
            Op::Repeat { body, .. } => {
                if let Some(s) = find_step(body, pos) {
                    return Some(s);
                }
            }
        }
    }
    None
}

/// Number of metadata values that follow, by property code.
fn metadata_values(property: u64) -> usize {
    match property {
        1 => 0,
        6 | 7 => 2,
        _ => 1,
    }
}

fn sext(v: u64, n: u32) -> u64 {
    if n == 0 || n >= 8 {
        return v;
    }
    let s = 64 - 8 * n;
    (((v << s) as i64) >> s) as u64
}

/// A data section as the reader uses it: decompressed into a temporary
/// file (memory stays bounded), read sequentially by `sectionStride`
/// fields, with a lookahead that is only consumed when a record completes.
pub struct DataSection {
    file: io::BufReader<std::fs::File>,
    pub size: u64,
    ahead: Vec<u8>,
    /// Bytes of `ahead` used by the record being decoded.
    used: usize,
}

impl DataSection {
    fn load(r: &mut dyn Read) -> Result<DataSection, MetaError> {
        let io_err = |e: io::Error| MetaError::DataSection(e.to_string());
        let mut tmp = tempfile::tempfile().map_err(io_err)?;
        let mut head = [0u8; 4];
        let mut n = 0;
        while n < 4 {
            match r.read(&mut head[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) => return Err(io_err(e)),
            }
        }
        let mut whole = io::Cursor::new(head[..n].to_vec()).chain(r);
        if head[..n] == [0x28, 0xB5, 0x2F, 0xFD] {
            zstd::stream::copy_decode(&mut whole, &mut tmp).map_err(io_err)?;
        } else {
            io::copy(&mut whole, &mut tmp).map_err(io_err)?;
        }
        use std::io::Seek;
        let size = tmp.stream_position().map_err(io_err)?;
        tmp.rewind().map_err(io_err)?;
        Ok(DataSection {
            file: io::BufReader::new(tmp),
            size,
            ahead: Vec::new(),
            used: 0,
        })
    }

    /// The next `n` bytes after those already used by this record.
    fn next(&mut self, n: usize) -> Option<&[u8]> {
        while self.ahead.len() < self.used + n {
            let mut chunk = [0u8; 4096];
            let k = self.file.read(&mut chunk).ok()?;
            if k == 0 {
                return None;
            }
            self.ahead.extend_from_slice(&chunk[..k]);
        }
        let b = &self.ahead[self.used..self.used + n];
        self.used += n;
        Some(b)
    }

    fn commit(&mut self) {
        self.ahead.drain(..self.used);
        self.used = 0;
    }

    fn rollback(&mut self) {
        self.used = 0;
    }
}

/// One decoded field: output field, value, and for byte strings their
/// place in the buffer (start, length).
type Decoded = (usize, u64, Option<(usize, usize)>);

/// Reads records of any DTD.
pub struct MetaSource<R> {
    /// One record buffer per fixed-layout record plan, holding its
    /// template's constants for good: the fast path only overwrites the
    /// variable fields (indexed like `plan.records`).
    fast_bufs: Vec<RecordBuf>,
    /// Reused between records.
    prev_updates: Vec<(usize, u64)>,
    values: Vec<u64>,
    input: R,
    trace_header: tramp_core::Header,
    data: HashMap<u8, DataSection>,
    plan: Arc<Plan>,
    header: Header,
    live: Live,
    buf: Vec<u8>,
    pos: usize,
    eof: bool,
    base: u64,
    record: u64,
    out: RecordBuf,
    done: bool,
    scratch: Vec<Decoded>,
}

impl<R: Read> MetaSource<R> {
    /// Opens a trace: its DTD is the embedded one, else the text `dtd`
    /// (the caller resolves the header's DTD name on a local search path;
    /// nothing is ever fetched over the network).
    pub fn open(mut input: R, dtd: Option<&str>) -> Result<Self, Error> {
        let at0 = || Position::new(0, 0);
        let mut data = HashMap::new();
        let (header, embedded, start) = read_header_sections(&mut input, &mut |num, body| {
            data.insert(num, DataSection::load(body)?);
            Ok(())
        })
        .map_err(|e| Error::decode(FORMAT, at0(), e))?;
        let dtd_text = match (embedded, dtd) {
            (Some(text), _) => text,
            (None, Some(d)) => d.to_string(),
            (None, None) => {
                return Err(Error::decode(
                    FORMAT,
                    at0(),
                    MetaError::NoDtd(header.dtd_name.clone()),
                ));
            }
        };
        let dtd = crate::load(&dtd_text).map_err(|d| {
            Error::decode(
                FORMAT,
                at0(),
                MetaError::BadDtd(crate::render("dtd", &dtd_text, &d)),
            )
        })?;
        let plan = Plan::compile(&dtd);
        let names = plan.names.len();
        let fast_bufs = plan
            .records
            .iter()
            .map(|r| {
                let mut b = RecordBuf::new();
                if let Some(layout) = &r.layout {
                    b.reset_from(&plan.schema.types[r.schema_type], &layout.template);
                }
                b
            })
            .collect();
        Ok(MetaSource {
            fast_bufs,
            prev_updates: Vec::new(),
            values: Vec::new(),
            live: Live::new(names),
            input,
            trace_header: tramp_core::Header {
                dtd: Some(dtd_text),
                notes: Vec::new(),
            },
            data,
            plan: Arc::new(plan),
            header,
            buf: Vec::new(),
            pos: 0,
            eof: false,
            base: start,
            record: 0,
            out: RecordBuf::new(),
            done: false,
            scratch: Vec::new(),
        })
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    pub fn plan(&self) -> &Arc<Plan> {
        &self.plan
    }

    fn fill(&mut self, need: usize) -> io::Result<bool> {
        if self.buf.len() - self.pos >= need {
            return Ok(true);
        }
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.base += self.pos as u64;
            self.pos = 0;
        }
        while self.buf.len() < need && !self.eof {
            let old = self.buf.len();
            let want = (need - old).max(1 << 16);
            self.buf.resize(old + want, 0);
            let n = loop {
                match self.input.read(&mut self.buf[old..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        self.buf.truncate(old);
                        return Err(e);
                    }
                }
            };
            self.buf.truncate(old + n);
            if n == 0 {
                self.eof = true;
            }
        }
        Ok(self.buf.len() - self.pos >= need)
    }

    fn fail(&mut self, e: MetaError) -> Error {
        self.done = true;
        Error::decode(
            FORMAT,
            Position::new(self.base + self.pos as u64, self.record),
            e,
        )
    }

    /// Calls `f` with every remaining record and returns how many there
    /// were: the same records as [`Source::next_record`], with the fast
    /// path's per-record checks hoisted out of the loop. Stops at the first
    /// error (records before it have been delivered).
    pub fn for_each_record(&mut self, mut f: impl FnMut(&Record<'_>)) -> Result<u64, Error> {
        let mut count = 0u64;
        loop {
            let window = self.plan.fast_window;
            if window > 0 && self.buf.len() - self.pos < window && !self.eof {
                self.fill(window).inspect_err(|_| self.done = true)?;
            }
            count += if self.header.big_endian {
                self.fast_run::<true>(&mut f)
            } else {
                self.fast_run::<false>(&mut f)
            };
            match self.next_record()? {
                Some(rec) => f(&rec),
                None => return Ok(count),
            }
            count += 1;
        }
    }

    /// The fast path of [`Self::try_fast`] as a loop over what is buffered,
    /// with everything that cannot change inside it read once; returns the
    /// number of records given to `f`.
    fn fast_run<const BIG: bool>(&mut self, f: &mut impl FnMut(&Record<'_>)) -> u64 {
        let plan = &*self.plan;
        let window = plan.fast_window;
        if window == 0 || !self.live.overrides.is_empty() {
            return 0;
        }
        let shift = 64 - 8 * plan.dtd.tag_width;
        let row = &plan.fast_index[self.live.section as usize * 256..][..256];
        let load = |d: &[u8], at: usize, shift: u32| {
            let word: [u8; 8] = d[at..at + 8].try_into().expect("8 bytes");
            if BIG {
                u64::from_be_bytes(word) >> shift
            } else {
                u64::from_le_bytes(word) & (u64::MAX >> shift)
            }
        };
        let (mut pos, end) = (self.pos, self.buf.len());
        let mut n = 0u64;
        while end - pos >= window {
            let d = &self.buf[pos..end];
            let tag = load(d, 0, shift);
            let slot = if tag < 256 { row[tag as usize] } else { 0 };
            if slot == 0 {
                break;
            }
            let ri = slot as usize - 1;
            let rp = &plan.records[ri];
            let Some(layout) = rp.layout.as_ref() else {
                break;
            };
            let ty = &plan.schema.types[rp.schema_type];
            let out = &mut self.fast_bufs[ri];
            for r in &layout.reads {
                out.set_u64(r.out as usize, load(d, r.at as usize, r.shift));
            }
            f(&out.as_record(ty));
            pos += layout.len;
            n += 1;
        }
        self.pos = pos;
        self.record += n;
        n
    }

    /// Decodes a fixed-layout record while no metadata is in effect and a
    /// whole fast window is buffered (so every 8-byte load is in bounds)
    /// into its own record buffer; returns its record plan's index, `None`
    /// to take the general path.
    #[inline(always)]
    fn try_fast(&mut self) -> Option<usize> {
        let plan = &*self.plan;
        let data = &self.buf[self.pos..];
        if plan.fast_window == 0 || data.len() < plan.fast_window || !self.live.overrides.is_empty()
        {
            return None;
        }
        let big = self.header.big_endian;
        // The tag with one 8-byte load, like the fields below.
        let shift = 64 - 8 * plan.dtd.tag_width;
        let word: [u8; 8] = data[..8].try_into().expect("8 bytes");
        let tag = if big {
            u64::from_be_bytes(word) >> shift
        } else {
            u64::from_le_bytes(word) & (u64::MAX >> shift)
        };
        if tag >= 256 {
            return None;
        }
        let slot = plan.fast_index[self.live.section as usize * 256 + tag as usize];
        if slot == 0 {
            return None;
        }
        let ri = slot as usize - 1;
        let rp = &plan.records[ri];
        let layout = rp.layout.as_ref()?;
        let out = &mut self.fast_bufs[ri];
        for r in &layout.reads {
            let at = r.at as usize;
            let word: [u8; 8] = data[at..at + 8].try_into().expect("8 bytes");
            let v = if big {
                u64::from_be_bytes(word) >> r.shift
            } else {
                u64::from_le_bytes(word) & (u64::MAX >> r.shift)
            };
            out.set_u64(r.out as usize, v);
        }
        self.pos += layout.len;
        self.record += 1;
        Some(ri)
    }

    /// Tries to decode the record at `pos` from what is buffered; `Ok(None)`
    /// when more bytes are needed (nothing changed then).
    fn try_decode(&mut self) -> Result<Option<(usize, usize)>, MetaError> {
        // Fast path: a fixed-layout record while no metadata is in effect,
        // straight into the record buffer (no plan clone, no scratch).
        if self.live.overrides.is_empty() {
            let plan = &*self.plan;
            let data = &self.buf[self.pos..];
            let tw = plan.dtd.tag_width as usize;
            if data.len() >= tw {
                let tag = get(&data[..tw], self.header.big_endian);
                if tag != TAG_METADATA
                    && let Some(ri) = plan.record(self.live.section, tag)
                    && let Some((steps, len)) = &plan.records[ri].fast
                {
                    if data.len() < *len {
                        return Ok(None);
                    }
                    let st = plan.records[ri].schema_type;
                    self.out.reset(&plan.schema.types[st]);
                    for (out, at, w, constant) in steps {
                        let v = match constant {
                            Some(c) => *c,
                            None => get(&data[*at..*at + *w], self.header.big_endian),
                        };
                        self.out.set_u64(*out, v);
                    }
                    return Ok(Some((st, *len)));
                }
            }
        }
        let plan = self.plan.clone();
        let big = self.header.big_endian;
        let data = &self.buf[self.pos..];
        let tw = plan.dtd.tag_width as usize;
        if data.len() < tw {
            return Ok(None);
        }
        let tag = get(&data[..tw], big);
        if tag == TAG_METADATA {
            // tag, record (tag width), field (1), property (1), values (4 each)
            let head = tw + tw + 2;
            if data.len() < head {
                return Ok(None);
            }
            let rtag = get(&data[tw..2 * tw], big);
            let field = data[2 * tw] as u64;
            let property = data[2 * tw + 1] as u64;
            let n = metadata_values(property);
            if data.len() < head + 4 * n {
                return Ok(None);
            }
            let values: Vec<u64> = (0..n)
                .map(|i| get(&data[head + 4 * i..head + 4 * i + 4], big))
                .collect();
            self.live
                .apply_metadata(&plan, rtag, field, property, &values)?;
            let ty = plan.record(0, TAG_METADATA).expect("built-in");
            let st = plan.records[ty].schema_type;
            self.out.reset(&plan.schema.types[st]);
            for (i, v) in [tag, rtag, field, property].into_iter().enumerate() {
                self.out.set_u64(i, v);
            }
            if let Some(v) = values.first() {
                self.out.set_u64(4, *v);
            }
            if let Some(v) = values.get(1) {
                self.out.set_u64(5, *v);
            }
            return Ok(Some((st, head + 4 * n)));
        }
        let Some(ri) = plan.record(self.live.section, tag) else {
            return Err(MetaError::UnknownTag {
                tag,
                section: self.live.section,
            });
        };
        let rp = &plan.records[ri];
        if self.live.overrides.is_empty()
            && let Some((steps, len)) = &rp.fast
        {
            if data.len() < *len {
                return Ok(None);
            }
            let ty = &plan.schema.types[rp.schema_type];
            self.out.reset(ty);
            for (out, at, w, constant) in steps {
                let v = match constant {
                    Some(c) => *c,
                    None => get(&data[*at..*at + *w], big),
                };
                self.out.set_u64(*out, v);
            }
            return Ok(Some((rp.schema_type, *len)));
        }
        self.scratch.clear();
        let mut at = 0usize;
        let mut values = std::mem::take(&mut self.values);
        values.clear();
        values.resize(rp.positions, 0);
        let mut prev_updates = std::mem::take(&mut self.prev_updates);
        prev_updates.clear();
        let live = &self.live;
        #[allow(clippy::too_many_arguments)]
        fn run(
            ops: &[Op],
            data: &[u8],
            at: &mut usize,
            values: &mut [u64],
            big: bool,
            live: &Live,
            tag: u64,
            rname: &str,
            out: &mut Vec<Decoded>,
            prev_updates: &mut Vec<(usize, u64)>,
            sections: &mut HashMap<u8, DataSection>,
        ) -> Result<bool, MetaError> {
            for op in ops {
                match op {
                    Op::Field(s) => {
                        let (w, interp) = live.state(tag, s);
                        let w = match (w, &s.width) {
                            (Some(w), _) => w as u64,
                            (None, StepWidth::Of(i)) => values[*i],
                            (None, StepWidth::Bytes(n)) => *n as u64,
                        };
                        if w > MAX_RECORD as u64 {
                            return Err(MetaError::Absurd {
                                record: rname.into(),
                                field: s.name.clone(),
                                len: w,
                            });
                        }
                        let w = w as usize;
                        if data.len() < *at + w {
                            return Ok(false);
                        }
                        if s.bytes {
                            out.push((s.out, w as u64, Some((*at, w))));
                            values[s.pos] = w as u64;
                        } else {
                            let raw = get(&data[*at..*at + w], big);
                            let key_prev = |init: u64| {
                                prev_updates
                                    .iter()
                                    .rev()
                                    .find(|(n, _)| *n == s.name_id)
                                    .map(|(_, v)| *v)
                                    .or_else(|| live.get_prev(s.name_id))
                                    .unwrap_or(init)
                            };
                            let v = match interp {
                                Interp::None => raw,
                                Interp::SectionOffset(section) => {
                                    let size = sections.get(&section).map_or(0, |d| d.size);
                                    if raw >= size {
                                        return Err(MetaError::DataSection(format!(
                                            "offset {raw} is past the end of data section {section} ({size} bytes)"
                                        )));
                                    }
                                    raw
                                }
                                Interp::Default(d) => d,
                                Interp::BaseOffset(b) => b.wrapping_add(sext(raw, w as u32)),
                                Interp::Delta(init) => {
                                    key_prev(init).wrapping_add(sext(raw, w as u32))
                                }
                                Interp::Stride { initial, stride } => {
                                    key_prev(initial).wrapping_add(stride as u64)
                                }
                                Interp::SectionStride { section, stride } => {
                                    let k = stride as usize;
                                    if !(1..=8).contains(&k) {
                                        return Err(MetaError::DataSection(format!(
                                            "a sectionStride of {stride} bytes (1 to 8 read a value)"
                                        )));
                                    }
                                    let sec = sections.get_mut(&section).ok_or_else(|| {
                                        MetaError::DataSection(format!(
                                            "the trace has no data section {section}"
                                        ))
                                    })?;
                                    let b = sec.next(k).ok_or_else(|| {
                                        MetaError::DataSection(format!(
                                            "data section {section} has no more values"
                                        ))
                                    })?;
                                    get(b, big)
                                }
                            };
                            prev_updates.push((s.name_id, v));
                            values[s.pos] = v;
                            out.push((s.out, v, None));
                        }
                        *at += w;
                    }
                    Op::Repeat { count, body } => {
                        let n = values[*count];
                        if n > MAX_RECORD as u64 {
                            return Err(MetaError::Absurd {
                                record: rname.into(),
                                field: "count".into(),
                                len: n,
                            });
                        }
                        for _ in 0..n {
                            if !run(
                                body,
                                data,
                                at,
                                values,
                                big,
                                live,
                                tag,
                                rname,
                                out,
                                prev_updates,
                                sections,
                            )? {
                                return Ok(false);
                            }
                        }
                    }
                }
            }
            Ok(true)
        }
        let complete = run(
            &rp.ops,
            data,
            &mut at,
            &mut values,
            big,
            live,
            tag,
            &rp.name,
            &mut self.scratch,
            &mut prev_updates,
            &mut self.data,
        );
        let complete = match complete {
            Ok(c) => c,
            Err(e) => {
                self.data.values_mut().for_each(DataSection::rollback);
                return Err(e);
            }
        };
        if !complete {
            self.data.values_mut().for_each(DataSection::rollback);
            return Ok(None);
        }
        self.data.values_mut().for_each(DataSection::commit);
        // Commit: previous values, section switches, then the record.
        for (id, v) in prev_updates.drain(..) {
            self.live.set_prev(id, v);
        }
        self.prev_updates = prev_updates;
        let st = rp.schema_type;
        let ty = &plan.schema.types[st];
        self.out.reset(ty);
        let mut lists: HashMap<usize, Vec<Value>> = HashMap::new();
        for (out, v, bytes) in &self.scratch {
            let list = matches!(ty.fields[*out].ty, tramp_core::FieldType::List(_));
            if !list && bytes.is_none() {
                self.out.set_u64(*out, *v);
                continue;
            }
            let value = match bytes {
                Some((s, n)) => Value::Bytes(&data[*s..*s + *n]),
                None => Value::U64(*v),
            };
            if list {
                lists.entry(*out).or_default().push(value);
            } else {
                self.out.set(*out, value);
            }
        }
        for f in 0..ty.fields.len() {
            if matches!(ty.fields[f].ty, tramp_core::FieldType::List(_)) {
                let items = lists.remove(&f).unwrap_or_default();
                let slot = self.out.push_list(items.into_iter());
                self.out.set_slot(f, slot);
            }
        }
        if tag == TAG_SECTION {
            let number = values.get(1).copied().unwrap_or(0);
            self.live.section = number.min(255) as u8;
        }
        self.values = values;
        Ok(Some((st, at)))
    }
}

impl<R: Read> Source for MetaSource<R> {
    fn schema(&self) -> &Arc<Schema> {
        &self.plan.schema
    }

    fn next_record(&mut self) -> Result<Option<Record<'_>>, Error> {
        if self.done {
            return Ok(None);
        }
        let window = self.plan.fast_window;
        if window > 0 && self.buf.len() - self.pos < window && !self.eof {
            self.fill(window).inspect_err(|_| self.done = true)?;
        }
        if let Some(ri) = self.try_fast() {
            let st = self.plan.records[ri].schema_type;
            return Ok(Some(
                self.fast_bufs[ri].as_record(&self.plan.schema.types[st]),
            ));
        }
        let mut need = 64usize;
        let (ty, len) = loop {
            let more = self.fill(need).inspect_err(|_| self.done = true)?;
            if self.buf.len() == self.pos {
                self.done = true;
                return Ok(None);
            }
            match self.try_decode() {
                Ok(Some(r)) => break r,
                Ok(None) if !more || self.eof && need > self.buf.len() - self.pos => {
                    let available = self.buf.len() - self.pos;
                    let tw = self.plan.dtd.tag_width as usize;
                    let tag = if available >= tw {
                        get(&self.buf[self.pos..self.pos + tw], self.header.big_endian)
                    } else {
                        0
                    };
                    let name = self
                        .plan
                        .record(self.live.section, tag)
                        .map_or("record".to_string(), |i| self.plan.records[i].name.clone());
                    return Err(self.fail(MetaError::Truncated {
                        record: name,
                        needed: available + 1,
                        available,
                    }));
                }
                Ok(None) => {
                    need = (need * 2).min(MAX_RECORD + 64);
                }
                Err(e) => return Err(self.fail(e)),
            }
        };
        self.pos += len;
        self.record += 1;
        Ok(Some(self.out.as_record(&self.plan.schema.types[ty])))
    }

    fn position(&self) -> Position {
        Position::new(self.base + self.pos as u64, self.record)
    }

    fn header(&self) -> &tramp_core::Header {
        &self.trace_header
    }
}

/// Writes records of any DTD (the DTD embedded in the file).
pub struct MetaSink<W: Finish> {
    out: W,
    dtd_text: String,
    plan: Arc<Plan>,
    big: bool,
    live: Live,
    buf: Vec<u8>,
    records: u64,
    /// When the DTD has data sections: the record stream and each section
    /// go to temporary files, assembled (sections zstd-compressed one by
    /// one) when the trace is finished.
    spool: Option<Spool>,
    /// Whether data sections are zstd-compressed (the default) or stored.
    compress_sections: bool,
    /// Values the current record sends to data sections.
    pending: Vec<(u8, u64, usize)>,
    /// Whether the record being encoded is of this DTD's own schema.
    own: bool,
    /// Records of other formats that the DTD has no record for.
    pub skipped: u64,
}

fn same_kind(a: tramp_core::RecordKind, b: tramp_core::RecordKind) -> bool {
    use tramp_core::RecordKind::*;
    match (a, b) {
        (Realloc(_), Realloc(_)) => true,
        (Other, _) | (_, Other) | (Metadata, _) | (_, Metadata) => false,
        (x, y) => x == y,
    }
}

/// A field of a record of another format, by the DTD field's name; a
/// vfield's `length`/`data` take a comment's or attributes' bytes.
fn foreign_field<'a>(rec: &Record<'a>, name: &str) -> Option<Value<'a>> {
    if let Some(v) = rec.field(name) {
        return Some(v);
    }
    let text = || {
        rec.role(tramp_core::Role::Text)
            .or_else(|| rec.role(tramp_core::Role::Attributes))
            .and_then(|v| v.as_bytes())
    };
    match name {
        "data" => Some(Value::Bytes(text().unwrap_or(&[]))),
        "length" => Some(Value::U64(text().map_or(0, |b| b.len() as u64))),
        "address" => rec.role(tramp_core::Role::Address),
        _ => None,
    }
}

struct Spool {
    records: io::BufWriter<std::fs::File>,
    sections: std::collections::BTreeMap<u8, io::BufWriter<std::fs::File>>,
}

impl<W: Finish> MetaSink<W> {
    /// Starts a trace for `dtd`, whose text `dtd_text` is embedded.
    pub fn new(mut out: W, dtd_text: &str, big_endian: bool) -> Result<Self, Error> {
        let dtd =
            crate::load(dtd_text).map_err(|d| Error::Usage(crate::render("dtd", dtd_text, &d)))?;
        let plan = Plan::compile(&dtd);
        let sections = plan.strided_sections();
        let spool = if sections.is_empty() {
            let header = Self::header(dtd_text, big_endian, &[]);
            out.write_all(&header.encode())?;
            out.write_all(dtd_text.as_bytes())?;
            None
        } else {
            let mut files = std::collections::BTreeMap::new();
            for s in sections {
                files.insert(s, io::BufWriter::new(tempfile::tempfile()?));
            }
            Some(Spool {
                records: io::BufWriter::new(tempfile::tempfile()?),
                sections: files,
            })
        };
        let names = plan.names.len();
        Ok(MetaSink {
            out,
            dtd_text: dtd_text.to_string(),
            plan: Arc::new(plan),
            big: big_endian,
            live: Live::new(names),
            buf: Vec::with_capacity(1 << 16),
            records: 0,
            spool,
            pending: Vec::new(),
            own: true,
            skipped: 0,
            compress_sections: true,
        })
    }

    /// Stores data sections uncompressed instead of zstd-compressing each
    /// (readers without a zstd decoder, such as std-only generated code,
    /// can then read them).
    pub fn compress_sections(mut self, yes: bool) -> Self {
        self.compress_sections = yes;
        self
    }

    /// The header for an embedded DTD followed by data sections of the
    /// given (number, size), in that order.
    fn header(dtd_text: &str, big_endian: bool, data: &[(u8, u64)]) -> Header {
        let mut header = Header {
            class: 2,
            big_endian,
            dtd_name: String::new(),
            nrecords: 0,
            start: 0,
            sections: vec![(0, 0, dtd_text.len() as u64)],
        };
        header
            .sections
            .extend(data.iter().map(|(n, size)| (*n, 0, *size)));
        let mut at = header.encoded_len() as u64;
        for e in header.sections.iter_mut() {
            e.1 = at;
            at += e.2;
        }
        header.start = at;
        header
    }

    pub fn schema(&self) -> &Arc<Schema> {
        &self.plan.schema
    }

    fn encode(&mut self, rec: &Record<'_>) -> Result<(), MetaError> {
        let plan = self.plan.clone();
        let ty = rec.record_type();
        let own = std::ptr::eq(ty, plan.schema.types.get(ty.index).unwrap_or(ty));
        let rp = if own {
            plan.by_schema_type(ty.index)
        } else {
            // Records of another format: by name, else by kind (HATF's four
            // realloc records all map to a `realloc` record).
            plan.records.iter().find(|r| r.name == ty.name).or_else(|| {
                plan.records
                    .iter()
                    .find(|r| same_kind(plan.schema.types[r.schema_type].kind, ty.kind))
            })
        };
        let Some(rp) = rp else {
            // Nothing in this DTD for it: skipped, like other sinks do.
            self.skipped += 1;
            return Ok(());
        };
        self.own = own;
        let tw = plan.dtd.tag_width as usize;
        let mark = self.buf.len();
        if rp.tag == TAG_METADATA {
            let u = |i: usize| rec.get(i).and_then(|v| v.as_u64()).unwrap_or(0);
            let (rtag, field, property) = (u(1), u(2), u(3));
            let values: Vec<u64> = (0..metadata_values(property)).map(|i| u(4 + i)).collect();
            self.live
                .apply_metadata(&plan, rtag, field, property, &values)?;
            put(&mut self.buf, TAG_METADATA, tw, self.big);
            put(&mut self.buf, rtag, tw, self.big);
            self.buf.push(field as u8);
            self.buf.push(property as u8);
            for v in values {
                put(&mut self.buf, v, 4, self.big);
            }
            return Ok(());
        }
        let mut values = vec![0u64; rp.positions];
        let mut prev_updates = Vec::new();
        let res = self.encode_ops(&rp.ops, rp, rec, &mut values, None, &mut prev_updates);
        if let Err(e) = res {
            self.buf.truncate(mark);
            return Err(e);
        }
        for (id, v) in prev_updates {
            self.live.set_prev(id, v);
        }
        if rp.tag == TAG_SECTION {
            self.live.section = values.get(1).copied().unwrap_or(0).min(255) as u8;
        }
        Ok(())
    }

    fn encode_ops(
        &mut self,
        ops: &[Op],
        rp: &crate::plan::RecordPlan,
        rec: &Record<'_>,
        values: &mut [u64],
        index: Option<usize>,
        prev_updates: &mut Vec<(usize, u64)>,
    ) -> Result<(), MetaError> {
        for op in ops {
            match op {
                Op::Field(s) => {
                    let err = |why: String| MetaError::Encode {
                        record: rp.name.clone(),
                        field: s.name.clone(),
                        why,
                    };
                    let field = if self.own {
                        rec.get(s.out)
                    } else {
                        foreign_field(
                            rec,
                            &self.plan.schema.types[rp.schema_type].fields[s.out].name,
                        )
                    };
                    let value = match index {
                        None => field,
                        Some(i) => match field {
                            Some(Value::List(l)) => l.get(i),
                            _ => None,
                        },
                    };
                    if s.pos == 0 {
                        put(
                            &mut self.buf,
                            rp.tag,
                            self.plan.dtd.tag_width as usize,
                            self.big,
                        );
                        values[0] = rp.tag;
                        continue;
                    }
                    let (w, interp) = self.live.state(rp.tag, s);
                    if s.bytes {
                        let b = value.and_then(|v| v.as_bytes()).unwrap_or(&[]);
                        let want = match (w, &s.width) {
                            (Some(w), _) => w as usize,
                            (None, StepWidth::Of(i)) => values[*i] as usize,
                            (None, StepWidth::Bytes(n)) => *n as usize,
                        };
                        if b.len() != want {
                            return Err(err(format!(
                                "{} bytes given, the width in effect is {want}",
                                b.len()
                            )));
                        }
                        self.buf.extend_from_slice(b);
                        values[s.pos] = b.len() as u64;
                        continue;
                    }
                    let v = value.and_then(|v| v.as_u64()).unwrap_or(0);
                    let w = match (w, &s.width) {
                        (Some(w), _) => w,
                        (None, StepWidth::Of(i)) => values[*i] as u32,
                        (None, StepWidth::Bytes(n)) => *n,
                    };
                    let prev = prev_updates
                        .iter()
                        .rev()
                        .find(|(n, _)| *n == s.name_id)
                        .map(|(_, v)| *v)
                        .or_else(|| self.live.get_prev(s.name_id))
                        .unwrap_or(match interp {
                            Interp::Delta(init) | Interp::Stride { initial: init, .. } => init,
                            _ => 0,
                        });
                    let fits_u = |x: u64| w >= 8 || x >> (8 * w) == 0;
                    let fits_s = |d: i64| {
                        w >= 8
                            || (w > 0 && d >= -(1i64 << (8 * w - 1)) && d < (1i64 << (8 * w - 1)))
                            || (w == 0 && d == 0)
                    };
                    let stored = match interp {
                        Interp::SectionStride { section, stride } => {
                            let k = stride as usize;
                            if !(1..=8).contains(&k) || (k < 8 && v >> (8 * k) != 0) {
                                return Err(err(format!(
                                    "{v} does not fit the {stride}-byte elements of section {section}"
                                )));
                            }
                            self.pending.push((section, v, k));
                            0
                        }
                        Interp::None | Interp::SectionOffset(_) => {
                            if !fits_u(v) {
                                return Err(err(format!("{v} does not fit {w} bytes")));
                            }
                            v
                        }
                        Interp::Default(d) => {
                            if v != d {
                                return Err(err(format!("{v} differs from the default {d}")));
                            }
                            0
                        }
                        Interp::BaseOffset(b) => {
                            let d = v.wrapping_sub(b) as i64;
                            if !fits_s(d) {
                                return Err(err(format!(
                                    "offset {d} from base {b} does not fit {w} bytes"
                                )));
                            }
                            d as u64
                        }
                        Interp::Delta(_) => {
                            let d = v.wrapping_sub(prev) as i64;
                            if !fits_s(d) {
                                return Err(err(format!("delta {d} does not fit {w} bytes")));
                            }
                            d as u64
                        }
                        Interp::Stride { stride, .. } => {
                            if v != prev.wrapping_add(stride as u64) {
                                return Err(err(format!("{v} is off the stride")));
                            }
                            0
                        }
                    };
                    put(&mut self.buf, stored, w as usize, self.big);
                    prev_updates.push((s.name_id, v));
                    values[s.pos] = v;
                }
                Op::Repeat { count, body } => {
                    let n = values[*count];
                    for i in 0..n as usize {
                        self.encode_ops(body, rp, rec, values, Some(i), prev_updates)?;
                    }
                }
            }
        }
        Ok(())
    }
}

impl<W: Finish> Sink for MetaSink<W> {
    fn write_record(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        self.records += 1;
        self.pending.clear();
        if let Err(e) = self.encode(rec) {
            self.pending.clear();
            return Err(Error::encode(FORMAT, self.records - 1, e));
        }
        let big = self.big;
        match &mut self.spool {
            None => {
                if self.buf.len() >= 1 << 16 {
                    self.out.write_all(&self.buf)?;
                    self.buf.clear();
                }
            }
            Some(spool) => {
                for (section, v, k) in self.pending.drain(..) {
                    let mut b = Vec::with_capacity(8);
                    put(&mut b, v, k, big);
                    spool
                        .sections
                        .get_mut(&section)
                        .expect("known section")
                        .write_all(&b)?;
                }
                if self.buf.len() >= 1 << 16 {
                    spool.records.write_all(&self.buf)?;
                    self.buf.clear();
                }
            }
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<(), Error> {
        use std::io::Seek;
        let Some(mut spool) = self.spool.take() else {
            self.out.write_all(&self.buf)?;
            self.out.flush()?;
            return Ok(self.out.finish()?);
        };
        spool.records.write_all(&self.buf)?;
        let mut records = spool.records.into_inner().map_err(|e| e.into_error())?;
        // Each data section compressed on its own (split-stream compression).
        let mut packed = Vec::new();
        for (n, w) in spool.sections {
            let mut raw = w.into_inner().map_err(|e| e.into_error())?;
            let size = if self.compress_sections {
                raw.rewind()?;
                let mut z = tempfile::tempfile()?;
                zstd::stream::copy_encode(&mut raw, &mut z, 19)?;
                raw = z;
                raw.stream_position()?
            } else {
                raw.stream_position()?
            };
            raw.rewind()?;
            packed.push((n, size, raw));
        }
        let sizes: Vec<(u8, u64)> = packed.iter().map(|(n, s, _)| (*n, *s)).collect();
        let header = Self::header(&self.dtd_text, self.big, &sizes);
        self.out.write_all(&header.encode())?;
        self.out.write_all(self.dtd_text.as_bytes())?;
        for (_, _, mut z) in packed {
            io::copy(&mut z, &mut self.out)?;
        }
        records.rewind()?;
        io::copy(&mut records, &mut self.out)?;
        self.out.flush()?;
        Ok(self.out.finish()?)
    }
}
