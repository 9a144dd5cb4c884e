//! Pointer traces: what `tramp record --pointers` writes.
//!
//! HATF and tpack hold heap events only, so a recording with loads and
//! stores is written as Meta-TF with the built-in DTD [`POINTER_DTD`]
//! (embedded in every trace): the heap events of a normal recording, with
//! the allocation site as a number (the `site` role, which `tramp rds`
//! takes as the static id), plus 8-byte loads and stores with address,
//! value and instruction. Layout and decisions: `docs/formats/capture.md`.

use std::sync::Arc;

use tramp_core::{Error, RecordBuf, Schema, Sink};
use tramp_hatf::{EventKind, Item};
use tramp_io::Output;
use tramp_metatf::codec::MetaSink;

use crate::convert::TraceOut;
use tramp_heap::site::decode_site;

/// The DTD of pointer traces (`docs/formats/capture.md`, "Pointer traces").
pub const POINTER_DTD: &str = include_str!("pointers.dtd");

/// A load or a store seen by the capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    pub store: bool,
    pub thread: u64,
    pub time: u64,
    pub address: u64,
    pub value: u64,
    /// The instrumented instruction (the hook's return address).
    pub site: u64,
}

/// Record types of [`POINTER_DTD`], by schema index.
struct Types {
    alloc: usize,
    free: usize,
    realloc: [usize; 4],
    /// The same for reported blocks (heap ≠ 0).
    block_alloc: usize,
    block_free: usize,
    block_realloc: [usize; 4],
    thread_start: usize,
    thread_end: usize,
    load: usize,
    store: usize,
    note: usize,
}

/// Where each field of the DTD is in a record type (looked up once).
#[derive(Clone, Copy, Default)]
struct Fields {
    thread: Option<usize>,
    time: Option<usize>,
    address: Option<usize>,
    old: Option<usize>,
    new: Option<usize>,
    size: Option<usize>,
    site: Option<usize>,
    value: Option<usize>,
    heap: Option<usize>,
    length: Option<usize>,
    data: Option<usize>,
}

/// Writes a pointer trace.
pub struct PointerOut {
    sink: MetaSink<Output>,
    schema: Arc<Schema>,
    types: Types,
    /// By schema type index.
    fields: Vec<Fields>,
    buf: RecordBuf,
}

impl PointerOut {
    pub fn new(out: Output) -> Result<PointerOut, Error> {
        let sink = MetaSink::new(out, POINTER_DTD, false)?;
        let schema = sink.schema().clone();
        let ty = |name: &str| {
            schema
                .types
                .iter()
                .position(|t| t.name == name)
                .unwrap_or_else(|| panic!("the pointer DTD defines {name}"))
        };
        let types = Types {
            alloc: ty("alloc"),
            free: ty("free"),
            realloc: [
                ty("reallocInPlace"),
                ty("reallocMoved"),
                ty("reallocAllocOnly"),
                ty("reallocFreeOnly"),
            ],
            block_alloc: ty("blockAlloc"),
            block_free: ty("blockFree"),
            block_realloc: [
                ty("blockReallocInPlace"),
                ty("blockReallocMoved"),
                ty("blockReallocAllocOnly"),
                ty("blockReallocFreeOnly"),
            ],
            thread_start: ty("threadStart"),
            thread_end: ty("threadEnd"),
            load: ty("load"),
            store: ty("store"),
            note: ty("note"),
        };
        let fields = schema
            .types
            .iter()
            .map(|t| {
                let f = |n: &str| t.field_index(n);
                Fields {
                    thread: f("thread"),
                    time: f("time"),
                    address: f("address"),
                    old: f("old"),
                    new: f("new"),
                    size: f("size"),
                    site: f("site"),
                    value: f("value"),
                    heap: f("heap"),
                    length: f("length"),
                    data: f("data"),
                }
            })
            .collect();
        Ok(PointerOut {
            sink,
            schema,
            types,
            fields,
            buf: RecordBuf::new(),
        })
    }

    /// Sets a field of the record being built (if its type has it).
    #[inline]
    fn set(&mut self, field: Option<usize>, v: u64) {
        if let Some(i) = field {
            self.buf.set_u64(i, v);
        }
    }

    fn write(&mut self, ty: usize) -> Result<(), Error> {
        let t = &self.schema.types[ty];
        self.sink.write_record(&self.buf.as_record(t))
    }

    pub fn finish(self) -> Result<(), Error> {
        Box::new(self.sink).finish()
    }
}

impl TraceOut for PointerOut {
    fn write_item(&mut self, item: &Item<'_>) -> Result<(), Error> {
        match item {
            Item::Event(e) => {
                let t = &self.types;
                let (alloc, free, realloc) = if e.heap == 0 {
                    (t.alloc, t.free, t.realloc)
                } else {
                    (t.block_alloc, t.block_free, t.block_realloc)
                };
                let ty = match e.kind {
                    EventKind::Alloc => alloc,
                    EventKind::Free => free,
                    EventKind::ReallocNoAlloc => realloc[0],
                    EventKind::ReallocAllocFree => realloc[1],
                    EventKind::ReallocAlloc => realloc[2],
                    EventKind::ReallocFree => realloc[3],
                    EventKind::CreateThread => t.thread_start,
                    EventKind::DestroyThread => t.thread_end,
                    // The heap of reported blocks needs no record here: its
                    // blocks' records name it.
                    EventKind::CreateHeap | EventKind::DestroyHeap => return Ok(()),
                };
                let f = self.fields[ty];
                self.buf.reset(&self.schema.types[ty]);
                self.set(f.thread, e.thread);
                self.set(f.time, e.time);
                self.set(f.size, e.size);
                self.set(f.heap, e.heap);
                if e.kind.is_realloc() {
                    self.set(f.old, e.address);
                    self.set(f.new, e.new_address);
                } else {
                    self.set(f.address, e.address);
                }
                let site = decode_site(e.attributes).map_or(0, |s| s.value);
                self.set(f.site, site);
                self.write(ty)
            }
            Item::Comment(text) => {
                let ty = self.types.note;
                let f = self.fields[ty];
                self.buf.reset(&self.schema.types[ty]);
                let n = text.len().min(u16::MAX as usize);
                self.set(f.length, n as u64);
                if let Some(i) = f.data {
                    self.buf.set_bytes(i, &text[..n]);
                }
                self.write(ty)
            }
            Item::Meta(_) => Ok(()),
        }
    }

    fn write_access(&mut self, a: &Access) -> Result<(), Error> {
        let ty = if a.store {
            self.types.store
        } else {
            self.types.load
        };
        let f = self.fields[ty];
        self.buf.reset(&self.schema.types[ty]);
        self.set(f.thread, a.thread);
        self.set(f.time, a.time);
        self.set(f.address, a.address);
        self.set(f.value, a.value);
        self.set(f.site, a.site);
        self.write(ty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dtd_is_valid_and_has_every_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.mtf");
        let out = Output::create(path.to_str().unwrap(), None).unwrap();
        let p = PointerOut::new(out).unwrap();
        p.finish().unwrap();
        // The file reads back as a trace of no records whose embedded DTD
        // declares every type the writer uses, each of the kind its
        // readers find it by.
        use tramp_core::RecordKind as K;
        use tramp_core::Source;
        let file = std::fs::File::open(&path).unwrap();
        let mut src = tramp_metatf::codec::MetaSource::open(file, None).unwrap();
        let kinds: std::collections::HashMap<String, K> = src
            .schema()
            .types
            .iter()
            .map(|t| (t.name.clone(), t.kind))
            .collect();
        for (name, kind) in [
            ("alloc", K::Alloc),
            ("free", K::Free),
            ("threadStart", K::ThreadCreate),
            ("threadEnd", K::ThreadDestroy),
            ("load", K::Load),
            ("store", K::Store),
        ] {
            assert_eq!(kinds.get(name), Some(&kind), "{name}");
        }
        for name in [
            "reallocInPlace",
            "reallocMoved",
            "blockAlloc",
            "blockFree",
            "note",
        ] {
            assert!(kinds.contains_key(name), "{name}");
        }
        assert!(src.next_record().unwrap().is_none());
    }
}
