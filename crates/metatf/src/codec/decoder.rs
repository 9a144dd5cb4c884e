//! The Meta-TF record stream, read: a fast path for fixed-layout records
//! while no metadata is in effect, and the general path (metadata, section
//! switches, variable fields, repeats, data sections) for the rest.

use std::collections::HashMap;
use std::io::Read;

use std::sync::Arc;
use tramp_core::window::{Stream, Window};

use tramp_core::{Error, Position, Record, RecordBuf, Schema, Source, Value};

use crate::check::Interp;
use crate::plan::{Op, Plan, Step, StepWidth, TAG_METADATA, TAG_SECTION};

use super::container::{DataSection, Header, read_header_sections};
use super::state::{Live, metadata_values, sext};
use super::{FORMAT, MAX_RECORD, MetaError, get};

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
    trace_header: tramp_core::Header,
    data: HashMap<u8, DataSection>,
    plan: Arc<Plan>,
    header: Header,
    live: Live,
    /// The record stream's unread bytes.
    win: Window<Stream<R>>,
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
        // Damage in the header or a section is reported where the reading
        // had got to, not at byte 0.
        let mut counted = Counted {
            inner: &mut input,
            n: 0,
        };
        let header = read_header_sections(&mut counted, &mut |num, body| {
            data.insert(num, DataSection::load(body)?);
            Ok(())
        });
        let (header, embedded, start) = header.map_err(|e| {
            // A part cut short is reported where it starts.
            let at = match &e {
                MetaError::Truncated { available, .. } => counted.n - *available as u64,
                _ => counted.n,
            };
            Error::decode(FORMAT, Position::new(at, 0), e)
        })?;
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
            win: Window::stream(input, 1 << 16, start),
            trace_header: tramp_core::Header {
                dtd: Some(dtd_text),
                notes: Vec::new(),
            },
            data,
            plan: Arc::new(plan),
            header,
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

    fn fail(&mut self, e: MetaError) -> Error {
        self.done = true;
        Error::decode(FORMAT, Position::new(self.win.offset(), self.record), e)
    }

    /// Calls `f` with every remaining record and returns how many there
    /// were: the same records as [`Source::next_record`], with the fast
    /// path's per-record checks hoisted out of the loop. Stops at the first
    /// error (records before it have been delivered).
    pub fn for_each_record(&mut self, mut f: impl FnMut(&Record<'_>)) -> Result<u64, Error> {
        let mut count = 0u64;
        loop {
            let window = self.plan.fast_window;
            if window > 0 && self.win.len() < window && !self.win.at_eof() {
                self.win.fill(window).inspect_err(|_| self.done = true)?;
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
        if window == 0 || !self.live.plain() {
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
        let buffered = self.win.buffered();
        let (mut pos, end) = (0usize, buffered.len());
        let mut n = 0u64;
        while end - pos >= window {
            let d = &buffered[pos..end];
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
        self.win.consume(pos);
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
        let data = self.win.buffered();
        if plan.fast_window == 0 || data.len() < plan.fast_window || !self.live.plain() {
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
        self.win.consume(layout.len);
        self.record += 1;
        Some(ri)
    }

    /// Tries to decode the next record from what is buffered into `out`;
    /// returns its schema type and length, `Ok(None)` when more bytes are
    /// needed (nothing changed then).
    fn try_decode(&mut self) -> Result<Option<(usize, usize)>, MetaError> {
        let big = self.header.big_endian;
        let tw = self.plan.dtd.tag_width as usize;
        let data = self.win.buffered();
        if data.len() < tw {
            return Ok(None);
        }
        let tag = get(&data[..tw], big);
        if tag == TAG_METADATA {
            return self.decode_metadata();
        }
        let section = self.live.section;
        let Some(ri) = self.plan.record(section, tag) else {
            return Err(MetaError::UnknownTag { tag, section });
        };
        if self.live.plain() && self.plan.records[ri].fast.is_some() {
            return Ok(self.decode_fixed(ri));
        }
        self.decode_general(ri, tag)
    }

    /// A metadata record: tag, record tag (tag width each), field (1),
    /// property (1), then 4-byte values; applied to the live state.
    fn decode_metadata(&mut self) -> Result<Option<(usize, usize)>, MetaError> {
        let plan = &*self.plan;
        let big = self.header.big_endian;
        let data = self.win.buffered();
        let tw = plan.dtd.tag_width as usize;
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
            .apply_metadata(plan, rtag, field, property, &values)?;
        let ty = plan.record(0, TAG_METADATA).expect("built-in");
        let st = plan.records[ty].schema_type;
        self.out.reset(&plan.schema.types[st]);
        for (i, v) in [TAG_METADATA, rtag, field, property]
            .into_iter()
            .enumerate()
        {
            self.out.set_u64(i, v);
        }
        for (i, v) in values.iter().take(2).enumerate() {
            self.out.set_u64(4 + i, *v);
        }
        Ok(Some((st, head + 4 * n)))
    }

    /// A record of fixed layout while no metadata is in effect: its steps
    /// straight into `out`, no plan clone, no scratch.
    fn decode_fixed(&mut self, ri: usize) -> Option<(usize, usize)> {
        let plan = &*self.plan;
        let big = self.header.big_endian;
        let data = self.win.buffered();
        let rp = &plan.records[ri];
        let (steps, len) = rp.fast.as_ref().expect("a fixed-layout record");
        if data.len() < *len {
            return None;
        }
        self.out.reset(&plan.schema.types[rp.schema_type]);
        for (out, at, w, constant) in steps {
            let v = match constant {
                Some(c) => *c,
                None => get(&data[*at..*at + *w], big),
            };
            self.out.set_u64(*out, v);
        }
        Some((rp.schema_type, *len))
    }

    /// Any record, run op by op: widths and interpretations from the live
    /// state, repeats, data sections. Nothing is committed (previous
    /// values, data-section positions, the section switch) unless the
    /// whole record is buffered and valid.
    fn decode_general(&mut self, ri: usize, tag: u64) -> Result<Option<(usize, usize)>, MetaError> {
        let plan = self.plan.clone();
        let rp = &plan.records[ri];
        let data = self.win.buffered();
        self.scratch.clear();
        let mut values = std::mem::take(&mut self.values);
        values.clear();
        values.resize(rp.positions, 0);
        let mut prev_updates = std::mem::take(&mut self.prev_updates);
        prev_updates.clear();
        let mut run = OpRun {
            data,
            at: 0,
            values: &mut values,
            big: self.header.big_endian,
            live: &self.live,
            tag,
            record: &rp.name,
            out: &mut self.scratch,
            prev_updates: &mut prev_updates,
            sections: &mut self.data,
        };
        let complete = run.ops(&rp.ops);
        let at = run.at;
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
        for (id, v) in prev_updates.drain(..) {
            self.live.set_prev(id, v);
        }
        self.prev_updates = prev_updates;
        self.assemble(rp.schema_type);
        if tag == TAG_SECTION {
            let number = values.get(1).copied().unwrap_or(0);
            self.live.section = number.min(255) as u8;
        }
        self.values = values;
        Ok(Some((rp.schema_type, at)))
    }

    /// Builds `out` from the decoded fields in `scratch`: numbers, byte
    /// strings from the buffer, and lists gathered per field.
    fn assemble(&mut self, st: usize) {
        let data = self.win.buffered();
        let ty = &self.plan.schema.types[st];
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
    }
}

/// One run of a record's ops over the buffered bytes: where it is, the
/// values decoded so far (by position, for widths and counts taken from
/// fields), and what it would commit.
struct OpRun<'a> {
    data: &'a [u8],
    at: usize,
    values: &'a mut [u64],
    big: bool,
    live: &'a Live,
    tag: u64,
    record: &'a str,
    out: &'a mut Vec<Decoded>,
    prev_updates: &'a mut Vec<(usize, u64)>,
    sections: &'a mut HashMap<u8, DataSection>,
}

impl OpRun<'_> {
    /// Runs `ops`; `Ok(false)` when the record is not all buffered.
    fn ops(&mut self, ops: &[Op]) -> Result<bool, MetaError> {
        for op in ops {
            let complete = match op {
                Op::Field(s) => self.field(s)?,
                Op::Repeat { count, body } => {
                    let n = self.values[*count];
                    if n > MAX_RECORD as u64 {
                        return Err(MetaError::Absurd {
                            record: self.record.into(),
                            field: "count".into(),
                            len: n,
                        });
                    }
                    let mut complete = true;
                    for _ in 0..n {
                        if !self.ops(body)? {
                            complete = false;
                            break;
                        }
                    }
                    complete
                }
            };
            if !complete {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// One field: its width, its bytes, its value under its interpretation.
    fn field(&mut self, s: &Step) -> Result<bool, MetaError> {
        let (w, interp) = self.live.state(self.tag, s);
        let w = match (w, &s.width) {
            (Some(w), _) => w as u64,
            (None, StepWidth::Of(i)) => self.values[*i],
            (None, StepWidth::Bytes(n)) => *n as u64,
        };
        if w > MAX_RECORD as u64 {
            return Err(MetaError::Absurd {
                record: self.record.into(),
                field: s.name.clone(),
                len: w,
            });
        }
        let w = w as usize;
        let at = self.at;
        if self.data.len() < at + w {
            return Ok(false);
        }
        if s.bytes {
            self.out.push((s.out, w as u64, Some((at, w))));
            self.values[s.pos] = w as u64;
            self.at += w;
            return Ok(true);
        }
        let raw = get(&self.data[at..at + w], self.big);
        let v = self.interpret(s, interp, raw, w)?;
        self.prev_updates.push((s.name_id, v));
        self.values[s.pos] = v;
        self.out.push((s.out, v, None));
        self.at += w;
        Ok(true)
    }

    /// The value a field's stored `raw` bytes (`w` of them) stand for.
    fn interpret(
        &mut self,
        s: &Step,
        interp: Interp,
        raw: u64,
        w: usize,
    ) -> Result<u64, MetaError> {
        let prev = |init: u64| {
            self.prev_updates
                .iter()
                .rev()
                .find(|(n, _)| *n == s.name_id)
                .map(|(_, v)| *v)
                .or_else(|| self.live.get_prev(s.name_id))
                .unwrap_or(init)
        };
        Ok(match interp {
            Interp::None => raw,
            Interp::SectionOffset(section) => {
                let size = self.sections.get(&section).map_or(0, |d| d.size);
                if raw >= size {
                    return Err(MetaError::DataSection(format!(
                        "offset {raw} is past the end of data section {section} ({size} bytes)"
                    )));
                }
                raw
            }
            Interp::Default(d) => d,
            Interp::BaseOffset(b) => b.wrapping_add(sext(raw, w as u32)),
            Interp::Delta(init) => prev(init).wrapping_add(sext(raw, w as u32)),
            Interp::Stride { initial, stride } => prev(initial).wrapping_add(stride as u64),
            Interp::SectionStride { section, stride } => {
                let k = stride as usize;
                if !(1..=8).contains(&k) {
                    return Err(MetaError::DataSection(format!(
                        "a sectionStride of {stride} bytes (1 to 8 read a value)"
                    )));
                }
                let sec = self.sections.get_mut(&section).ok_or_else(|| {
                    MetaError::DataSection(format!("the trace has no data section {section}"))
                })?;
                let b = sec.next(k).ok_or_else(|| {
                    MetaError::DataSection(format!("data section {section} has no more values"))
                })?;
                get(b, self.big)
            }
        })
    }
}

/// Where the record just decoded is: a fast-path buffer (record plan,
/// schema type) or the general buffer (schema type).
#[derive(Clone, Copy)]
enum Slot {
    Fast(usize, usize),
    Out(usize),
}

impl<R: Read> MetaSource<R> {
    /// Decodes the next record into its buffer; `None` at the end.
    fn advance(&mut self) -> Result<Option<Slot>, Error> {
        if self.done {
            return Ok(None);
        }
        let window = self.plan.fast_window;
        if window > 0 && self.win.len() < window && !self.win.at_eof() {
            self.win.fill(window).inspect_err(|_| self.done = true)?;
        }
        if let Some(ri) = self.try_fast() {
            let st = self.plan.records[ri].schema_type;
            return Ok(Some(Slot::Fast(ri, st)));
        }
        let mut need = 64usize;
        let (ty, len) = loop {
            let more = self.win.fill(need).inspect_err(|_| self.done = true)?;
            if self.win.is_empty() {
                self.done = true;
                return Ok(None);
            }
            match self.try_decode() {
                Ok(Some(r)) => break r,
                Ok(None) if !more || self.win.at_eof() && need > self.win.len() => {
                    let available = self.win.len();
                    let tw = self.plan.dtd.tag_width as usize;
                    let tag = if available >= tw {
                        get(&self.win.buffered()[..tw], self.header.big_endian)
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
        self.win.consume(len);
        self.record += 1;
        Ok(Some(Slot::Out(ty)))
    }

    /// The record `advance` left in `slot`.
    fn lend(&self, slot: Slot) -> Record<'_> {
        match slot {
            Slot::Fast(ri, st) => self.fast_bufs[ri].as_record(&self.plan.schema.types[st]),
            Slot::Out(st) => self.out.as_record(&self.plan.schema.types[st]),
        }
    }
}

/// Counts the bytes read through it.
struct Counted<'a, R> {
    inner: &'a mut R,
    n: u64,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = self.inner.read(buf)?;
        self.n += k as u64;
        Ok(k)
    }
}

impl<R: Read> Source for MetaSource<R> {
    fn schema(&self) -> &Arc<Schema> {
        &self.plan.schema
    }

    /// The records, then, if the header counted the records (`nrecords`
    /// not 0) and the count is not what was found, a warning.
    fn next_item(&mut self) -> Result<Option<tramp_core::Item<'_>>, Error> {
        let was_done = self.done;
        if let Some(slot) = self.advance()? {
            return Ok(Some(tramp_core::Item::Record(self.lend(slot))));
        }
        let want = self.header.nrecords;
        if !was_done && want != 0 && want != self.record {
            return Ok(Some(tramp_core::Item::Warning(tramp_core::Warning {
                format: FORMAT,
                offset: self.win.offset(),
                message: format!(
                    "the header counts {want} records, the trace has {}",
                    self.record
                ),
                skipped: 0,
            })));
        }
        Ok(None)
    }

    fn next_record(&mut self) -> Result<Option<Record<'_>>, Error> {
        Ok(self.advance()?.map(|slot| self.lend(slot)))
    }

    fn position(&self) -> Position {
        Position::new(self.win.offset(), self.record)
    }

    fn header(&self) -> &tramp_core::Header {
        &self.trace_header
    }
}
