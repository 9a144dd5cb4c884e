//! Cache requests from any trace, and simulation runs over them.
//!
//! A trace is read in one of three ways, chosen by [`Layout::detect`]:
//! libCacheSim's csv, its oracleGeneral binary layout (both through
//! [`tramp_cachesim::trace`]), or any tramp format through the record
//! model, where each record that names an object becomes one request:
//!
//! * heap traces (HATF, Meta-TF, tpack, …): the cache line holding the
//!   record's address — allocations, reallocations and frees write it (the
//!   allocator writes its bookkeeping there), loads read it, stores write
//!   it; line size `--line` (64 bytes by default), one line per request;
//! * object traces (PTF) as a persistent store's buffer pool: the object
//!   id — edge and data reads and root reads read it, object creation,
//!   edge and data writes write it; every object has size 1 byte (PTF
//!   gives no sizes), deletions do not drop buffers.
//!
//! * any trace, with `--key RECORD.FIELD[,RECORD.FIELD]`: the named fields
//!   of the named record name the object (a described trace's `IO.FILE,
//!   IO.PAGE`), `--write FIELD=VALUE` marks writes ([`Keys`]).
//!
//! Records without an address or object (comments, metadata, thread
//! events) are counted and skipped. With a CPU-cache hierarchy, each heap
//! request's byte address also goes through it.

use std::fmt;

use serde::Serialize;
use tramp_cachesim::cachegrind::Ref;
use tramp_cachesim::layouts;
use tramp_cachesim::sim::{Options, SimReport, Simulation, Sink};
use tramp_cachesim::trace::{CsvReader, OracleReader, TraceError, looks_like_csv};
use tramp_cachesim::{Op, Request};
use tramp_core::{Analysis, OpenOptions, Record, RecordKind, Role, Source};
use tramp_formats::Format;
use tramp_io::Progress;
use tramp_io::{FileOutput, Input};

/// Why requests could not be read.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error(transparent)]
    Tramp(#[from] tramp_core::Error),
    #[error("{0} traces have no object ids or addresses to cache (heap and object traces do)")]
    NoObjects(&'static str),
    #[error("{0}")]
    Skipped(tramp_core::Damage),
    #[error("{0} traces have no addresses for CPU caches (heap traces do)")]
    NoAddresses(&'static str),
    #[error("--key: {0}")]
    Keys(String),
    #[error(
        "--page splits libCacheSim's block requests; {0} traces are cut into lines with --line"
    )]
    Page(&'static str),
    #[error(
        "cannot tell the layout of `{0}`: name it with --format (csv, oracle, or a tramp format)"
    )]
    Unknown(String),
    #[error(
        "--time, --thread and --pid select from traces tramp reads as records; a libCacheSim \
         layout ({0}) is simulated as it is: cut it first with `tramp convert … --time`"
    )]
    Select(&'static str),
}

/// How a trace is read.
#[derive(Clone, Copy, Debug)]
pub enum Layout {
    /// libCacheSim csv.
    Csv,
    /// libCacheSim oracleGeneral.
    Oracle,
    /// libCacheSim vscsi (its version told by the first records).
    Vscsi,
    /// libCacheSim twr.
    Twr,
    /// libCacheSim lcs (its version in its header).
    Lcs,
    /// A tramp format.
    Tramp(Format),
}

/// One of libCacheSim's layouts: the one table from which `--format`
/// names, detection by name and `tramp formats`' list come.
#[derive(Clone, Copy, Debug)]
pub struct LayoutDesc {
    pub layout: Layout,
    /// The name `--format` takes first, and others it also takes.
    pub names: &'static [&'static str],
    /// Name endings that select it (compression aside).
    pub extensions: &'static [&'static str],
    pub about: &'static str,
}

/// libCacheSim's layouts, as `tramp cachesim` reads them (docs/formats/libcachesim.md).
pub const LAYOUTS: [LayoutDesc; 5] = [
    LayoutDesc {
        layout: Layout::Lcs,
        names: &["lcs"],
        extensions: &[".lcs"],
        about: "libCacheSim's lcs (versions 1 to 8, told by its header's magic)",
    },
    LayoutDesc {
        layout: Layout::Oracle,
        names: &["oracle", "oracleGeneral", "oraclegeneral"],
        extensions: &[".oracleGeneral", ".oracleGeneral.bin"],
        about: "libCacheSim's oracleGeneral: 24-byte records with next-access times",
    },
    LayoutDesc {
        layout: Layout::Vscsi,
        names: &["vscsi"],
        extensions: &[".vscsi"],
        about: "libCacheSim's vscsi block traces (versions 1 and 2)",
    },
    LayoutDesc {
        layout: Layout::Twr,
        names: &["twr"],
        extensions: &[".twr", ".twr.bin"],
        about: "Twitter's 20-byte cache records (libCacheSim's twr)",
    },
    LayoutDesc {
        layout: Layout::Csv,
        names: &["csv"],
        extensions: &[".csv"],
        about: "libCacheSim's csv: time, object, size[, next access] (a `#` header may name columns)",
    },
];

impl Layout {
    /// The layout named by `hint` (a name of [`LAYOUTS`], or a tramp
    /// format name), else detected: lcs's magic, a tramp format's magic
    /// bytes, a name ending of [`LAYOUTS`] (compression aside), csv text,
    /// then whatever tramp's detection says.
    pub fn detect(input: &Input, hint: Option<&str>) -> Result<Layout, Error> {
        if let Some(name) = hint {
            return match LAYOUTS.iter().find(|d| d.names.contains(&name)) {
                Some(d) => Ok(d.layout),
                None => Ok(Layout::Tramp(tramp_formats::parse(name)?)),
            };
        }
        if input.head.is_empty() {
            // Said, as tramp's own detection says it (not read as an empty
            // csv with no requests).
            return Err(tramp_formats::detect_input(input)
                .err()
                .map_or_else(|| Error::Unknown(input.name.clone()), Error::Tramp));
        }
        if input.head.starts_with(&layouts::LCS_MAGIC.to_le_bytes()) {
            return Ok(Layout::Lcs);
        }
        if let Some(f) = tramp_formats::ALL
            .into_iter()
            .find(|f| (f.sniff)(&input.head) == tramp_core::Sniff::Yes)
        {
            return Ok(Layout::Tramp(f));
        }
        let stem = tramp_io::Compression::strip_extension(&input.name);
        if let Some(d) = LAYOUTS
            .iter()
            .find(|d| d.extensions.iter().any(|e| stem.ends_with(e)))
        {
            return Ok(d.layout);
        }
        if looks_like_csv(&input.head) {
            return Ok(Layout::Csv);
        }
        tramp_formats::detect(&input.head, &input.name)
            .map(Layout::Tramp)
            .ok_or_else(|| Error::Unknown(input.name.clone()))
    }

    /// The name of a libCacheSim layout (from [`LAYOUTS`]); `None` for a
    /// tramp format.
    pub fn native_name(self) -> Option<&'static str> {
        LAYOUTS
            .iter()
            .find(|d| std::mem::discriminant(&d.layout) == std::mem::discriminant(&self))
            .map(|d| d.names[0])
    }

    /// Whether requests read this way carry next-access times.
    pub fn future_known(self, input: &Input) -> bool {
        match self {
            Layout::Oracle | Layout::Lcs => true,
            Layout::Csv => csv_has_next_access(&input.head),
            Layout::Vscsi | Layout::Twr | Layout::Tramp(_) => false,
        }
    }
}

/// Whether a csv's header or first data line has a next-access column.
fn csv_has_next_access(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(h) = line.strip_prefix('#') {
            if let Some(c) = tramp_cachesim::trace::Columns::from_header(h) {
                return c.next_access.is_some();
            }
            continue;
        }
        return line.split(',').count() >= 4;
    }
    false
}

/// The request a tramp record makes, if any: see the crate docs. Decided
/// by the record's kind, whatever the format: heap events, loads and
/// stores touch the cache line of their address; object events touch
/// their object (a Meta-TF object trace is a buffer pool like PTF's).
pub fn request_of(rec: &Record<'_>, line: u64) -> Option<Request> {
    let kind = rec.record_type().kind;
    let by_address = match kind {
        RecordKind::Alloc | RecordKind::Free | RecordKind::Realloc(_) => Some(Op::Write),
        RecordKind::Load | RecordKind::Fetch => Some(Op::Read),
        RecordKind::Store | RecordKind::Modify => Some(Op::Write),
        _ => None,
    };
    if let Some(op) = by_address {
        let addr = rec.role_u64(Role::Address)?;
        if addr == 0 {
            return None;
        }
        return Some(Request {
            op,
            time: rec.role_u64(Role::Time).unwrap_or(0),
            ..Request::read(addr / line.max(1), line.max(1).min(u32::MAX as u64) as u32)
        });
    }
    let op = match kind {
        RecordKind::EdgeRead | RecordKind::DataRead | RecordKind::RootGet => Op::Read,
        RecordKind::ObjectCreate | RecordKind::EdgeWrite | RecordKind::DataWrite => Op::Write,
        _ => return None,
    };
    let id = rec.role_u64(Role::ObjectId)?;
    Some(Request {
        op,
        time: rec.role_u64(Role::Time).unwrap_or(0),
        ..Request::read(id, 1)
    })
}

/// What a record does to CPU caches, if it carries a memory address:
/// fetches fetch, loads and modifies read (cachegrind counts a modify once,
/// as a read), stores and heap events write (the allocator writes its
/// bookkeeping).
fn memory_ref(kind: RecordKind) -> Option<Ref> {
    match kind {
        RecordKind::Fetch => Some(Ref::Fetch),
        RecordKind::Load | RecordKind::Modify => Some(Ref::Read),
        RecordKind::Alloc | RecordKind::Free | RecordKind::Realloc(_) | RecordKind::Store => {
            Some(Ref::Write)
        }
        _ => None,
    }
}

/// Fields that name a request's object, for traces whose records carry no
/// object id or address role (described traces, say): `RECORD.FIELD` or
/// `RECORD.F1,RECORD.F2` (a pair names one object), and optionally
/// `FIELD=VALUE` marking writes. Records of other types are skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keys {
    pub record: String,
    pub fields: Vec<String>,
    pub write: Option<(String, u64)>,
}

impl Keys {
    /// Parses `RECORD.FIELD[,RECORD.FIELD]` and an optional `FIELD=VALUE`.
    pub fn parse(key: &str, write: Option<&str>) -> Result<Keys, Error> {
        let bad = |what: String| Error::Keys(what);
        let mut record = None;
        let mut fields = Vec::new();
        for part in key.split(',').map(str::trim) {
            let (r, f) = part
                .split_once('.')
                .ok_or_else(|| bad(format!("{part:?} is not RECORD.FIELD")))?;
            if record.is_some_and(|x: &str| x != r) {
                return Err(bad("the key's fields must be of one record".into()));
            }
            record = Some(r);
            fields.push(f.to_string());
        }
        if fields.is_empty() || fields.len() > 2 {
            return Err(bad("a key is one or two fields".into()));
        }
        let write = match write {
            Some(w) => {
                let (f, v) = w
                    .split_once('=')
                    .ok_or_else(|| bad(format!("{w:?} is not FIELD=VALUE")))?;
                let v = v
                    .trim()
                    .parse::<u64>()
                    .map_err(|_| bad(format!("{v:?} is not a number")))?;
                Some((f.trim().to_string(), v))
            }
            None => None,
        };
        Ok(Keys {
            record: record.expect("one field at least").to_string(),
            fields,
            write,
        })
    }
}

/// How records become requests besides their roles.
#[derive(Clone, Debug, Default)]
pub struct Mapping {
    /// Cache-line size for heap addresses (0: 64).
    pub line: u64,
    /// Fields naming objects, when the records have no roles for it.
    pub keys: Option<Keys>,
    /// A TRAMP format description's text, for described traces.
    pub desc: Option<String>,
    /// Simulate a trace whose addresses are synthetic (a heaptrack
    /// file's) all the same; refused otherwise.
    pub synthetic_ok: bool,
    /// Split each request of a libCacheSim layout into the fixed pages of
    /// this many bytes it touches (its object id a byte offset; vscsi's a
    /// 512-byte sector number).
    pub page: Option<u64>,
    /// The part of the trace simulated (docs/select.md), and its time
    /// range resolved (`TimeRange::resolve`), for the reader's skipping.
    pub select: tramp_core::select::Selection,
    pub window: Option<(u64, u64)>,
}

/// Keys resolved against a schema: record type, field indices, write test.
struct ResolvedKeys {
    ty: usize,
    fields: Vec<usize>,
    write: Option<(usize, u64)>,
    pairs: rustc_hash::FxHashMap<(u64, u64), u64>,
}

impl ResolvedKeys {
    fn new(k: &Keys, schema: &tramp_core::Schema) -> Result<ResolvedKeys, Error> {
        let t = schema.type_named(&k.record).ok_or_else(|| {
            Error::Keys(format!(
                "no record `{}` (records: {})",
                k.record,
                schema
                    .types
                    .iter()
                    .map(|t| t.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        let field = |name: &str| {
            t.field_index(name).ok_or_else(|| {
                Error::Keys(format!(
                    "record `{}` has no field `{name}` (fields: {})",
                    t.name,
                    t.fields
                        .iter()
                        .map(|f| f.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })
        };
        Ok(ResolvedKeys {
            ty: t.index,
            fields: k
                .fields
                .iter()
                .map(|f| field(f))
                .collect::<Result<_, _>>()?,
            write: k
                .write
                .as_ref()
                .map(|(f, v)| field(f).map(|i| (i, *v)))
                .transpose()?,
            pairs: Default::default(),
        })
    }

    /// The request a record makes (exact ids: a pair is numbered once).
    fn request(&mut self, rec: &Record<'_>) -> Option<Request> {
        if rec.record_type().index != self.ty {
            return None;
        }
        let v = |i: usize| rec.get(i).and_then(|v| v.as_u64());
        let id = match self.fields.as_slice() {
            [a] => v(*a)?,
            [a, b] => {
                let key = (v(*a)?, v(*b)?);
                let next = self.pairs.len() as u64;
                *self.pairs.entry(key).or_insert(next)
            }
            _ => return None,
        };
        let write = self.write.is_some_and(|(i, val)| v(i) == Some(val));
        Some(Request {
            op: if write { Op::Write } else { Op::Read },
            time: rec.role_u64(Role::Time).unwrap_or(0),
            ..Request::read(id, 1)
        })
    }
}

/// Counts of a run over a tramp trace.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Fed {
    pub records: u64,
    pub requests: u64,
    /// Records that name no object or address.
    pub skipped: u64,
}

impl fmt::Display for Fed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} records: {} requests, {} without an object",
            self.records, self.requests, self.skipped
        )
    }
}

/// Feeds a sink from tramp records.
struct Feed<'a, S: Sink> {
    sim: &'a mut S,
    lcs: &'a mut Option<LcsOut>,
    line: u64,
    keys: Option<ResolvedKeys>,
    fed: Fed,
}

impl<S: Sink> Analysis for Feed<'_, S> {
    type Report = Fed;
    fn observe(&mut self, rec: &Record<'_>) -> Result<(), tramp_core::Error> {
        self.fed.records += 1;
        let req = match &mut self.keys {
            Some(k) => k.request(rec),
            None => request_of(rec, self.line),
        };
        match req {
            Some(r) => {
                self.fed.requests += 1;
                self.sim.access(r);
                if let Some(o) = self.lcs {
                    o.write(&r);
                }
                if self.sim.has_cpu()
                    && let Some(r) = memory_ref(rec.record_type().kind)
                    && let Some(addr) = rec.role_u64(Role::Address)
                {
                    // A heap event's size is its block's, not an access's.
                    let size = match r {
                        Ref::Write if rec.record_type().kind != RecordKind::Store => None,
                        _ => rec.role_u64(Role::Size),
                    };
                    self.sim.access_memory(r, addr, size);
                }
            }
            None => self.fed.skipped += 1,
        }
        Ok(())
    }
    fn finish(self) -> Fed {
        self.fed
    }
}

/// A finished run: the report covers every request before the damage, if
/// the trace was damaged.
pub struct Outcome {
    pub report: SimReport,
    /// For tramp traces: records read and skipped.
    pub fed: Option<Fed>,
    /// Why reading stopped early.
    pub damage: Option<Error>,
}

/// Simulates `opts` over `input` read as `layout`; heap addresses map to
/// lines of `line` bytes.
pub fn simulate(
    input: Input,
    layout: Layout,
    opts: &Options,
    mapping: &Mapping,
    lcs: Option<FileOutput>,
) -> Result<Outcome, Error> {
    let mut lcs = lcs.map(LcsOut::new).transpose()?;
    let mut opts = opts.clone();
    opts.future_known = layout.future_known(&input);
    if opts.cpu.is_some() {
        match layout {
            Layout::Csv => return Err(Error::NoAddresses("csv")),
            Layout::Oracle => return Err(Error::NoAddresses("oracleGeneral")),
            Layout::Vscsi => return Err(Error::NoAddresses("vscsi")),
            Layout::Twr => return Err(Error::NoAddresses("twr")),
            Layout::Lcs => return Err(Error::NoAddresses("lcs")),
            // Decided by the schema's kinds, once it is read (below).
            Layout::Tramp(_) => {}
        }
    }
    refuse_select(mapping, layout)?;
    let page = page_of(mapping, layout)?;
    // Split requests are pages of one size, and the next-access times
    // the trace gives are for whole requests: computed again for OPT.
    if page.is_some() {
        opts.future_known = false;
    }
    let mut sim = Simulation::new(&opts);
    let (fed, damage) = feed(input, layout, mapping, page, &mut sim, &mut lcs)?;
    // What waited for the whole trace (OPT's pass, the curve's sizes).
    let report = {
        let _stage = tramp_io::progress::Stage::start(
            "finishing the simulation (OPT and the miss-ratio curve need the whole trace)",
        );
        sim.finish()
    };
    // The requests before any damage are written as they were simulated.
    if let Some(o) = lcs {
        o.finish()?;
    }
    Ok(Outcome {
        report,
        fed,
        damage,
    })
}

/// A selection (`--time`, `--thread`, `--pid`) of a libCacheSim layout,
/// refused: those are cut with `tramp convert` (docs/select.md).
fn refuse_select(mapping: &Mapping, layout: Layout) -> Result<(), Error> {
    match (mapping.select.is_all(), layout.native_name()) {
        (false, Some(name)) => Err(Error::Select(name)),
        _ => Ok(()),
    }
}

/// The page size a request is split by (`--page`), checked against the
/// layout: libCacheSim's vscsi counts 512-byte sectors.
fn page_of(mapping: &Mapping, layout: Layout) -> Result<Option<(u64, u64)>, Error> {
    Ok(match (mapping.page, layout) {
        (None, _) => None,
        (Some(_), Layout::Tramp(f)) => return Err(Error::Page(f.name)),
        (Some(p), Layout::Vscsi) => Some((512, p)),
        (Some(p), _) => Some((1, p)),
    })
}

/// Reads every request of `input` (as `layout`, through `mapping`, split
/// into `--page` pages) into `sink`: what was fed from tramp records, and
/// why reading stopped early (the sink holds every request before it).
pub fn feed_requests<S: Sink>(
    input: Input,
    layout: Layout,
    mapping: &Mapping,
    sink: &mut S,
) -> Result<(Option<Fed>, Option<Error>), Error> {
    refuse_select(mapping, layout)?;
    feed(
        input,
        layout,
        mapping,
        page_of(mapping, layout)?,
        sink,
        &mut None,
    )
}

/// [`feed_requests`], each request also written to `lcs` if given, each also written to `lcs` if given: what was fed from tramp
/// records, and why reading stopped early (the sink holds every request
/// before it).
fn feed<S: Sink>(
    input: Input,
    layout: Layout,
    mapping: &Mapping,
    page: Option<(u64, u64)>,
    sim: &mut S,
    lcs: &mut Option<LcsOut>,
) -> Result<(Option<Fed>, Option<Error>), Error> {
    let line = if mapping.line == 0 { 64 } else { mapping.line };
    Ok(match layout {
        Layout::Csv => (None, {
            let mut progress = Progress::of(&input);
            let d = stream(CsvReader::new(input.reader), sim, &mut progress, page, lcs);
            progress.finish();
            d
        }),
        Layout::Oracle => (None, {
            let mut progress = Progress::of(&input);
            let d = stream(
                OracleReader::new(input.reader),
                sim,
                &mut progress,
                page,
                lcs,
            );
            progress.finish();
            d
        }),
        Layout::Vscsi | Layout::Twr | Layout::Lcs => (None, {
            let mut progress = Progress::of(&input);
            let d = match binary_reader(layout, input) {
                Ok(mut reader) => {
                    // In batches: see `LayoutReader::fill_batch`.
                    let mut batch = Vec::with_capacity(4096);
                    loop {
                        batch.clear();
                        let more = reader.fill_batch(&mut batch, 4096);
                        let reqs = batch.iter().map(|r| Ok(*r));
                        if let Some(e) = stream(reqs, sim, &mut progress, page, lcs) {
                            break Some(e);
                        }
                        match more {
                            Ok(true) => {}
                            Ok(false) => break None,
                            Err(e) => break Some(e.into()),
                        }
                    }
                }
                Err(e) => Some(e),
            };
            progress.finish();
            d
        }),
        Layout::Tramp(format) => {
            let open = OpenOptions {
                desc: mapping.desc.clone(),
                time_window: mapping.window,
                ..OpenOptions::default()
            };
            // Decoded on the second core while the caches run.
            let mut opened = tramp_formats::pipeline::open(input, Some(format), &open, true)?;
            if !mapping.select.is_all() {
                opened.source = Box::new(tramp_core::select::Selected::new(
                    opened.source,
                    mapping.select.clone(),
                    mapping.window,
                )?);
            }
            if !mapping.synthetic_ok {
                opened.refuse_synthetic("cachesim");
            }
            // What the records hold decides what can be cached.
            let domains = opened.source.schema().domains();
            if !domains.requests() && mapping.keys.is_none() {
                return Err(Error::NoObjects(format.name));
            }
            if sim.has_cpu() && !domains.addresses() {
                return Err(Error::NoAddresses(format.name));
            }
            let keys = match &mapping.keys {
                Some(k) => Some(ResolvedKeys::new(k, opened.source.schema())?),
                None => None,
            };
            let mut feed = Feed {
                sim,
                lcs,
                line,
                keys,
                fed: Fed::default(),
            };
            let run = opened.run(&mut [&mut feed], Vec::new());
            let fed = feed.finish();
            let skipped = run.damage().map(Error::Skipped);
            (
                Some(fed),
                run.stop.map(|s| Error::Tramp(into_error(s))).or(skipped),
            )
        }
    })
}

/// The trace's length and working set, by a pass of its own (for sizes
/// and a warm-up given as fractions of them).
pub fn working_set(
    input: Input,
    layout: Layout,
    unit: tramp_cachesim::Unit,
    mapping: &Mapping,
) -> Result<tramp_cachesim::sim::WorkingSet, Error> {
    let out = simulate(input, layout, &Options::census(unit), mapping, None)?;
    Ok(out.report.working_set.unwrap_or_default())
}

/// The requests simulated, written as libCacheSim's lcs (version 3): the
/// clock time of each is its number (the trace's times are not carried
/// through the simulation), and the next-access times are computed again
/// at the end, by one backward pass over the file.
struct LcsOut {
    writer: layouts::LcsWriter<std::fs::File>,
    out: FileOutput,
    n: u64,
    error: Option<std::io::Error>,
}

impl LcsOut {
    fn new(mut out: FileOutput) -> Result<LcsOut, Error> {
        let file = out.file().try_clone().map_err(TraceError::Io)?;
        Ok(LcsOut {
            writer: layouts::LcsWriter::new(file).map_err(TraceError::Io)?,
            out,
            n: 0,
            error: None,
        })
    }

    fn write(&mut self, r: &Request) {
        if self.error.is_none()
            && let Err(e) = self.writer.write(self.n.min(u32::MAX as u64) as u32, r)
        {
            self.error = Some(e);
        }
        self.n += 1;
    }

    fn finish(self) -> Result<(), Error> {
        if let Some(e) = self.error {
            return Err(TraceError::Io(e).into());
        }
        let (mut file, _) = self.writer.finish().map_err(TraceError::Io)?;
        layouts::fill_next_access(
            &mut file,
            layouts::Layout::Lcs(layouts::LCS_WRITTEN),
            layouts::LCS_HEADER as u64,
        )
        .map_err(TraceError::Io)?;
        self.out.finish().map_err(TraceError::Io)?;
        Ok(())
    }
}

fn into_error(s: tramp_core::Stop) -> tramp_core::Error {
    match s {
        tramp_core::Stop::Read(e)
        | tramp_core::Stop::Analysis(e)
        | tramp_core::Stop::Write(e)
        | tramp_core::Stop::Finish(e) => e,
    }
}

/// The requests of a libCacheSim binary layout: the version told by the
/// first records (vscsi) or read from the header (lcs).
fn binary_reader(
    layout: Layout,
    mut input: Input,
) -> Result<layouts::LayoutReader<Box<dyn std::io::BufRead + Send>>, Error> {
    let (l, start) = match layout {
        Layout::Vscsi => {
            let v = layouts::vscsi_version(&input.head).ok_or_else(|| {
                TraceError::Header(format!(
                    "{}: not vscsi: the first two records name neither version 1 nor 2 (or the file is shorter than 80 bytes)",
                    input.name
                ))
            })?;
            (layouts::Layout::Vscsi(v), 0)
        }
        Layout::Twr => (layouts::Layout::Twr, 0),
        _ => {
            let mut head = vec![0u8; layouts::LCS_HEADER];
            let mut got = 0;
            while got < head.len() {
                match input
                    .reader
                    .read(&mut head[got..])
                    .map_err(TraceError::Io)?
                {
                    0 => break,
                    n => got += n,
                }
            }
            head.truncate(got);
            let v = layouts::lcs_version(&head)
                .map_err(|e| TraceError::Header(format!("{}: {e}", input.name)))?;
            (layouts::Layout::Lcs(v), layouts::LCS_HEADER as u64)
        }
    };
    Ok(layouts::LayoutReader::new(input.reader, l, start))
}

/// Feeds requests to the simulation; with `page` (a sector's bytes, a
/// page's bytes) each as the pages it touches.
fn stream<S: Sink>(
    reqs: impl Iterator<Item = Result<Request, TraceError>>,
    sim: &mut S,
    progress: &mut Progress,
    page: Option<(u64, u64)>,
    lcs: &mut Option<LcsOut>,
) -> Option<Error> {
    let mut split = Vec::new();
    for r in reqs {
        match r {
            Ok(r) => {
                match page {
                    None => {
                        sim.access(r);
                        if let Some(o) = lcs.as_mut() {
                            o.write(&r);
                        }
                    }
                    Some((unit, bytes)) => {
                        layouts::pages(&r, unit, bytes, &mut split);
                        for p in &split {
                            sim.access(*p);
                            if let Some(o) = lcs.as_mut() {
                                o.write(p);
                            }
                        }
                    }
                }
                progress.record(sim.requests());
            }
            Err(e) => return Some(e.into()),
        }
    }
    None
}
