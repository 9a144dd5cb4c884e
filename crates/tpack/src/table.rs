//! A block's records held in memory in a compact table, so that whole
//! blocks can pass between threads: the parallel reader's workers decode
//! into it, and the parallel writer's workers encode from it. A record
//! takes 32 bytes; what changes rarely is kept beside the records (the
//! new address of every realloc, the (thread, heap) pair from each record
//! on which it changes, attribute values and comments once each).

use tramp_hatf::spec::EVENT_KINDS;
use tramp_hatf::{Event, Item};

/// The slot kind of a comment (event kinds are 0–9, their index in
/// `EVENT_KINDS`).
pub(crate) const COMMENT: u8 = u8::MAX;

/// One record: the event's kind and its fields that change from record to
/// record; for a comment, only its text.
#[derive(Clone, Copy)]
pub(crate) struct Slot {
    pub kind: u8,
    /// 1 + the index of the attribute value or comment in `spans`; 0 for
    /// an event without attributes.
    pub span: u32,
    pub size: u64,
    pub address: u64,
    pub time: u64,
}

/// A block's records.
#[derive(Default)]
pub(crate) struct Table {
    pub slots: Vec<Slot>,
    /// The new address of every realloc, in order.
    pub new_addresses: Vec<u64>,
    /// The slot from which each (thread, heap) pair holds (both 0 before
    /// the first).
    pub changes: Vec<(u32, u64, u64)>,
    /// Attribute values and comments, each once (an attribute value the
    /// same as the previous event's is not stored again).
    pub bytes: Vec<u8>,
    pub spans: Vec<(u32, u32)>,
    /// The current (thread, heap) pair and attribute span while filling.
    thread: u64,
    heap: u64,
    last_attr: u32,
}

/// Whether events of this kind (an index in `EVENT_KINDS`) have a new
/// address: the reallocs.
#[inline]
pub(crate) fn has_new_address(kind: u8) -> bool {
    (2..=5).contains(&kind)
}

impl Table {
    pub fn clear(&mut self) {
        self.slots.clear();
        self.new_addresses.clear();
        self.changes.clear();
        self.bytes.clear();
        self.spans.clear();
        (self.thread, self.heap, self.last_attr) = (0, 0, 0);
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Bytes of attribute values and comments held.
    pub fn text_bytes(&self) -> usize {
        self.bytes.len()
    }

    #[inline]
    pub fn span(&self, span: u32) -> &[u8] {
        match span.checked_sub(1) {
            Some(i) => {
                let (at, len) = self.spans[i as usize];
                &self.bytes[at as usize..(at + len) as usize]
            }
            None => &[],
        }
    }

    /// Stores bytes; returns their span number.
    pub fn store(&mut self, b: &[u8]) -> u32 {
        let at = self.bytes.len() as u32;
        self.bytes.extend_from_slice(b);
        self.spans.push((at, b.len() as u32));
        self.spans.len() as u32
    }

    /// Notes the (thread, heap) pair of the record about to be pushed.
    #[inline]
    pub fn thread_heap(&mut self, thread: u64, heap: u64) {
        if (thread, heap) != (self.thread, self.heap) {
            (self.thread, self.heap) = (thread, heap);
            self.changes.push((self.slots.len() as u32, thread, heap));
        }
    }

    /// The span of an event's attributes `value`: none when it `has` none,
    /// the previous event's when it is the `same` (and there was one), else
    /// stored anew.
    #[inline]
    pub fn attributes(&mut self, has: bool, value: &[u8], same: bool) -> u32 {
        if !has {
            0
        } else if same && self.last_attr != 0 {
            self.last_attr
        } else {
            self.last_attr = self.store(value);
            self.last_attr
        }
    }

    pub fn push_event(&mut self, e: &Event<'_>) {
        let kind = e.kind.tag();
        self.thread_heap(e.thread, e.heap);
        if has_new_address(kind) {
            self.new_addresses.push(e.new_address);
        }
        let same = self.span(self.last_attr) == e.attributes;
        let span = self.attributes(!e.attributes.is_empty(), e.attributes, same);
        self.slots.push(Slot {
            kind,
            span,
            size: e.size,
            address: e.address,
            time: e.time,
        });
    }

    pub fn push_comment(&mut self, text: &[u8]) {
        let span = self.store(text);
        self.slots.push(Slot {
            kind: COMMENT,
            span,
            size: 0,
            address: 0,
            time: 0,
        });
    }
}

/// Where a walk through a table stands: the next slot and the side
/// tables' positions.
#[derive(Default)]
pub(crate) struct Cursor {
    pub at: usize,
    new_at: usize,
    change_at: usize,
    /// The slot of the next (thread, heap) change (0 before the first
    /// look: the table's first change is at slot 0 or later).
    next_change: usize,
    thread: u64,
    heap: u64,
}

impl Cursor {
    /// The record at the cursor, and the cursor moved past it; `None` at
    /// the table's end.
    #[inline]
    pub fn next<'t>(&mut self, t: &'t Table) -> Option<Item<'t>> {
        let i = self.at;
        let s = *t.slots.get(i)?;
        self.at += 1;
        if s.kind == COMMENT {
            return Some(Item::Comment(t.span(s.span)));
        }
        // One compare a record; the side table only where it changes.
        if i >= self.next_change {
            while let Some(&(from, thread, heap)) = t.changes.get(self.change_at)
                && from as usize <= i
            {
                self.thread = thread;
                self.heap = heap;
                self.change_at += 1;
            }
            self.next_change = t
                .changes
                .get(self.change_at)
                .map_or(usize::MAX, |c| c.0 as usize);
        }
        let new_address = if has_new_address(s.kind) {
            let a = t.new_addresses.get(self.new_at).copied().unwrap_or(0);
            self.new_at += 1;
            a
        } else {
            0
        };
        Some(Item::Event(Event {
            kind: EVENT_KINDS[s.kind as usize],
            size: s.size,
            address: s.address,
            new_address,
            thread: self.thread,
            heap: self.heap,
            time: s.time,
            attributes: t.span(s.span),
        }))
    }
}
