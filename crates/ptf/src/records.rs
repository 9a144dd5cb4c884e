//! PTF as a tramp source and sink: each event is a record of the type
//! named by its mnemonic, with its parameters as fields (the OIds an event
//! is about carry the object-id role), so `tramp dump`, `tramp convert`
//! and format-independent tools handle PTF like any other format.

use std::sync::{Arc, OnceLock};

use tramp_core::output::Finish;
use tramp_core::{
    Error, FieldDef, FieldType, Position, Record, RecordBuf, RecordKind, Role, Schema, Sink,
    Source, Value,
};

use crate::event::{Event, EventType, FormatObject};
use crate::{EventSink, EventSource, PtfError};

pub const FORMAT: &str = "ptf";

fn u(name: &str) -> FieldDef {
    FieldDef::new(name, FieldType::U64, None)
}

fn oid(name: &str) -> FieldDef {
    FieldDef::new(name, FieldType::U64, Some(Role::ObjectId))
}

fn role(name: &str, role: Role) -> FieldDef {
    FieldDef::new(name, FieldType::U64, Some(role))
}

/// What each event means in the object-graph view.
pub fn kind(t: EventType) -> RecordKind {
    match t {
        EventType::Fo => RecordKind::TypeDef,
        EventType::Co | EventType::Cao => RecordKind::ObjectCreate,
        EventType::Do => RecordKind::ObjectDelete,
        EventType::Sr => RecordKind::RootSet,
        EventType::Gr => RecordKind::RootGet,
        EventType::Dr | EventType::Adr => RecordKind::DataRead,
        EventType::Dw | EventType::Adw => RecordKind::DataWrite,
        EventType::Er => RecordKind::EdgeRead,
        EventType::Ew => RecordKind::EdgeWrite,
        EventType::Ts => RecordKind::GcHold,
        EventType::Te => RecordKind::GcResume,
    }
}

/// The record types of PTF, in [`EventType`] order.
pub fn schema() -> &'static Arc<Schema> {
    static SCHEMA: OnceLock<Arc<Schema>> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let list = |n: &str| FieldDef::new(n, FieldType::List(Box::new(FieldType::U64)), None);
        let mut schema = Schema::new(FORMAT);
        for t in EventType::ALL.iter() {
            {
                let fields = match t {
                    EventType::Fo => vec![
                        role("id", Role::Type),
                        u("super"),
                        u("pointers"),
                        list("data"),
                        list("arrays"),
                        list("elements"),
                        FieldDef::new("name", FieldType::Str, Some(Role::Text)),
                    ],
                    EventType::Co | EventType::Do | EventType::Sr => {
                        vec![role("format", Role::Type), oid("oid")]
                    }
                    EventType::Cao => vec![
                        role("format", Role::Type),
                        oid("oid"),
                        u("container"),
                        u("elements"),
                    ],
                    EventType::Gr | EventType::Ts | EventType::Te => vec![],
                    EventType::Dr | EventType::Dw => vec![
                        role("format", Role::Type),
                        oid("oid"),
                        role("offset", Role::Slot),
                    ],
                    EventType::Adr | EventType::Adw => vec![
                        role("format", Role::Type),
                        oid("oid"),
                        FieldDef::new("offset", FieldType::I64, Some(Role::Slot)),
                        u("index"),
                        u("length"),
                    ],
                    EventType::Er => {
                        vec![
                            role("format", Role::Type),
                            oid("from"),
                            role("edge", Role::Slot),
                        ]
                    }
                    EventType::Ew => vec![
                        role("format", Role::Type),
                        oid("from"),
                        role("edge", Role::Slot),
                        role("to", Role::EdgeTarget),
                    ],
                };
                schema.add_type(t.mnemonic(), kind(*t), fields);
            }
        }
        schema.shared()
    })
}

/// Fills `buf` with the record of `e`.
pub fn event_to_record(e: &Event, buf: &mut RecordBuf) {
    let s = schema();
    let ty = &s.types[e.event_type() as usize - 1];
    buf.reset(ty);
    match e {
        Event::FormatObject(f) => {
            buf.set_u64(0, f.id);
            buf.set_u64(1, f.super_id);
            buf.set_u64(2, f.pointers);
            let data = buf.push_list(f.data.iter().map(|v| Value::U64(*v)));
            buf.set_slot(3, data);
            let arrays = buf.push_list(f.arrays.iter().map(|(a, _)| Value::U64(*a)));
            buf.set_slot(4, arrays);
            let elements = buf.push_list(f.arrays.iter().map(|(_, n)| Value::U64(*n)));
            buf.set_slot(5, elements);
            buf.set_str(6, &f.name);
        }
        other => {
            let (p, n) = other.ints();
            let signed = matches!(
                other,
                Event::ArrayDataRead { .. } | Event::ArrayDataWrite { .. }
            );
            for (k, v) in p[..n].iter().enumerate() {
                if signed && k == 2 {
                    buf.set_i64(k, *v as i64);
                } else {
                    buf.set_u64(k, *v);
                }
            }
        }
    }
}

/// Why a record is not a PTF event.
#[derive(Debug, thiserror::Error)]
pub enum MapError {
    #[error("record type `{0}` is not a PTF event")]
    NotPtf(String),
    #[error("`{ty}` needs field `{field}` as an integer")]
    Field { ty: String, field: &'static str },
}

/// The event a record of any schema stands for (by type and field names;
/// records of PTF's own schema by field position).
pub fn record_to_event(rec: &Record<'_>) -> Result<Event, MapError> {
    let rt = rec.record_type();
    let own = &schema().types;
    if rt.index < own.len()
        && std::ptr::eq(rt, &own[rt.index])
        && rt.index != EventType::Fo as usize - 1
    {
        let ty = EventType::ALL[rt.index];
        let mut v = [0u64; 5];
        for (i, slot) in v.iter_mut().enumerate().take(rt.fields.len()) {
            *slot = match rec.get(i) {
                Some(Value::I64(x)) => x as u64,
                Some(x) => x.as_u64().unwrap_or(0),
                None => 0,
            };
        }
        return Ok(Event::from_ints(ty, &v).expect("not fo"));
    }
    let name = &rt.name;
    let ty = EventType::from_mnemonic(name).ok_or_else(|| MapError::NotPtf(name.clone()))?;
    let get = |field: &'static str| {
        rec.field(field)
            .and_then(|v| v.as_u64())
            .ok_or_else(|| MapError::Field {
                ty: name.clone(),
                field,
            })
    };
    let list = |field: &'static str| -> Result<Vec<u64>, MapError> {
        match rec.field(field) {
            Some(Value::List(l)) => l
                .iter()
                .map(|v| {
                    v.as_u64().ok_or_else(|| MapError::Field {
                        ty: name.clone(),
                        field,
                    })
                })
                .collect(),
            None => Ok(Vec::new()),
            Some(_) => Err(MapError::Field {
                ty: name.clone(),
                field,
            }),
        }
    };
    Ok(match ty {
        EventType::Fo => {
            let arrays = list("arrays")?;
            let elements = list("elements")?;
            if arrays.len() != elements.len() {
                return Err(MapError::Field {
                    ty: name.clone(),
                    field: "elements",
                });
            }
            Event::FormatObject(FormatObject {
                id: get("id")?,
                super_id: get("super")?,
                pointers: get("pointers")?,
                data: list("data")?,
                arrays: arrays.into_iter().zip(elements).collect(),
                name: rec
                    .field("name")
                    .and_then(|v| v.as_str())
                    .unwrap_or("")
                    .to_string(),
            })
        }
        EventType::Co => Event::CreateObject {
            format: get("format")?,
            oid: get("oid")?,
        },
        EventType::Do => Event::DeleteObject {
            format: get("format")?,
            oid: get("oid")?,
        },
        EventType::Sr => Event::SetRoot {
            format: get("format")?,
            oid: get("oid")?,
        },
        EventType::Cao => Event::CreateArrayObject {
            format: get("format")?,
            oid: get("oid")?,
            container: get("container")?,
            elements: get("elements")?,
        },
        EventType::Gr => Event::GetRoot,
        EventType::Ts => Event::NoGcStart,
        EventType::Te => Event::NoGcEnd,
        EventType::Dr => Event::DataRead {
            format: get("format")?,
            oid: get("oid")?,
            offset: get("offset")?,
        },
        EventType::Dw => Event::DataWrite {
            format: get("format")?,
            oid: get("oid")?,
            offset: get("offset")?,
        },
        EventType::Adr | EventType::Adw => {
            let offset = rec
                .field("offset")
                .and_then(|v| v.as_i64())
                .ok_or_else(|| MapError::Field {
                    ty: name.clone(),
                    field: "offset",
                })?;
            let (format, oid, index, length) =
                (get("format")?, get("oid")?, get("index")?, get("length")?);
            if ty == EventType::Adr {
                Event::ArrayDataRead {
                    format,
                    oid,
                    offset,
                    index,
                    length,
                }
            } else {
                Event::ArrayDataWrite {
                    format,
                    oid,
                    offset,
                    index,
                    length,
                }
            }
        }
        EventType::Er => Event::EdgeRead {
            format: get("format")?,
            from: get("from")?,
            edge: get("edge")?,
        },
        EventType::Ew => Event::EdgeWrite {
            format: get("format")?,
            from: get("from")?,
            edge: get("edge")?,
            to: get("to")?,
        },
    })
}

/// A PTF trace (either form) as a tramp source.
pub struct PtfSource {
    events: Box<dyn EventSource + Send>,
    header: tramp_core::Header,
    buf: RecordBuf,
    count: u64,
}

impl PtfSource {
    pub fn new(events: Box<dyn EventSource + Send>) -> Self {
        let header = tramp_core::Header {
            dtd: None,
            notes: events.notes().to_vec(),
        };
        PtfSource {
            events,
            header,
            buf: RecordBuf::new(),
            count: 0,
        }
    }

    /// Opens either form (detected from the first bytes).
    pub fn open(input: Box<dyn std::io::BufRead + Send>) -> Result<Self, Error> {
        let events =
            crate::open(input).map_err(|e| Error::decode(FORMAT, Position::default(), e))?;
        Ok(PtfSource::new(events))
    }
}

impl Source for PtfSource {
    fn schema(&self) -> &Arc<Schema> {
        schema()
    }

    fn next_record(&mut self) -> Result<Option<Record<'_>>, Error> {
        match self.events.next_event() {
            Ok(Some(e)) => {
                event_to_record(&e, &mut self.buf);
                self.count += 1;
                let ty = &schema().types[self.buf.type_index()];
                Ok(Some(self.buf.as_record(ty)))
            }
            Ok(None) => Ok(None),
            Err(e) => {
                let (line, offset) = self.events.location();
                Err(Error::decode(
                    FORMAT,
                    Position::new(offset, self.count).with_line(line),
                    e,
                ))
            }
        }
    }

    fn position(&self) -> Position {
        let (line, offset) = self.events.location();
        Position::new(offset, self.count).with_line(line)
    }

    fn header(&self) -> &tramp_core::Header {
        &self.header
    }
}

/// Adapts a [`Finish`] output for the PTF writers, which flush but do not
/// close.
struct Out<W: Finish>(Option<W>);

impl<W: Finish> std::io::Write for Out<W> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.as_mut().expect("not finished").write(b)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.as_mut().expect("not finished").flush()
    }
}

enum Writer<W: Finish> {
    Ascii(crate::ascii::AsciiWriter<Out<W>>),
    Binary(crate::binary::BinaryWriter<Out<W>>),
}

/// Writes records that are PTF events, in either form.
pub struct PtfSink<W: Finish> {
    w: Writer<W>,
    count: u64,
}

impl<W: Finish> PtfSink<W> {
    /// `ascii` chooses the form; `notes` go in the header.
    pub fn new(out: W, ascii: bool, notes: &[String]) -> Result<Self, Error> {
        let enc = |e: PtfError| Error::Encode {
            format: FORMAT,
            record: 0,
            cause: e.into(),
        };
        let out = Out(Some(out));
        let w = if ascii {
            Writer::Ascii(crate::ascii::AsciiWriter::new(out, notes).map_err(enc)?)
        } else {
            Writer::Binary(crate::binary::BinaryWriter::new(out, notes).map_err(enc)?)
        };
        Ok(PtfSink { w, count: 0 })
    }

    fn sink(&mut self) -> &mut dyn EventSink {
        match &mut self.w {
            Writer::Ascii(w) => w,
            Writer::Binary(w) => w,
        }
    }
}

/// Events written straight, without the record model (generators use
/// this); [`Sink::finish`] still closes the output.
impl<W: Finish> EventSink for PtfSink<W> {
    fn write_event(&mut self, e: &Event) -> Result<(), PtfError> {
        self.sink().write_event(e)?;
        self.count += 1;
        Ok(())
    }

    fn finish(&mut self) -> Result<(), PtfError> {
        self.sink().finish()
    }
}

impl<W: Finish> Sink for PtfSink<W> {
    fn write_record(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        let record = self.count;
        let enc = |cause: Box<dyn std::error::Error + Send + Sync>| Error::Encode {
            format: FORMAT,
            record,
            cause,
        };
        let e = record_to_event(rec).map_err(|e| enc(e.into()))?;
        self.sink().write_event(&e).map_err(|e| enc(e.into()))?;
        self.count += 1;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<(), Error> {
        let count = self.count;
        self.sink().finish().map_err(|e| Error::Encode {
            format: FORMAT,
            record: count,
            cause: e.into(),
        })?;
        let out = match self.w {
            Writer::Ascii(w) => w.into_inner(),
            Writer::Binary(w) => w.into_inner(),
        };
        if let Some(o) = out.0 {
            o.finish()?;
        }
        Ok(())
    }
}
