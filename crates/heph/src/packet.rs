//! Heph's packets: metadata (one option each) and events (stream,
//! counter, substream, start, end, description, typed attributes). All
//! integers are big-endian.

/// Magic of a metadata packet.
pub const METADATA_MAGIC: u32 = 0x75D1_1D4D;
/// Magic of an event packet.
pub const EVENT_MAGIC: u32 = 0xC1FC_1FB7;
/// Fixed part of an event packet: magic, size, stream, counter, substream,
/// start, end, description length.
pub const EVENT_HEADER: usize = 4 + 4 + 4 + 4 + 8 + 8 + 8 + 2;
/// Fixed part of a metadata packet: magic, size, option name length.
pub const METADATA_HEADER: usize = 4 + 4 + 2;

/// Attribute value types (the array marker is OR-ed in).
pub const TYPE_U64: u8 = 0b0000_0001;
pub const TYPE_I64: u8 = 0b0000_0010;
pub const TYPE_F64: u8 = 0b0000_0011;
pub const TYPE_STR: u8 = 0b0000_0100;
pub const ARRAY: u8 = 0b1000_0000;

/// One packet.
#[derive(Clone, Debug, PartialEq)]
pub enum Packet {
    Metadata(Metadata),
    Event(Event),
}

/// A metadata packet: one option.
#[derive(Clone, Debug, PartialEq)]
pub struct Metadata {
    pub option: String,
    pub value: OptionValue,
}

/// An option's value: the epoch (ns since the Unix epoch), or the raw
/// bytes of an option this version does not know (kept, and reported).
#[derive(Clone, Debug, PartialEq)]
pub enum OptionValue {
    Epoch(u64),
    Unknown(Vec<u8>),
}

/// An event packet.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub stream: u32,
    /// Counts the stream's events; wraps after 2^32 - 1.
    pub counter: u32,
    pub substream: u64,
    /// Nanoseconds since the trace's epoch.
    pub start: u64,
    pub end: u64,
    pub description: String,
    pub attributes: Vec<Attribute>,
}

/// A key and its typed value.
#[derive(Clone, Debug, PartialEq)]
pub struct Attribute {
    pub name: String,
    pub value: Value,
}

/// An attribute value: a scalar of each type, or an array of one type.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    U64(u64),
    I64(i64),
    F64(f64),
    Str(String),
    U64s(Vec<u64>),
    I64s(Vec<i64>),
    F64s(Vec<f64>),
    Strs(Vec<String>),
}

impl Value {
    /// The type byte the value is written with.
    pub fn type_byte(&self) -> u8 {
        match self {
            Value::U64(_) => TYPE_U64,
            Value::I64(_) => TYPE_I64,
            Value::F64(_) => TYPE_F64,
            Value::Str(_) => TYPE_STR,
            Value::U64s(_) => TYPE_U64 | ARRAY,
            Value::I64s(_) => TYPE_I64 | ARRAY,
            Value::F64s(_) => TYPE_F64 | ARRAY,
            Value::Strs(_) => TYPE_STR | ARRAY,
        }
    }
}

impl Event {
    /// The event's duration in nanoseconds (0 if it ends before it starts).
    pub fn duration(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
}
