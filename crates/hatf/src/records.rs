//! HATF in tramp's data model: the schema of HATF records, the mapping
//! between [`Item`]s and generic records, and the [`Source`]/[`Sink`]
//! adapters for the binary and the text form.

use std::io::{BufRead, Read};
use std::ops::ControlFlow;
use std::sync::{Arc, OnceLock};

use tramp_core::output::Finish;
use tramp_core::{
    Error, FieldDef, FieldType, Position, ReallocOutcome, Record, RecordBuf, RecordKind, Role,
    Schema, Sink, Source, Value, Warning,
};

use crate::error::HatfError;
use crate::item::{Event, Item};
use crate::reader::Reader;
use crate::spec::{EVENT_KINDS, EventKind, Field, Interp, Meta, Width};
use crate::text::{TextReader, TextWriter};
use crate::writer::{Policy, Writer};

/// Index of the `fieldSize` metadata record type in [`schema`].
pub const TYPE_FIELD_SIZE: usize = 11;
/// Index of the `fieldInterpretation` metadata record type in [`schema`].
pub const TYPE_FIELD_INTERP: usize = 12;
/// Index of the comment record type in [`schema`].
pub const TYPE_COMMENT: usize = 10;

fn kind_of(k: EventKind) -> RecordKind {
    match k {
        EventKind::Alloc => RecordKind::Alloc,
        EventKind::Free => RecordKind::Free,
        EventKind::ReallocNoAlloc => RecordKind::Realloc(ReallocOutcome::InPlace),
        EventKind::ReallocAllocFree => RecordKind::Realloc(ReallocOutcome::Moved),
        EventKind::ReallocAlloc => RecordKind::Realloc(ReallocOutcome::AllocOnly),
        EventKind::ReallocFree => RecordKind::Realloc(ReallocOutcome::FreeOnly),
        EventKind::CreateHeap => RecordKind::HeapCreate,
        EventKind::DestroyHeap => RecordKind::HeapDestroy,
        EventKind::CreateThread => RecordKind::ThreadCreate,
        EventKind::DestroyThread => RecordKind::ThreadDestroy,
    }
}

fn event_kind_of(k: RecordKind) -> Option<EventKind> {
    EVENT_KINDS.iter().copied().find(|e| kind_of(*e) == k)
}

fn field_def(f: Field, realloc: bool, second_address: bool) -> FieldDef {
    use FieldType::*;
    match f {
        Field::Size => FieldDef::new("size", U64, Some(Role::Size)),
        Field::Address if realloc && !second_address => {
            FieldDef::new("old", U64, Some(Role::OldAddress))
        }
        Field::Address if realloc => FieldDef::new("new", U64, Some(Role::Address)),
        Field::Address => FieldDef::new("address", U64, Some(Role::Address)),
        Field::Time => FieldDef::new("time", U64, Some(Role::Time)),
        Field::Thread => FieldDef::new("thread", U64, Some(Role::Thread)),
        Field::Heap => FieldDef::new("heap", U64, Some(Role::Heap)),
        Field::Attributes => FieldDef::new("attrs", Bytes, Some(Role::Attributes)),
    }
}

/// The HATF schema: types 0–9 are the data records in tag order (fields in
/// binary order), 10 is `comment`, 11 `fieldSize`, 12 `fieldInterpretation`.
pub fn schema() -> &'static Arc<Schema> {
    static SCHEMA: OnceLock<Arc<Schema>> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let mut s = Schema::new("hatf");
        for k in EVENT_KINDS {
            let mut seen = false;
            let fields = k
                .layout()
                .iter()
                .map(|f| {
                    let d = field_def(*f, k.is_realloc(), seen);
                    seen |= *f == Field::Address;
                    d
                })
                .collect();
            s.add_type(k.name(), kind_of(k), fields);
        }
        s.add_type(
            "comment",
            RecordKind::Comment,
            vec![FieldDef::new("text", FieldType::Bytes, Some(Role::Text))],
        );
        s.add_type(
            "fieldSize",
            RecordKind::Metadata,
            vec![
                FieldDef::new("field", FieldType::Str, None),
                FieldDef::new("width", FieldType::Str, None),
            ],
        );
        s.add_type(
            "fieldInterpretation",
            RecordKind::Metadata,
            vec![
                FieldDef::new("field", FieldType::Str, None),
                FieldDef::new("interpretation", FieldType::Str, None),
                FieldDef::new("arg1", FieldType::U64, None),
                FieldDef::new("arg2", FieldType::U64, None),
            ],
        );
        Arc::new(s)
    })
}

/// Fills `buf` with the generic record for `item`.
#[inline(always)]
pub fn item_to_record(item: &Item<'_>, buf: &mut RecordBuf) {
    match item {
        Item::Event(e) => {
            let ty = &schema().types[e.kind as usize];
            buf.reset(ty);
            let mut i = 0;
            for (_, v) in e.numeric_values() {
                buf.set_u64(i, v);
                i += 1;
            }
            buf.set_bytes(i, e.attributes);
        }
        Item::Comment(c) => {
            buf.reset(&schema().types[TYPE_COMMENT]);
            buf.set_bytes(0, c);
        }
        Item::Meta(m) => meta_to_record(m, buf),
    }
}

/// [`item_to_record`] of a metadata item (rare: out of line).
#[cold]
fn meta_to_record(meta: &Meta, buf: &mut RecordBuf) {
    let s = schema();
    match meta {
        Meta::SetWidth(f, w) => {
            buf.reset(&s.types[TYPE_FIELD_SIZE]);
            buf.set_str(0, f.name());
            buf.set_str(1, w.name());
        }
        Meta::SetInterp(f, i) => {
            buf.reset(&s.types[TYPE_FIELD_INTERP]);
            buf.set_str(0, f.name());
            buf.set_str(1, i.name());
            match *i {
                Interp::None => {}
                Interp::Default(a) | Interp::BaseOffset(a) | Interp::Delta(a) => buf.set_u64(2, a),
                Interp::Stride { initial, stride } => {
                    buf.set_u64(2, initial);
                    buf.set_u64(3, stride);
                }
            }
        }
    }
}

/// Maps a generic record (of the HATF schema, or of any schema whose record
/// kinds and field roles say what it is) to a HATF item. Returns `Ok(None)`
/// for records HATF has no place for (they are skipped).
pub fn record_to_item<'a>(rec: &Record<'a>) -> Result<Option<Item<'a>>, HatfError> {
    let ty = rec.record_type();
    // Records of our own schema: fields are where the layout says.
    if ty.index < 10 && std::ptr::eq(ty, &schema().types[ty.index]) {
        let kind = EVENT_KINDS[ty.index];
        let mut ev = Event::new(kind);
        let n = |i: usize| rec.get(i).and_then(|v| v.as_u64()).unwrap_or(0);
        let mut seen_address = false;
        for (i, f) in kind.layout().iter().enumerate() {
            match f {
                Field::Size => ev.size = n(i),
                Field::Address if !seen_address => {
                    ev.address = n(i);
                    seen_address = true;
                }
                Field::Address => ev.new_address = n(i),
                Field::Thread => ev.thread = n(i),
                Field::Heap => ev.heap = n(i),
                Field::Time => ev.time = n(i),
                Field::Attributes => {
                    ev.attributes = rec.get(i).and_then(|v| v.as_bytes()).unwrap_or(&[])
                }
            }
        }
        return Ok(Some(Item::Event(ev)));
    }
    let u = |role| rec.role_u64(role).unwrap_or(0);
    match ty.kind {
        RecordKind::Comment => {
            // The text: the field with the Text role, else one named
            // `data` (a Meta-TF comment: tag, length, data), else the first.
            let text = rec
                .role(Role::Text)
                .or_else(|| rec.field("data"))
                .or_else(|| rec.get(0))
                .and_then(|v| v.as_bytes())
                .unwrap_or(&[]);
            Ok(Some(Item::Comment(text)))
        }
        RecordKind::Metadata => {
            let word = |name: &str| rec.field(name).and_then(|v| v.as_str());
            let field = word("field").and_then(Field::from_name).ok_or_else(|| {
                HatfError::Unmapped(format!("{} without a valid `field`", ty.name))
            })?;
            if let Some(w) = word("width") {
                let w = Width::from_name(w)
                    .ok_or_else(|| HatfError::Syntax(format!("invalid width `{w}`")))?;
                return Ok(Some(Item::Meta(Meta::SetWidth(field, w))));
            }
            let name =
                word("interpretation").ok_or_else(|| HatfError::Unmapped(ty.name.clone()))?;
            let a = rec.field("arg1").and_then(|v| v.as_u64()).unwrap_or(0);
            let b = rec.field("arg2").and_then(|v| v.as_u64()).unwrap_or(0);
            let code = ["none", "default", "baseOffset", "delta", "stride"]
                .iter()
                .position(|n| *n == name)
                .ok_or_else(|| HatfError::Syntax(format!("unknown interpretation `{name}`")))?;
            Ok(Some(Item::Meta(Meta::SetInterp(
                field,
                Interp::from_code(code as u8, a, b).expect("code in range"),
            ))))
        }
        k => {
            let Some(kind) = event_kind_of(k) else {
                return Ok(None);
            };
            let mut ev = Event::new(kind);
            ev.size = u(Role::Size);
            if kind.is_realloc() {
                ev.address = u(Role::OldAddress);
                ev.new_address = u(Role::Address);
            } else {
                ev.address = u(Role::Address);
            }
            ev.thread = u(Role::Thread);
            ev.heap = u(Role::Heap);
            ev.time = u(Role::Time);
            ev.attributes = match rec.role(Role::Attributes) {
                Some(Value::Bytes(b)) => b,
                Some(Value::Str(s)) => s.as_bytes(),
                _ => &[],
            };
            Ok(Some(Item::Event(ev)))
        }
    }
}

/// One step of a reader of HATF items: an item, or damage it skipped
/// (readers that resynchronise, like tpack's).
pub enum Entry<'a> {
    Item(Item<'a>),
    /// Damage skipped before the items that follow.
    Warning(Warning),
}

/// Anything that yields HATF items: the binary reader, the text reader,
/// and readers of other formats that hold HATF's records (tpack).
pub trait ReadItems {
    fn next_item(&mut self) -> Result<Option<Item<'_>>, Error>;
    fn position(&self) -> Position;

    /// The next item or skipped damage, `Ok(None)` at the end. Readers that
    /// go on past damage override it; the others never skip.
    #[inline(always)]
    fn next_entry(&mut self) -> Result<Option<Entry<'_>>, Error> {
        Ok(self.next_item()?.map(Entry::Item))
    }

    /// Calls `f` with every entry in order until the end, an error, or `f`
    /// breaks: repeated [`ReadItems::next_entry`] calls, which readers that
    /// decode faster pushing than pulled override.
    fn each_entry(
        &mut self,
        mut f: impl FnMut(&Entry<'_>) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        while let Some(entry) = self.next_entry()? {
            if f(&entry).is_break() {
                break;
            }
        }
        Ok(())
    }
}

impl<R: Read> ReadItems for Reader<crate::reader::StreamBuffer<R>> {
    #[inline(always)]
    fn next_item(&mut self) -> Result<Option<Item<'_>>, Error> {
        Reader::next_item(self)
    }

    #[inline(always)]
    fn each_entry(
        &mut self,
        mut f: impl FnMut(&Entry<'_>) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        self.try_for_each_item(|item| f(&Entry::Item(*item)))?;
        Ok(())
    }

    fn position(&self) -> Position {
        Reader::position(self)
    }
}

impl<R: BufRead> ReadItems for TextReader<R> {
    fn next_item(&mut self) -> Result<Option<Item<'_>>, Error> {
        TextReader::next_item(self)
    }

    fn position(&self) -> Position {
        TextReader::position(self)
    }
}

/// Any reader of HATF items as a tramp [`Source`].
pub struct ItemSource<T> {
    reader: T,
    bufs: TypedBufs,
}

impl<T: ReadItems> ItemSource<T> {
    pub fn from_reader(reader: T) -> Self {
        ItemSource {
            reader,
            bufs: TypedBufs::new(),
        }
    }
}

/// HATF items as generic records, one record buffer per HATF record
/// type. A stream alternates types (allocs and frees), and a buffer reset
/// to another type's field count stores its length, which lending the
/// record then reads back in a wide load that store forwarding cannot
/// serve; a buffer per type keeps its length.
pub struct TypedBufs(Vec<RecordBuf>);

impl Default for TypedBufs {
    fn default() -> Self {
        Self::new()
    }
}

impl TypedBufs {
    pub fn new() -> TypedBufs {
        TypedBufs(vec![RecordBuf::new(); schema().types.len()])
    }

    /// The generic record for `item`.
    #[inline(always)]
    pub fn record(&mut self, item: &Item<'_>) -> Record<'_> {
        let t = item_type(item);
        let buf = &mut self.0[t];
        item_to_record(item, buf);
        buf.as_record(&schema().types[t])
    }
}

/// The index of `item`'s record type in the HATF schema.
#[inline(always)]
fn item_type(item: &Item<'_>) -> usize {
    match item {
        Item::Event(e) => e.kind as usize,
        Item::Comment(_) => TYPE_COMMENT,
        Item::Meta(Meta::SetWidth(..)) => TYPE_FIELD_SIZE,
        Item::Meta(Meta::SetInterp(..)) => TYPE_FIELD_INTERP,
    }
}

/// HATF binary as a tramp source.
pub type HatfSource<R> = ItemSource<Reader<crate::reader::StreamBuffer<R>>>;
/// HATF text as a tramp source (it always yields metadata records).
pub type HatfTextSource<R> = ItemSource<TextReader<R>>;

impl<R: Read> HatfSource<R> {
    /// `metadata`: also yield metadata records.
    pub fn new(input: R, metadata: bool) -> Self {
        ItemSource::from_reader(Reader::new(input).with_metadata(metadata))
    }
}

impl<R: BufRead> HatfTextSource<R> {
    pub fn new(input: R) -> Self {
        ItemSource::from_reader(TextReader::new(input))
    }
}

impl<T: ReadItems> Source for ItemSource<T> {
    fn schema(&self) -> &Arc<Schema> {
        schema()
    }

    fn next_record(&mut self) -> Result<Option<Record<'_>>, Error> {
        // Read where the reader returned it (see `next_item`).
        let next = self.reader.next_item();
        match &next {
            Ok(Some(item)) => Ok(Some(self.bufs.record(item))),
            Ok(None) => Ok(None),
            Err(_) => next.map(|_| None),
        }
    }

    fn next_item(&mut self) -> Result<Option<tramp_core::Item<'_>>, Error> {
        // The item is read where the reader returned it: moving it out read
        // the reader's stores back in wide loads that store forwarding
        // cannot serve.
        let next = self.reader.next_entry();
        if let Ok(Some(Entry::Item(item))) = &next {
            return Ok(Some(tramp_core::Item::Record(self.bufs.record(item))));
        }
        match next? {
            Some(Entry::Warning(w)) => Ok(Some(tramp_core::Item::Warning(w))),
            Some(Entry::Item(_)) | None => Ok(None),
        }
    }

    fn each_item(
        &mut self,
        f: &mut dyn FnMut(&tramp_core::Item<'_>) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        let bufs = &mut self.bufs;
        self.reader.each_entry(|entry| match entry {
            Entry::Item(item) => f(&tramp_core::Item::Record(bufs.record(item))),
            Entry::Warning(w) => f(&tramp_core::Item::Warning(w.clone())),
        })
    }

    fn position(&self) -> Position {
        self.reader.position()
    }
}

/// Anything that takes HATF items: the binary writer, the text writer, and
/// writers of other formats that hold HATF's records (tpack).
pub trait WriteItems {
    const FORMAT: &'static str;
    fn write_item(&mut self, item: &Item<'_>) -> Result<(), Error>;
    fn finish(self) -> Result<(), Error>;
}

impl<W: Finish> WriteItems for Writer<W> {
    const FORMAT: &'static str = "hatf";

    fn write_item(&mut self, item: &Item<'_>) -> Result<(), Error> {
        Writer::write_item(self, item)
    }

    fn finish(self) -> Result<(), Error> {
        Ok(self.into_inner()?.finish()?)
    }
}

impl<W: Finish> WriteItems for TextWriter<W> {
    const FORMAT: &'static str = "hatf-text";

    fn write_item(&mut self, item: &Item<'_>) -> Result<(), Error> {
        Ok(TextWriter::write_item(self, item)?)
    }

    fn finish(self) -> Result<(), Error> {
        Ok(self.into_inner()?.finish()?)
    }
}

/// Any writer of HATF items as a tramp [`Sink`]: records of any schema are
/// mapped by kind and role; those HATF has no place for are skipped.
pub struct ItemSink<T> {
    writer: T,
    records: u64,
}

impl<T: WriteItems> ItemSink<T> {
    pub fn from_writer(writer: T) -> Self {
        ItemSink { writer, records: 0 }
    }
}

/// HATF binary as a tramp sink.
pub type HatfSink<W> = ItemSink<Writer<W>>;
/// HATF text as a tramp sink.
pub type HatfTextSink<W> = ItemSink<TextWriter<W>>;

impl<W: Finish> HatfSink<W> {
    pub fn new(out: W, policy: Policy) -> Self {
        ItemSink::from_writer(Writer::new(out, policy))
    }
}

impl<W: Finish> HatfTextSink<W> {
    pub fn new(out: W) -> Self {
        ItemSink::from_writer(TextWriter::new(out))
    }
}

impl<T: WriteItems> Sink for ItemSink<T> {
    fn write_record(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        self.records += 1;
        match record_to_item(rec) {
            Ok(Some(item)) => self.writer.write_item(&item),
            Ok(None) => Ok(()),
            Err(e) => Err(Error::encode(T::FORMAT, self.records - 1, e)),
        }
    }

    fn finish(self: Box<Self>) -> Result<(), Error> {
        self.writer.finish()
    }
}
