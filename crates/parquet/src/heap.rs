//! A heap trace's three tables.
//!
//! * `events`: one row per heap event the heap view makes of the trace —
//!   `kind` (alloc, free, realloc, displaced, heap_create, heap_destroy,
//!   thread_create, thread_destroy), `time`, `thread`, `heap`, `size`,
//!   `address`, `old_address` (a realloc's), `object` (the object's number,
//!   from 1 in order of birth), `stack` (the allocating call stack's number
//!   in the `stacks` table), `lifetime` (a free's or a displacement's: the
//!   object's age, in the trace's time unit).
//! * `stacks`: one row per frame — `stack`, `depth` (0 the innermost),
//!   `pc`, `function`, `file`, `line`, `module`; inlined functions are
//!   frames of their own at the same `pc`.
//! * `processes`: one row per trace — `trace` (the file), `program`,
//!   `pid`, `ppid`, `records`, `events`, `allocations`, `bytes`,
//!   `first_time`, `last_time`, `complete` (1, or 0 when the trace was
//!   damaged and the tables hold what came before).

use std::io::Write;

use rustc_hash::FxHashMap;
use serde::Serialize;
use tramp_core::{Analysis, Error, Record, RecordKind, Role};
use tramp_heap::{Born, Heap, HeapEvent, HeapStep, Site};
use tramp_symbols::modules::Names;
use tramp_symbols::notes::Annotation;
use tramp_symbols::sites::stack_of;

use crate::table::{ColType, Table, TableError, TableReport};

/// The `kind` column's values, by the heap event.
pub const KINDS: [&str; 8] = [
    "alloc",
    "free",
    "displaced",
    "realloc",
    "heap_create",
    "heap_destroy",
    "thread_create",
    "thread_destroy",
];

/// Rows per row group: a tpack block's records (1 Mi by default).
pub const GROUP_ROWS: usize = 1 << 20;

/// The `events` table's columns, in order (the Arrow batches of the
/// Python package's `Trace.events()` have the same).
pub const EVENTS: &[(&str, ColType)] = &[
    ("kind", ColType::Str),
    ("time", ColType::I64),
    ("thread", ColType::I64),
    ("heap", ColType::I64),
    ("size", ColType::I64),
    ("address", ColType::Address),
    ("old_address", ColType::Address),
    ("object", ColType::I64),
    ("stack", ColType::I64),
    ("lifetime", ColType::I64),
];

const STACKS: &[(&str, ColType)] = &[
    ("stack", ColType::I64),
    ("depth", ColType::I32),
    ("pc", ColType::Address),
    ("function", ColType::Str),
    ("file", ColType::Str),
    ("line", ColType::I64),
    ("module", ColType::Str),
];

const PROCESSES: &[(&str, ColType)] = &[
    ("trace", ColType::Str),
    ("program", ColType::Str),
    ("pid", ColType::I64),
    ("ppid", ColType::I64),
    ("records", ColType::I64),
    ("events", ColType::I64),
    ("allocations", ColType::I64),
    ("bytes", ColType::I64),
    ("first_time", ColType::I64),
    ("last_time", ColType::I64),
    ("complete", ColType::I32),
];

fn io(e: TableError) -> Error {
    Error::Io(std::io::Error::other(e))
}

/// Where the `events` table's rows go, a value at a time: a Parquet
/// [`Table`], or Arrow batches in memory.
pub trait Rows {
    /// Column `col`'s value: the kind `KINDS[kind]`.
    fn kind(&mut self, col: usize, kind: usize);
    /// Column `col`'s value (`None`: null).
    fn int(&mut self, col: usize, v: Option<i64>);
    fn uint(&mut self, col: usize, v: Option<u64>);
    /// Ends the row.
    fn end_row(&mut self) -> Result<(), Error>;
}

/// The kinds' names as Parquet values, made once.
static KIND_BYTES: std::sync::LazyLock<[parquet::data_type::ByteArray; 8]> =
    std::sync::LazyLock::new(|| KINDS.map(parquet::data_type::ByteArray::from));

impl<W: Write + Send + 'static> Rows for Table<W> {
    #[inline]
    fn kind(&mut self, col: usize, kind: usize) {
        self.bytes_value(col, Some(KIND_BYTES[kind].clone()));
    }
    #[inline]
    fn int(&mut self, col: usize, v: Option<i64>) {
        Table::int(self, col, v)
    }
    #[inline]
    fn uint(&mut self, col: usize, v: Option<u64>) {
        Table::uint(self, col, v)
    }
    #[inline]
    fn end_row(&mut self) -> Result<(), Error> {
        Table::end_row(self).map_err(io)
    }
}

/// The `events` table, filled as the heap view runs (an analysis of heap
/// steps), and what the other two tables need.
pub struct EventRows<T: Rows> {
    table: T,
    /// Each allocating site's stack number (1-based), in order of first use.
    stacks: FxHashMap<Site, u64>,
    sites: Vec<Site>,
    row: ProcessRow,
    /// The kinds written (bit `1 << k` for `KINDS[k]`); the rest are
    /// counted in the process row only.
    wanted: u8,
}

/// The `processes` row of a trace.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ProcessRow {
    pub trace: String,
    pub program: Option<String>,
    pub pid: Option<u64>,
    pub ppid: Option<u64>,
    pub records: u64,
    pub events: u64,
    pub allocations: u64,
    pub bytes: u64,
    pub first_time: Option<u64>,
    pub last_time: Option<u64>,
    pub complete: bool,
}

/// The `events` table as a Parquet file written to `out`.
pub fn parquet_events<W: Write + Send + 'static>(out: W) -> Result<Table<W>, Error> {
    Table::new(out, "events", EVENTS, GROUP_ROWS).map_err(io)
}

impl<T: Rows> EventRows<T> {
    /// Rows of every kind into `table`, of the trace named `trace`.
    pub fn new(table: T, trace: &str) -> Self {
        EventRows {
            table,
            stacks: FxHashMap::default(),
            sites: Vec::new(),
            wanted: u8::MAX,
            row: ProcessRow {
                trace: trace.to_string(),
                ..ProcessRow::default()
            },
        }
    }

    /// Only rows of the kinds whose bit is set (`1 << k` for `KINDS[k]`).
    pub fn of_kinds(mut self, wanted: u8) -> Self {
        self.wanted = wanted;
        self
    }

    fn stack(&mut self, site: Site) -> Option<i64> {
        if site == Site::default() {
            return None;
        }
        let next = self.sites.len() as u64 + 1;
        let id = *self.stacks.entry(site).or_insert(next);
        if id == next {
            self.sites.push(site);
        }
        Some(id as i64)
    }

    fn push(&mut self, step: &HeapStep<Born>) -> Result<(), Error> {
        let (kind, cx) = match &step.event {
            HeapEvent::Alloc { object, cx, .. } => {
                self.row.allocations += 1;
                self.row.bytes = self.row.bytes.saturating_add(object.size);
                (0, cx)
            }
            HeapEvent::Free { cx, .. } => (1, cx),
            HeapEvent::Displaced { cx, .. } => (2, cx),
            HeapEvent::Realloc { cx, .. } => (3, cx),
            HeapEvent::HeapCreate { cx } => (4, cx),
            HeapEvent::HeapDestroy { cx } => (5, cx),
            HeapEvent::ThreadCreate { cx } => (6, cx),
            HeapEvent::ThreadDestroy { cx } => (7, cx),
        };
        let cx = *cx;
        self.row.events += 1;
        self.row.first_time.get_or_insert(cx.time);
        self.row.last_time = Some(cx.time);
        if self.wanted & (1 << kind) == 0 {
            return Ok(());
        }
        let t = &mut self.table;
        t.kind(0, kind);
        t.int(1, Some(cx.time as i64));
        t.int(2, Some(cx.thread as i64));
        t.int(3, Some(cx.heap as i64));
        // size, address, old_address, object, site, lifetime
        let (size, address, old, object, lifetime) = match &step.event {
            HeapEvent::Alloc { object, .. } => (
                Some(object.size),
                Some(object.address),
                None,
                Some(object),
                None,
            ),
            // A free's address is its object's (join on `object`): written
            // only for a free of no live object, which has no other.
            HeapEvent::Free {
                address, object, ..
            } => (
                object.map(|o| o.size),
                object.is_none().then_some(*address),
                None,
                object.as_ref(),
                object.map(|o| cx.time.saturating_sub(o.extra.birth)),
            ),
            HeapEvent::Displaced { object, .. } => (
                Some(object.size),
                Some(object.address),
                None,
                Some(object),
                Some(cx.time.saturating_sub(object.extra.birth)),
            ),
            HeapEvent::Realloc {
                size,
                old,
                new,
                from,
                resized,
                ..
            } => (
                Some(*size),
                Some(*new),
                Some(*old),
                resized.as_ref().map(|(o, _)| o).or(from.as_ref()),
                None,
            ),
            _ => (None, None, None, None, None),
        };
        let site = object.map(|o| o.extra.site);
        let stack = site.and_then(|s| self.stack(s));
        let t = &mut self.table;
        t.int(4, size.map(|v| v as i64));
        t.uint(5, address);
        t.uint(6, old);
        t.int(7, object.map(|o| o.extra.id as i64));
        t.int(8, stack);
        t.int(9, lifetime.map(|v| v as i64));
        t.end_row()
    }

    /// Ends the `events` table: where its rows went, the allocating sites
    /// in stack-number order, and the process row so far.
    pub fn finish(self) -> (T, Vec<Site>, ProcessRow) {
        (self.table, self.sites, self.row)
    }
}

impl<T: Rows> Analysis<Heap<Born>> for EventRows<T> {
    type Report = ();

    #[inline]
    fn observe(&mut self, step: &HeapStep<Born>) -> Result<(), Error> {
        self.push(step)
    }

    fn finish(self) {}
}

/// The records of a trace counted, and its process note read (`tramp
/// record`'s `tramp:process pid= ppid=`): the rest of the `processes` row.
#[derive(Clone, Debug, Default)]
pub struct ProcessNotes {
    records: u64,
    pid: Option<u64>,
    ppid: Option<u64>,
}

impl ProcessNotes {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Analysis for ProcessNotes {
    type Report = ProcessNotes;

    #[inline]
    fn observe(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        self.records += 1;
        if rec.record_type().kind == RecordKind::Comment
            && let Some(Annotation::Process { pid, ppid, .. }) = rec
                .role(Role::Text)
                .and_then(|v| v.as_bytes())
                .and_then(Annotation::parse)
        {
            (self.pid, self.ppid) = (Some(pid), Some(ppid));
        }
        Ok(())
    }

    fn finish(self) -> ProcessNotes {
        self
    }
}

impl ProcessRow {
    /// The row with what the notes say.
    pub fn noted(mut self, notes: &ProcessNotes) -> ProcessRow {
        self.records = notes.records;
        (self.pid, self.ppid) = (notes.pid, notes.ppid);
        self
    }
}

/// Writes the `stacks` table: each site's frames, innermost first.
pub fn write_stacks<W: Write + Send + 'static>(
    out: W,
    sites: &[Site],
    names: &mut Names,
    stacks: bool,
) -> Result<(W, TableReport), Error> {
    let mut t = Table::new(out, "stacks", STACKS, GROUP_ROWS).map_err(io)?;
    for (i, site) in sites.iter().enumerate() {
        for (depth, f) in stack_of(names, site.resolved(stacks)).iter().enumerate() {
            t.int(0, Some(i as i64 + 1));
            t.int(1, Some(depth as i64));
            t.uint(2, Some(f.address));
            t.text(3, f.function.as_deref());
            t.text(4, f.file.as_deref());
            t.int(5, f.line.map(i64::from));
            t.text(6, f.module.as_deref());
            t.end_row().map_err(io)?;
        }
    }
    t.finish().map_err(io)
}

/// Writes the `processes` table's one row.
pub fn write_process<W: Write + Send + 'static>(
    out: W,
    p: &ProcessRow,
) -> Result<(W, TableReport), Error> {
    let mut t = Table::new(out, "processes", PROCESSES, GROUP_ROWS).map_err(io)?;
    let i = |v: u64| Some(v as i64);
    t.text(0, Some(&p.trace));
    t.text(1, p.program.as_deref());
    t.int(2, p.pid.map(|v| v as i64));
    t.int(3, p.ppid.map(|v| v as i64));
    t.int(4, i(p.records));
    t.int(5, i(p.events));
    t.int(6, i(p.allocations));
    t.int(7, i(p.bytes));
    t.int(8, p.first_time.map(|v| v as i64));
    t.int(9, p.last_time.map(|v| v as i64));
    t.int(10, Some(i64::from(p.complete)));
    t.end_row().map_err(io)?;
    t.finish().map_err(io)
}

/// What an export wrote: rows and bytes per table and column.
#[derive(Clone, Debug, Serialize)]
pub struct ExportReport {
    pub events: TableReport,
    pub stacks: TableReport,
    pub processes: TableReport,
    pub process: ProcessRow,
}

impl std::fmt::Display for ExportReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (name, t) in [
            ("events", &self.events),
            ("stacks", &self.stacks),
            ("processes", &self.processes),
        ] {
            writeln!(
                f,
                "{name}: {} rows in {} row groups, {} bytes",
                t.rows,
                t.row_groups,
                t.bytes()
            )?;
            for c in &t.columns {
                writeln!(
                    f,
                    "  {:<12} {:>12} bytes ({} before compression)",
                    c.column, c.compressed, c.uncompressed
                )?;
            }
        }
        Ok(())
    }
}
