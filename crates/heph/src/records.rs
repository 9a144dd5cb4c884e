//! Heph as a tramp source and sink: `metadata` records (option, value)
//! and `event` records (stream as the thread role, substream, counter,
//! start as the time role, end, description as text, attributes with
//! arrays as lists). Damage the reader skips over is kept as warnings the
//! caller can print.

use std::sync::{Arc, OnceLock};

use tramp_core::output::Finish;
use tramp_core::{
    Error, FieldDef, FieldType, Item, Position, Record, RecordBuf, RecordKind, Role, Schema, Sink,
    Slot, Source, Value as V, Warning,
};

use crate::packet::{Attribute, Event, Metadata, OptionValue, Packet, Value};
use crate::reader::{PacketRef, Reader};

pub const FORMAT: &str = "heph";
const METADATA: usize = 0;
const EVENT: usize = 1;

/// The two record types.
pub fn schema() -> &'static Arc<Schema> {
    static SCHEMA: OnceLock<Arc<Schema>> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let mut s = Schema::new(FORMAT);
        s.add_type(
            "metadata",
            RecordKind::Metadata,
            vec![
                FieldDef::new("option", FieldType::Str, None),
                FieldDef::new("epoch", FieldType::U64, None),
                FieldDef::new("value", FieldType::Bytes, None),
            ],
        );
        s.add_type(
            "event",
            RecordKind::Span,
            vec![
                FieldDef::new("stream", FieldType::U64, Some(Role::Thread)),
                FieldDef::new("counter", FieldType::U64, None),
                FieldDef::new("substream", FieldType::U64, None),
                FieldDef::new("start", FieldType::U64, Some(Role::Time)),
                FieldDef::new("end", FieldType::U64, None),
                FieldDef::new("description", FieldType::Str, Some(Role::Text)),
                FieldDef::new("attributes", FieldType::Attrs, Some(Role::Attributes)),
            ],
        );
        s.shared()
    })
}

fn store(buf: &mut RecordBuf, v: &Value) -> Slot {
    match v {
        Value::U64(x) => Slot::U(*x),
        Value::I64(x) => Slot::I(*x),
        Value::F64(x) => Slot::F(*x),
        Value::Str(s) => buf.store_value(V::Str(s)),
        Value::U64s(a) => buf.push_list(a.iter().map(|x| V::U64(*x))),
        Value::I64s(a) => buf.push_list(a.iter().map(|x| V::I64(*x))),
        Value::F64s(a) => buf.push_list(a.iter().map(|x| V::F64(*x))),
        Value::Strs(a) => buf.push_list(a.iter().map(|x| V::Str(x))),
    }
}

/// Fills `buf` with the record of a packet.
pub fn packet_to_record(p: &Packet, buf: &mut RecordBuf) {
    match p {
        Packet::Metadata(m) => {
            buf.reset(&schema().types[METADATA]);
            buf.set_str(0, &m.option);
            match &m.value {
                OptionValue::Epoch(ns) => buf.set_u64(1, *ns),
                OptionValue::Unknown(b) => buf.set_bytes(2, b),
            }
        }
        Packet::Event(e) => {
            let fixed = [
                e.stream as u64,
                e.counter as u64,
                e.substream,
                e.start,
                e.end,
            ];
            let attrs = e.attributes.iter().map(|a| (a.name.as_str(), &a.value));
            event_record(buf, fixed, &e.description, attrs);
        }
    }
}

/// Fills `buf` with the record of a packet borrowed from the reader (no
/// owned copy of the event on the way).
pub fn packet_ref_to_record(p: &PacketRef<'_>, buf: &mut RecordBuf) {
    match p {
        PacketRef::Event(e) => {
            let fixed = [
                e.stream as u64,
                e.counter as u64,
                e.substream,
                e.start,
                e.end,
            ];
            let attrs = e.attributes().map(|(n, v)| (n, v.to_value()));
            event_record(buf, fixed, e.description, attrs);
        }
        // Metadata packets are rare: through the owned form.
        PacketRef::Metadata { .. } => packet_to_record(&p.to_packet(), buf),
    }
}

/// An event record: stream, counter, substream, start and end, the
/// description, then the attributes.
fn event_record<'a, B: std::borrow::Borrow<Value>>(
    buf: &mut RecordBuf,
    fixed: [u64; 5],
    description: &str,
    attributes: impl Iterator<Item = (&'a str, B)>,
) {
    buf.reset(&schema().types[EVENT]);
    for (i, v) in fixed.into_iter().enumerate() {
        buf.set_u64(i, v);
    }
    buf.set_str(5, description);
    let mut pairs = Vec::new();
    for (name, value) in attributes {
        pairs.push(buf.store_value(V::Str(name)));
        pairs.push(store(buf, value.borrow()));
    }
    let attrs = buf.push_attrs(&pairs);
    buf.set_slot(6, attrs);
}

/// Why a record is not a Heph packet.
#[derive(Debug, thiserror::Error)]
pub enum MapError {
    #[error("record type `{0}` is not a Heph packet (metadata or event)")]
    NotHeph(String),
    #[error("`{0}` needs field `{1}`")]
    Field(&'static str, &'static str),
    #[error("attribute `{0}`: {1}")]
    Attribute(String, &'static str),
}

fn attr_value(name: &str, v: V<'_>) -> Result<Value, MapError> {
    let bad = |m| MapError::Attribute(name.to_string(), m);
    Ok(match v {
        V::U64(x) => Value::U64(x),
        V::I64(x) => Value::I64(x),
        V::F64(x) => Value::F64(x),
        V::Str(s) => Value::Str(s.to_string()),
        V::Bytes(_) => return Err(bad("bytes have no Heph type")),
        V::Attrs(_) => return Err(bad("nested attributes have no Heph type")),
        V::List(l) => {
            let items: Vec<V<'_>> = l.iter().collect();
            match items.first() {
                None | Some(V::U64(_)) => Value::U64s(
                    items
                        .iter()
                        .map(|x| x.as_u64().ok_or(bad("a mixed array")))
                        .collect::<Result<_, _>>()?,
                ),
                Some(V::I64(_)) => Value::I64s(
                    items
                        .iter()
                        .map(|x| x.as_i64().ok_or(bad("a mixed array")))
                        .collect::<Result<_, _>>()?,
                ),
                Some(V::F64(_)) => Value::F64s(
                    items
                        .iter()
                        .map(|x| x.as_f64().ok_or(bad("a mixed array")))
                        .collect::<Result<_, _>>()?,
                ),
                Some(V::Str(_)) => Value::Strs(
                    items
                        .iter()
                        .map(|x| x.as_str().map(str::to_string).ok_or(bad("a mixed array")))
                        .collect::<Result<_, _>>()?,
                ),
                Some(_) => return Err(bad("an array of a type Heph has not")),
            }
        }
    })
}

/// The packet a record stands for (by type and field names).
pub fn record_to_packet(rec: &Record<'_>) -> Result<Packet, MapError> {
    let name = rec.record_type().name.as_str();
    match name {
        "metadata" => {
            let option = rec
                .field("option")
                .and_then(|v| v.as_str())
                .ok_or(MapError::Field("metadata", "option"))?;
            let value = match rec.field("epoch").and_then(|v| v.as_u64()) {
                Some(ns) => OptionValue::Epoch(ns),
                None => OptionValue::Unknown(
                    rec.field("value")
                        .and_then(|v| v.as_bytes())
                        .unwrap_or(&[])
                        .to_vec(),
                ),
            };
            Ok(Packet::Metadata(Metadata {
                option: option.to_string(),
                value,
            }))
        }
        "event" => {
            let u = |f: &'static str| {
                rec.field(f)
                    .and_then(|v| v.as_u64())
                    .ok_or(MapError::Field("event", f))
            };
            let mut attributes = Vec::new();
            if let Some(V::Attrs(a)) = rec.field("attributes") {
                for (k, v) in a.iter() {
                    attributes.push(Attribute {
                        name: k.to_string(),
                        value: attr_value(k, v)?,
                    });
                }
            }
            Ok(Packet::Event(Event {
                stream: u32::try_from(u("stream")?)
                    .map_err(|_| MapError::Field("event", "stream"))?,
                counter: u32::try_from(u("counter")?)
                    .map_err(|_| MapError::Field("event", "counter"))?,
                substream: u("substream")?,
                start: u("start")?,
                end: u("end")?,
                description: rec
                    .field("description")
                    .and_then(|v| v.as_str())
                    .unwrap_or("")
                    .to_string(),
                attributes,
            }))
        }
        other => Err(MapError::NotHeph(other.to_string())),
    }
}

/// A Heph trace as a tramp source.
pub struct HephSource<R> {
    reader: Reader<R>,
    buf: RecordBuf,
    /// Warnings taken from the reader, not yet handed out.
    pending: std::collections::VecDeque<Warning>,
    /// Whether `buf` holds a record not yet handed out (behind warnings).
    have_record: bool,
}

impl<R: std::io::Read> HephSource<R> {
    pub fn new(input: R) -> Self {
        HephSource {
            reader: Reader::new(input),
            buf: RecordBuf::new(),
            pending: Default::default(),
            have_record: false,
        }
    }
}

impl<R: std::io::Read> Source for HephSource<R> {
    fn schema(&self) -> &Arc<Schema> {
        schema()
    }

    fn next_record(&mut self) -> Result<Option<Record<'_>>, Error> {
        let at = self.position();
        match self
            .reader
            .next_ref()
            .map_err(|e| Error::decode(FORMAT, at, e))?
        {
            Some(p) => {
                packet_ref_to_record(&p, &mut self.buf);
                Ok(Some(
                    self.buf.as_record(&schema().types[self.buf.type_index()]),
                ))
            }
            None => Ok(None),
        }
    }

    fn position(&self) -> Position {
        Position::new(self.reader.offset(), self.reader.packets())
    }

    /// Damage the reader skipped comes out before the record after it.
    fn next_item(&mut self) -> Result<Option<Item<'_>>, Error> {
        // A record read with warnings before it waits until they are out.
        if self.pending.is_empty() && !self.have_record {
            let at = self.position();
            let next = self
                .reader
                .next_ref()
                .map_err(|e| Error::decode(FORMAT, at, e))?;
            let got = match next {
                Some(p) => {
                    packet_ref_to_record(&p, &mut self.buf);
                    true
                }
                None => false,
            };
            self.pending.extend(self.reader.take_warnings());
            self.have_record = got;
        }
        if let Some(w) = self.pending.pop_front() {
            return Ok(Some(Item::Warning(w)));
        }
        if std::mem::take(&mut self.have_record) {
            return Ok(Some(Item::Record(
                self.buf.as_record(&schema().types[self.buf.type_index()]),
            )));
        }
        Ok(None)
    }
}

/// Writes records that are Heph packets.
pub struct HephSink<W: Finish> {
    out: Option<W>,
    buf: Vec<u8>,
    count: u64,
}

impl<W: Finish> HephSink<W> {
    pub fn new(out: W) -> Self {
        HephSink {
            out: Some(out),
            buf: Vec::with_capacity(1 << 16),
            count: 0,
        }
    }
}

impl<W: Finish> Sink for HephSink<W> {
    fn write_record(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        let record = self.count;
        let enc = |cause: Box<dyn std::error::Error + Send + Sync>| Error::Encode {
            format: FORMAT,
            record,
            cause,
        };
        let p = record_to_packet(rec).map_err(|e| enc(e.into()))?;
        crate::writer::encode(&mut self.buf, &p).map_err(|e| enc(e.into()))?;
        self.count += 1;
        if self.buf.len() >= 1 << 16 {
            self.out.as_mut().expect("open").write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<(), Error> {
        let mut out = self.out.take().expect("open");
        out.write_all(&self.buf)?;
        out.finish()?;
        Ok(())
    }
}
