//! Records: a record type plus field values, as a cheap view over buffers a
//! decoder reuses from one record to the next.
//!
//! A [`Record`] is three borrowed slices: the record type, one [`Slot`] per
//! field (plus slots for nested list and attribute items), and a byte buffer
//! that byte and string slots point into. The byte buffer can be the
//! decoder's own input buffer (zero copy) or the `bytes` of a [`RecordBuf`].
//! Scalars live in the slots themselves. Nothing is allocated per record.

use crate::schema::RecordType;

/// A range inside a record's slot or byte buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Span {
    pub start: u32,
    pub len: u32,
}

impl Span {
    pub fn new(start: usize, len: usize) -> Self {
        Span {
            start: start as u32,
            len: len as u32,
        }
    }

    fn range(self) -> std::ops::Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

/// The stored form of one value.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Slot {
    /// The field is not present in this record.
    #[default]
    Absent,
    U(u64),
    I(i64),
    F(f64),
    /// Bytes at this span of the byte buffer.
    Bytes(Span),
    /// UTF-8 text at this span of the byte buffer (validated when stored).
    Str(Span),
    /// List items: this span of the slot buffer.
    List(Span),
    /// Attribute pairs: `2 * len` slots from `start`, key then value.
    Attrs(Span),
}

/// A field value, resolved against the record's buffers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value<'a> {
    U64(u64),
    I64(i64),
    F64(f64),
    Bytes(&'a [u8]),
    Str(&'a str),
    List(ListRef<'a>),
    Attrs(AttrsRef<'a>),
}

impl<'a> Value<'a> {
    /// The value as an unsigned integer, if it is an integer (signed values
    /// are reinterpreted as two's complement).
    #[inline]
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::U64(v) => Some(v),
            Value::I64(v) => Some(v as u64),
            _ => None,
        }
    }

    #[inline]
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::U64(v) => Some(v as i64),
            Value::I64(v) => Some(v),
            _ => None,
        }
    }

    #[inline]
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::F64(v) => Some(v),
            Value::U64(v) => Some(v as f64),
            Value::I64(v) => Some(v as f64),
            _ => None,
        }
    }

    /// Bytes of a byte or string value.
    pub fn as_bytes(&self) -> Option<&'a [u8]> {
        match *self {
            Value::Bytes(b) => Some(b),
            Value::Str(s) => Some(s.as_bytes()),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&'a str> {
        match *self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// The buffers a record's slots refer to.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Buffers<'a> {
    slots: &'a [Slot],
    bytes: &'a [u8],
}

impl<'a> Buffers<'a> {
    #[inline]
    fn resolve(self, slot: Slot) -> Option<Value<'a>> {
        Some(match slot {
            Slot::Absent => return None,
            Slot::U(v) => Value::U64(v),
            Slot::I(v) => Value::I64(v),
            Slot::F(v) => Value::F64(v),
            Slot::Bytes(s) => Value::Bytes(self.bytes.get(s.range())?),
            // Stored strings were validated when stored; a failure here means a
            // decoder broke that promise, and the value reads as absent.
            Slot::Str(s) => Value::Str(std::str::from_utf8(self.bytes.get(s.range())?).ok()?),
            Slot::List(s) => Value::List(ListRef {
                buf: self,
                items: self.slots.get(s.range())?,
            }),
            Slot::Attrs(s) => Value::Attrs(AttrsRef {
                buf: self,
                pairs: self
                    .slots
                    .get(s.start as usize..(s.start as usize + 2 * s.len as usize))?,
            }),
        })
    }
}

/// A borrowed array value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ListRef<'a> {
    buf: Buffers<'a>,
    items: &'a [Slot],
}

impl<'a> ListRef<'a> {
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<Value<'a>> {
        self.buf.resolve(*self.items.get(i)?)
    }

    pub fn iter(&self) -> impl Iterator<Item = Value<'a>> + '_ {
        let buf = self.buf;
        self.items.iter().filter_map(move |s| buf.resolve(*s))
    }
}

/// A borrowed key/value attribute list.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttrsRef<'a> {
    buf: Buffers<'a>,
    pairs: &'a [Slot],
}

impl<'a> AttrsRef<'a> {
    pub fn len(&self) -> usize {
        self.pairs.len() / 2
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The `i`th pair.
    pub fn pair(&self, i: usize) -> Option<(&'a str, Value<'a>)> {
        let key = self.buf.resolve(*self.pairs.get(2 * i)?)?.as_str()?;
        Some((key, self.buf.resolve(*self.pairs.get(2 * i + 1)?)?))
    }

    /// The value of the first pair with this key.
    pub fn get(&self, key: &str) -> Option<Value<'a>> {
        (0..self.len())
            .filter_map(|i| self.pair(i))
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'a str, Value<'a>)> + '_ {
        (0..self.len()).filter_map(|i| self.pair(i))
    }
}

/// One record: a type and its field values.
#[derive(Clone, Copy, Debug)]
pub struct Record<'a> {
    ty: &'a RecordType,
    /// Field `i` is `slots[i]`; nested items follow the fields.
    buf: Buffers<'a>,
}

impl<'a> Record<'a> {
    /// A record over caller-owned buffers: `slots` holds one slot per field
    /// of `ty` first, then any nested items; byte spans index `bytes`.
    #[inline]
    pub fn new(ty: &'a RecordType, slots: &'a [Slot], bytes: &'a [u8]) -> Self {
        Record {
            ty,
            buf: Buffers { slots, bytes },
        }
    }

    #[inline]
    pub fn record_type(&self) -> &'a RecordType {
        self.ty
    }

    /// The type and the buffers the record is a view over: its slots (one
    /// per field, then any nested items) and the bytes their spans index.
    /// A record made by [`Record::fixed`] has no slots: its bytes are the
    /// record, read through its type's [`RecordType::fixed_ints`].
    #[inline]
    pub fn parts(&self) -> (&'a RecordType, &'a [Slot], &'a [u8]) {
        (self.ty, self.buf.slots, self.buf.bytes)
    }

    /// A record of a fixed-layout type ([`RecordType::fixed_ints`]) as its
    /// bytes alone: its fields are read from `bytes` when asked for.
    #[inline]
    pub fn fixed(ty: &'a RecordType, bytes: &'a [u8]) -> Self {
        debug_assert!(ty.fixed_ints.is_some());
        Record::new(ty, &[], bytes)
    }

    /// Field `i`'s value; `None` if absent.
    #[inline]
    pub fn get(&self, i: usize) -> Option<Value<'a>> {
        if i >= self.ty.fields.len() {
            return None;
        }
        let slot = match self.buf.slots.get(i) {
            Some(s) => *s,
            None => self.fixed_slot(i)?,
        };
        self.buf.resolve(slot)
    }

    /// Field `i` of a record without slots, read from its bytes when its
    /// type says where.
    #[inline]
    fn fixed_slot(&self, i: usize) -> Option<Slot> {
        self.fixed_at(i)?.value(self.buf.bytes)
    }

    /// Where field `i` lies in the bytes, when the type has a fixed layout.
    #[inline]
    fn fixed_at(&self, i: usize) -> Option<crate::ints::FixedInt> {
        self.ty.fixed_ints.as_ref()?.get(i).copied()
    }

    /// Field `i` as a signed integer when it is an integer (unsigned values
    /// reinterpreted as two's complement); `None` otherwise. The fast path
    /// of interpreters: no [`Value`] is assembled.
    #[inline(always)]
    pub fn int(&self, i: usize) -> Option<i64> {
        if i >= self.ty.fields.len() {
            return None;
        }
        match self.buf.slots.get(i) {
            Some(Slot::U(v)) => Some(*v as i64),
            Some(Slot::I(v)) => Some(*v),
            Some(_) => None,
            None => self.fixed_int(i),
        }
    }

    /// [`Record::int`] of a record without slots (out of line: the slots'
    /// path is what every heap record of a decoded stream takes).
    #[inline(never)]
    fn fixed_int(&self, i: usize) -> Option<i64> {
        self.fixed_at(i)?.int(self.buf.bytes)
    }

    /// Field `i` as [`Record::int`] does, told that in a record of this type
    /// without slots ([`Record::fixed`]) it lies at `at`: a reader that
    /// looked the layout up once reads it with no lookup per record.
    #[inline(always)]
    pub fn int_at(&self, i: usize, at: crate::ints::FixedInt) -> Option<i64> {
        if self.buf.slots.is_empty() {
            at.int(self.buf.bytes)
        } else {
            self.int(i)
        }
    }

    /// The value of the field called `name`.
    pub fn field(&self, name: &str) -> Option<Value<'a>> {
        self.get(self.ty.field_index(name)?)
    }

    /// The value of the first field with `role`.
    #[inline]
    pub fn role(&self, role: crate::Role) -> Option<Value<'a>> {
        self.get(self.ty.role_index(role)?)
    }

    /// Unsigned value of the first field with `role`.
    #[inline]
    pub fn role_u64(&self, role: crate::Role) -> Option<u64> {
        self.role(role)?.as_u64()
    }

    /// All fields with their names.
    pub fn fields(&self) -> impl Iterator<Item = (&'a str, Option<Value<'a>>)> + '_ {
        self.ty
            .fields
            .iter()
            .enumerate()
            .map(|(i, f)| (f.name.as_str(), self.get(i)))
    }
}

/// Owned, reusable storage for one record: decoders fill it in place and
/// scripts edit it field by field, then lend it out as a [`Record`].
#[derive(Clone, Debug, Default)]
pub struct RecordBuf {
    ty: usize,
    nfields: usize,
    slots: Vec<Slot>,
    bytes: Vec<u8>,
}

impl RecordBuf {
    pub fn new() -> Self {
        Self::default()
    }

    /// Empties the buffer for a record of type `ty` with `nfields` fields,
    /// all absent. Keeps the allocated capacity.
    pub fn reset(&mut self, ty: &RecordType) {
        self.ty = ty.index;
        self.nfields = ty.fields.len();
        // The vectors' lengths are stored only when they change: a record
        // lent right after such a store reads the length back in a wide
        // load that store forwarding cannot serve, and most records of a
        // stream have as many slots as the one before and no bytes.
        if self.slots.len() == self.nfields {
            self.slots.fill(Slot::Absent);
        } else {
            self.slots.clear();
            self.slots.resize(self.nfields, Slot::Absent);
        }
        if !self.bytes.is_empty() {
            self.bytes.clear();
        }
    }

    /// Starts a record of `ty` whose fields are a copy of `template` (one
    /// slot per field, no byte spans): constants need not be set again.
    #[inline]
    pub fn reset_from(&mut self, ty: &RecordType, template: &[Slot]) {
        debug_assert_eq!(template.len(), ty.fields.len());
        self.ty = ty.index;
        self.nfields = template.len();
        self.slots.clear();
        self.slots.extend_from_slice(template);
        self.bytes.clear();
    }

    /// Index of the record type in its schema.
    #[inline]
    pub fn type_index(&self) -> usize {
        self.ty
    }

    /// Lends the buffer as a record of `ty` (which must be the type it was
    /// reset for).
    #[inline]
    pub fn as_record<'a>(&'a self, ty: &'a RecordType) -> Record<'a> {
        debug_assert_eq!(ty.index, self.ty);
        Record::new(ty, &self.slots, &self.bytes)
    }

    #[inline]
    pub fn set_u64(&mut self, field: usize, v: u64) {
        self.slots[field] = Slot::U(v);
    }

    #[inline]
    pub fn set_i64(&mut self, field: usize, v: i64) {
        self.slots[field] = Slot::I(v);
    }

    #[inline]
    pub fn set_f64(&mut self, field: usize, v: f64) {
        self.slots[field] = Slot::F(v);
    }

    #[inline]
    pub fn set_absent(&mut self, field: usize) {
        self.slots[field] = Slot::Absent;
    }

    pub fn set_bytes(&mut self, field: usize, b: &[u8]) {
        self.slots[field] = Slot::Bytes(self.push_bytes(b));
    }

    pub fn set_str(&mut self, field: usize, s: &str) {
        self.slots[field] = Slot::Str(self.push_bytes(s.as_bytes()));
    }

    /// Stores any value (copying nested lists and attributes) in `field`.
    pub fn set(&mut self, field: usize, v: Value<'_>) {
        let slot = self.store(v);
        self.slots[field] = slot;
    }

    /// Copies every field of `rec` (of any buffers) into this buffer.
    pub fn copy_from(&mut self, rec: &Record<'_>) {
        self.reset(rec.record_type());
        for i in 0..self.nfields {
            if let Some(v) = rec.get(i) {
                self.set(i, v);
            }
        }
    }

    fn push_bytes(&mut self, b: &[u8]) -> Span {
        let span = Span::new(self.bytes.len(), b.len());
        if !b.is_empty() {
            self.bytes.extend_from_slice(b);
        }
        span
    }

    fn store(&mut self, v: Value<'_>) -> Slot {
        match v {
            Value::U64(x) => Slot::U(x),
            Value::I64(x) => Slot::I(x),
            Value::F64(x) => Slot::F(x),
            Value::Bytes(b) => Slot::Bytes(self.push_bytes(b)),
            Value::Str(s) => Slot::Str(self.push_bytes(s.as_bytes())),
            Value::List(l) => {
                let start = self.slots.len();
                self.slots.resize(start + l.len(), Slot::Absent);
                for i in 0..l.len() {
                    if let Some(item) = l.get(i) {
                        let s = self.store(item);
                        self.slots[start + i] = s;
                    }
                }
                Slot::List(Span::new(start, l.len()))
            }
            Value::Attrs(a) => {
                let start = self.slots.len();
                self.slots.resize(start + 2 * a.len(), Slot::Absent);
                for i in 0..a.len() {
                    if let Some((k, val)) = a.pair(i) {
                        let ks = self.store(Value::Str(k));
                        let vs = self.store(val);
                        self.slots[start + 2 * i] = ks;
                        self.slots[start + 2 * i + 1] = vs;
                    }
                }
                Slot::Attrs(Span::new(start, a.len()))
            }
        }
    }

    /// Appends list items built by `items` and returns the list's slot; for
    /// decoders that build nested values without an intermediate `Value`.
    pub fn push_list<'v>(&mut self, items: impl ExactSizeIterator<Item = Value<'v>>) -> Slot {
        let start = self.slots.len();
        let n = items.len();
        self.slots.resize(start + n, Slot::Absent);
        for (i, v) in items.enumerate() {
            let s = self.store(v);
            self.slots[start + i] = s;
        }
        Slot::List(Span::new(start, n))
    }

    /// Stores a value (copying bytes and nested items) and returns its slot,
    /// to be placed with [`set_slot`](Self::set_slot) or in a list.
    pub fn store_value(&mut self, v: Value<'_>) -> Slot {
        self.store(v)
    }

    /// Appends already stored slots as list items and returns the list's slot.
    pub fn push_slots(&mut self, items: &[Slot]) -> Slot {
        let start = self.slots.len();
        self.slots.extend_from_slice(items);
        Slot::List(Span::new(start, items.len()))
    }

    /// Appends stored key/value slots (key, value, key, value, …; keys
    /// stored as strings) as an attribute list and returns its slot.
    pub fn push_attrs(&mut self, pairs: &[Slot]) -> Slot {
        debug_assert!(pairs.len().is_multiple_of(2));
        let start = self.slots.len();
        self.slots.extend_from_slice(pairs);
        Slot::Attrs(Span::new(start, pairs.len() / 2))
    }

    /// Sets a field to a slot made by one of the `push_*` helpers.
    #[inline]
    pub fn set_slot(&mut self, field: usize, slot: Slot) {
        self.slots[field] = slot;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ints::{FixedInt, IntRead};
    use crate::schema::{FieldDef, FieldType, RecordKind, Role, Schema};

    /// A fixed-layout record reads each field from its bytes, in its own
    /// encoding; a field its bytes do not reach is absent, not a panic.
    #[test]
    fn a_fixed_record_reads_its_fields_from_its_bytes() {
        let mut s = Schema::new("test");
        let i = s.add_type(
            "io",
            RecordKind::Other,
            vec![
                FieldDef::new("a", FieldType::U64, None),
                FieldDef::new("b", FieldType::I64, None),
                FieldDef::new("c", FieldType::U64, None),
            ],
        );
        let at = |off, read| FixedInt { off, read };
        s.types[i].fixed_ints = Some(Box::new([
            at(1, IntRead::U16Be),
            at(3, IntRead::I32Le),
            at(7, IntRead::U64Le),
        ]));
        let ty = &s.types[i];
        // type byte, 0x0102 big-endian, -2 little-endian, then 8 bytes of 7.
        let mut bytes = vec![9, 1, 2, 0xfe, 0xff, 0xff, 0xff];
        bytes.extend_from_slice(&7u64.to_le_bytes());
        let r = Record::fixed(ty, &bytes);
        assert_eq!(r.get(0), Some(Value::U64(0x0102)));
        assert_eq!(r.get(1), Some(Value::I64(-2)));
        assert_eq!(r.int(2), Some(7));
        assert_eq!(r.int_at(1, ty.fixed_ints.as_ref().unwrap()[1]), Some(-2));
        assert_eq!(r.get(3), None);
        let short = Record::fixed(ty, &bytes[..10]);
        assert_eq!(short.int(1), Some(-2));
        assert_eq!(short.get(2), None);
        assert_eq!(short.int(2), None);
        // A record with slots reads its slots, whatever its type's layout.
        let slots = [Slot::U(5), Slot::I(6), Slot::U(8)];
        let r = Record::new(ty, &slots, &bytes);
        assert_eq!(r.int_at(1, ty.fixed_ints.as_ref().unwrap()[1]), Some(6));
        assert_eq!(r.get(2), Some(Value::U64(8)));
    }

    fn schema() -> Schema {
        let mut s = Schema::new("test");
        s.add_type(
            "event",
            RecordKind::Other,
            vec![
                FieldDef::new("size", FieldType::U64, Some(Role::Size)),
                FieldDef::new("name", FieldType::Str, None),
                FieldDef::new("samples", FieldType::List(Box::new(FieldType::I64)), None),
                FieldDef::new("attrs", FieldType::Attrs, None),
            ],
        );
        s
    }

    #[test]
    fn nested_values_round_trip_through_copy() {
        let s = schema();
        let ty = &s.types[0];
        let mut a = RecordBuf::new();
        a.reset(ty);
        a.set_u64(0, 24);
        a.set_str(1, "hello");
        let list = a.push_list([Value::I64(-1), Value::I64(7)].into_iter());
        a.set_slot(2, list);
        let rec = a.as_record(ty);
        assert_eq!(rec.role_u64(Role::Size), Some(24));
        assert_eq!(rec.field("name").and_then(|v| v.as_str()), Some("hello"));
        let Some(Value::List(l)) = rec.get(2) else {
            panic!("list expected")
        };
        assert_eq!(
            l.iter().map(|v| v.as_i64().unwrap()).collect::<Vec<_>>(),
            vec![-1, 7]
        );
        assert!(rec.get(3).is_none());
        assert!(rec.get(99).is_none());

        // A script-like edit: copy, update by name, re-emit.
        let mut b = RecordBuf::new();
        b.copy_from(&rec);
        b.set_u64(ty.field_index("size").unwrap(), 48);
        let edited = b.as_record(ty);
        assert_eq!(edited.field("size"), Some(Value::U64(48)));
        assert_eq!(edited.field("name").and_then(|v| v.as_str()), Some("hello"));
        let Some(Value::List(l)) = edited.get(2) else {
            panic!("list expected")
        };
        assert_eq!(l.len(), 2);
        assert_eq!(l.get(1), Some(Value::I64(7)));
    }

    #[test]
    fn a_reset_buffer_holds_nothing_of_the_record_before() {
        let s = schema();
        let ty = &s.types[0];
        let mut b = RecordBuf::new();
        // One with bytes and a nested list (slots beyond the fields), one
        // with only an integer, one with nothing: each reads only its own.
        b.reset(ty);
        b.set_u64(0, 1);
        b.set_str(1, "first");
        let list = b.push_list([Value::I64(3)].into_iter());
        b.set_slot(2, list);
        b.reset(ty);
        b.set_u64(0, 2);
        let r = b.as_record(ty);
        assert_eq!(r.parts().1.len(), 4);
        assert!(r.parts().2.is_empty());
        assert_eq!(
            (0..4).map(|i| r.get(i)).collect::<Vec<_>>(),
            vec![Some(Value::U64(2)), None, None, None]
        );
        b.reset(ty);
        let r = b.as_record(ty);
        assert!((0..4).all(|i| r.get(i).is_none()));
        b.set_str(1, "");
        assert_eq!(b.as_record(ty).get(1), Some(Value::Str("")));
    }

    #[test]
    fn attribute_lists_resolve_by_key() {
        let s = schema();
        let ty = &s.types[0];
        // Fields 0..3 absent, field 3 an attribute list of two pairs stored
        // at slots 4..8: ("k", "xy") and ("xy", 1.5).
        let slots = [
            Slot::Absent,
            Slot::Absent,
            Slot::Absent,
            Slot::Attrs(Span::new(4, 2)),
            Slot::Str(Span::new(0, 1)),
            Slot::Str(Span::new(1, 2)),
            Slot::Str(Span::new(1, 2)),
            Slot::F(1.5),
        ];
        let rec = Record::new(ty, &slots, b"kxy");
        let Some(Value::Attrs(a)) = rec.get(3) else {
            panic!("attrs expected")
        };
        assert_eq!(a.len(), 2);
        assert_eq!(a.pair(0), Some(("k", Value::Str("xy"))));
        assert_eq!(a.get("xy"), Some(Value::F64(1.5)));
        let mut copy = RecordBuf::new();
        copy.copy_from(&rec);
        let copied = copy.as_record(ty);
        let Some(Value::Attrs(c)) = copied.get(3) else {
            panic!("attrs expected")
        };
        assert_eq!(c.get("xy"), Some(Value::F64(1.5)));
        assert_eq!(c.get("k"), Some(Value::Str("xy")));
    }
}
