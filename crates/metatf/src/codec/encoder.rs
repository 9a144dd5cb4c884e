//! The Meta-TF record stream, written: records of the DTD's own schema
//! field by field, records of other formats matched by kind and field
//! name, metadata and data sections as the plan asks.

use std::io::{self, Write};
use std::sync::Arc;

use tramp_core::output::Finish;
use tramp_core::{Error, Record, Schema, Sink, Value};

use crate::check::Interp;
use crate::plan::{Op, Plan, StepWidth, TAG_METADATA, TAG_SECTION};

use super::container::Header;
use super::state::{Live, metadata_values};
use super::{FORMAT, MetaError, put};

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
    /// Per-record scratch: field values by position, and the delta fields'
    /// new previous values.
    values: Vec<u64>,
    prev_updates: Vec<(usize, u64)>,
}

fn same_kind(a: tramp_core::RecordKind, b: tramp_core::RecordKind) -> bool {
    use tramp_core::RecordKind::*;
    match (a, b) {
        (Realloc(_), Realloc(_)) => true,
        (Other, _) | (_, Other) | (Metadata, _) | (_, Metadata) => false,
        (x, y) => x == y,
    }
}

/// A field of a record of another format: by the DTD field's name, else
/// by its role (`bytes.role = size` takes the source's size); a vfield's
/// `length`/`data` take a comment's or attributes' bytes.
fn foreign_field<'a>(
    rec: &Record<'a>,
    name: &str,
    role: Option<tramp_core::Role>,
) -> Option<Value<'a>> {
    if let Some(v) = rec.field(name) {
        return Some(v);
    }
    if let Some(v) = role.and_then(|r| rec.role(r)) {
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
        let dtd = crate::load(dtd_text)
            .map_err(|d| Error::Language(crate::render("dtd", dtd_text, &d)))?;
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
            values: Vec::new(),
            prev_updates: Vec::new(),
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
        // Own only if this very type is in the plan's schema (an index past its
        // end is another format's type, not ours).
        let own = plan
            .schema
            .types
            .get(ty.index)
            .is_some_and(|t| std::ptr::eq(t, ty));
        let rp = if own {
            plan.by_schema_type(ty.index)
        } else {
            // Records of another format: by name, else by kind (HATF's four
            // realloc records all map to a `realloc` record).
            plan.records
                .iter()
                .find(|r| r.name == ty.name)
                .or_else(|| {
                    // The same kind exactly (a realloc of the same outcome)
                    // before any realloc record.
                    plan.records.iter().find(|r| {
                        let k = plan.schema.types[r.schema_type].kind;
                        k == ty.kind && k != tramp_core::RecordKind::Other
                    })
                })
                .or_else(|| {
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
        // Scratch reused from record to record (no allocation per record).
        let mut values = std::mem::take(&mut self.values);
        values.clear();
        values.resize(rp.positions, 0);
        let mut prev_updates = std::mem::take(&mut self.prev_updates);
        prev_updates.clear();
        let res = self.encode_ops(&rp.ops, rp, rec, &mut values, None, &mut prev_updates);
        if res.is_ok() {
            for &(id, v) in &prev_updates {
                self.live.set_prev(id, v);
            }
            if rp.tag == TAG_SECTION {
                self.live.section = values.get(1).copied().unwrap_or(0).min(255) as u8;
            }
        } else {
            self.buf.truncate(mark);
        }
        self.values = values;
        self.prev_updates = prev_updates;
        res
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
                        let def = &self.plan.schema.types[rp.schema_type].fields[s.out];
                        foreign_field(rec, &def.name, def.role)
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
