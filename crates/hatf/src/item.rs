//! What a HATF trace holds, with interpretations applied: events with
//! absolute field values, comments, and metadata records.

use crate::spec::{EventKind, Field, Meta};

/// A data record (tags 0–9) with absolute values. Fields a record type does
/// not have are ignored by the writer and zero from the reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Event<'a> {
    pub kind: EventKind,
    pub size: u64,
    /// The address; for a realloc the old address.
    pub address: u64,
    /// For a realloc, the new address.
    pub new_address: u64,
    pub thread: u64,
    pub heap: u64,
    pub time: u64,
    pub attributes: &'a [u8],
}

impl<'a> Event<'a> {
    /// An event of `kind` with every field zero.
    pub fn new(kind: EventKind) -> Self {
        Event {
            kind,
            size: 0,
            address: 0,
            new_address: 0,
            thread: 0,
            heap: 0,
            time: 0,
            attributes: &[],
        }
    }

    /// The values of the record's numeric fields in binary order (the
    /// attributes field is not included).
    pub fn numeric_values(&self) -> impl Iterator<Item = (Field, u64)> + '_ {
        let mut seen_address = false;
        self.kind
            .layout()
            .iter()
            .filter(|f| **f != Field::Attributes)
            .map(move |f| {
                let v = match f {
                    Field::Size => self.size,
                    Field::Address if !seen_address => {
                        seen_address = true;
                        self.address
                    }
                    Field::Address => self.new_address,
                    Field::Time => self.time,
                    Field::Thread => self.thread,
                    Field::Heap => self.heap,
                    Field::Attributes => 0,
                };
                (*f, v)
            })
    }
}

/// One record of a HATF trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Item<'a> {
    Event(Event<'a>),
    /// A comment's bytes (not necessarily UTF-8).
    Comment(&'a [u8]),
    Meta(Meta),
}

/// An owned [`Item`], for tests and for collecting traces in memory.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum OwnedItem {
    Event(OwnedEvent),
    Comment(Vec<u8>),
    Meta(Meta),
}

/// An owned [`Event`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OwnedEvent {
    pub kind: EventKind,
    pub size: u64,
    pub address: u64,
    pub new_address: u64,
    pub thread: u64,
    pub heap: u64,
    pub time: u64,
    pub attributes: Vec<u8>,
}

impl OwnedEvent {
    /// An event of `kind` with every field zero.
    pub fn new(kind: EventKind) -> Self {
        OwnedEvent {
            kind,
            size: 0,
            address: 0,
            new_address: 0,
            thread: 0,
            heap: 0,
            time: 0,
            attributes: Vec::new(),
        }
    }

    /// The event as a reader gives it back: fields its record type does not
    /// have are zero.
    pub fn canonical(&self) -> OwnedEvent {
        let layout = self.kind.layout();
        let has = |f: Field| layout.contains(&f);
        OwnedEvent {
            kind: self.kind,
            size: if has(Field::Size) { self.size } else { 0 },
            address: if has(Field::Address) { self.address } else { 0 },
            new_address: if self.kind.is_realloc() {
                self.new_address
            } else {
                0
            },
            thread: self.thread,
            heap: if has(Field::Heap) { self.heap } else { 0 },
            time: self.time,
            attributes: self.attributes.clone(),
        }
    }

    pub fn as_event(&self) -> Event<'_> {
        Event {
            kind: self.kind,
            size: self.size,
            address: self.address,
            new_address: self.new_address,
            thread: self.thread,
            heap: self.heap,
            time: self.time,
            attributes: &self.attributes,
        }
    }
}

impl Item<'_> {
    pub fn to_owned(&self) -> OwnedItem {
        match *self {
            Item::Event(e) => OwnedItem::Event(OwnedEvent {
                kind: e.kind,
                size: e.size,
                address: e.address,
                new_address: e.new_address,
                thread: e.thread,
                heap: e.heap,
                time: e.time,
                attributes: e.attributes.to_vec(),
            }),
            Item::Comment(c) => OwnedItem::Comment(c.to_vec()),
            Item::Meta(m) => OwnedItem::Meta(m),
        }
    }
}

impl OwnedItem {
    pub fn as_item(&self) -> Item<'_> {
        match self {
            OwnedItem::Event(e) => Item::Event(e.as_event()),
            OwnedItem::Comment(c) => Item::Comment(c),
            OwnedItem::Meta(m) => Item::Meta(*m),
        }
    }
}
