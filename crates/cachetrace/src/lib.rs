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
//! Records without an address or object (comments, metadata, thread
//! events) are counted and skipped. With a CPU-cache hierarchy, each heap
//! request's byte address also goes through it.

use std::fmt;

use serde::Serialize;
use tramp_cachesim::sim::{Options, SimReport, Simulation};
use tramp_cachesim::trace::{CsvReader, OracleReader, TraceError, looks_like_csv};
use tramp_cachesim::{Op, Request};
use tramp_core::io::Input;
use tramp_core::{Analysis, Domain, OpenOptions, Progress, Record, RecordKind, Role, drive};
use tramp_formats::Format;

/// Why requests could not be read.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error(transparent)]
    Tramp(#[from] tramp_core::Error),
    #[error("{0} traces have no object ids or addresses to cache (heap and object traces do)")]
    NoObjects(&'static str),
    #[error("{count} damaged stretches skipped ({bytes} bytes); the first: {first}")]
    Skipped {
        count: u64,
        bytes: u64,
        first: String,
    },
    #[error("{0} traces have no addresses for CPU caches (heap traces do)")]
    NoAddresses(&'static str),
    #[error(
        "cannot tell the layout of `{0}`: name it with --format (csv, oracle, or a tramp format)"
    )]
    Unknown(String),
}

/// How a trace is read.
#[derive(Clone, Copy, Debug)]
pub enum Layout {
    /// libCacheSim csv.
    Csv,
    /// libCacheSim oracleGeneral.
    Oracle,
    /// A tramp format.
    Tramp(Format),
}

impl Layout {
    /// The layout named by `hint` (`csv`, `oracle`/`oracleGeneral`, or a
    /// tramp format name), else detected: a tramp format's magic bytes, a
    /// name ending in `.oracleGeneral` or `.oracleGeneral.bin` (compression
    /// aside), csv text, then whatever tramp's detection says.
    pub fn detect(input: &Input, hint: Option<&str>) -> Result<Layout, Error> {
        match hint {
            Some("csv") => return Ok(Layout::Csv),
            Some("oracle" | "oracleGeneral" | "oraclegeneral") => return Ok(Layout::Oracle),
            Some(name) => return Ok(Layout::Tramp(tramp_formats::parse(name)?)),
            None => {}
        }
        if let Some(f) = tramp_formats::ALL
            .into_iter()
            .find(|f| (f.sniff)(&input.head) == tramp_core::Sniff::Yes)
        {
            return Ok(Layout::Tramp(f));
        }
        let stem = tramp_core::io::Compression::strip_extension(&input.name);
        if stem.ends_with(".oracleGeneral") || stem.ends_with(".oracleGeneral.bin") {
            return Ok(Layout::Oracle);
        }
        if stem.ends_with(".csv") || looks_like_csv(&input.head) {
            return Ok(Layout::Csv);
        }
        tramp_formats::detect(&input.head, &input.name)
            .map(Layout::Tramp)
            .ok_or_else(|| Error::Unknown(input.name.clone()))
    }

    /// Whether requests read this way carry next-access times.
    pub fn future_known(self, input: &Input) -> bool {
        match self {
            Layout::Oracle => true,
            Layout::Csv => csv_has_next_access(&input.head),
            Layout::Tramp(_) => false,
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

/// The request a tramp record makes, if any: see the crate docs.
pub fn request_of(rec: &Record<'_>, domain: Domain, line: u64) -> Option<Request> {
    let kind = rec.record_type().kind;
    match domain {
        Domain::Heap => {
            let op = match kind {
                RecordKind::Alloc | RecordKind::Free | RecordKind::Realloc(_) => Op::Write,
                RecordKind::Load => Op::Read,
                RecordKind::Store => Op::Write,
                _ => return None,
            };
            let addr = rec.role_u64(Role::Address)?;
            if addr == 0 {
                return None;
            }
            Some(Request {
                op,
                ..Request::read(addr / line.max(1), line.max(1).min(u32::MAX as u64) as u32)
            })
        }
        Domain::Objects => {
            let op = match kind {
                RecordKind::EdgeRead | RecordKind::DataRead | RecordKind::RootGet => Op::Read,
                RecordKind::ObjectCreate | RecordKind::EdgeWrite | RecordKind::DataWrite => {
                    Op::Write
                }
                _ => return None,
            };
            let id = rec.role_u64(Role::ObjectId)?;
            Some(Request {
                op,
                ..Request::read(id, 1)
            })
        }
        Domain::Spans => None,
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

/// Feeds a simulation from tramp records.
struct Feed<'a> {
    sim: &'a mut Simulation,
    domain: Domain,
    line: u64,
    fed: Fed,
}

impl Analysis for Feed<'_> {
    type Report = Fed;
    fn observe(&mut self, rec: &Record<'_>) -> Result<(), tramp_core::Error> {
        self.fed.records += 1;
        match request_of(rec, self.domain, self.line) {
            Some(r) => {
                self.fed.requests += 1;
                self.sim.access(r);
                if self.domain == Domain::Heap
                    && self.sim.has_cpu()
                    && let Some(addr) = rec.role_u64(Role::Address)
                {
                    self.sim.access_address(addr);
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
pub fn simulate(input: Input, layout: Layout, opts: &Options, line: u64) -> Result<Outcome, Error> {
    let mut opts = opts.clone();
    opts.future_known = layout.future_known(&input);
    if opts.cpu.is_some() {
        match layout {
            Layout::Csv => return Err(Error::NoAddresses("csv")),
            Layout::Oracle => return Err(Error::NoAddresses("oracleGeneral")),
            Layout::Tramp(f) if f.domain != Domain::Heap => return Err(Error::NoAddresses(f.name)),
            Layout::Tramp(_) => {}
        }
    }
    let mut sim = Simulation::new(&opts);
    let mut progress = Progress::of(&input);
    let (fed, damage) = match layout {
        Layout::Csv => (
            None,
            stream(CsvReader::new(input.reader), &mut sim, &mut progress),
        ),
        Layout::Oracle => (
            None,
            stream(OracleReader::new(input.reader), &mut sim, &mut progress),
        ),
        Layout::Tramp(format) => {
            if format.domain == Domain::Spans {
                return Err(Error::NoObjects(format.name));
            }
            let mut source = (format.open)(input.reader, &OpenOptions::default())?;
            let mut feed = Feed {
                sim: &mut sim,
                domain: format.domain,
                line,
                fed: Fed::default(),
            };
            let run = drive(&mut *source, &mut [&mut feed], Vec::new(), &mut progress);
            let fed = feed.finish();
            let skipped = (run.warning_count > 0).then(|| Error::Skipped {
                count: run.warning_count,
                bytes: run.warnings.iter().map(|w| w.skipped).sum(),
                first: run
                    .warnings
                    .first()
                    .map(|w| w.to_string())
                    .unwrap_or_default(),
            });
            (
                Some(fed),
                run.stop.map(|s| Error::Tramp(into_error(s))).or(skipped),
            )
        }
    };
    progress.finish();
    Ok(Outcome {
        report: sim.finish(),
        fed,
        damage,
    })
}

fn into_error(s: tramp_core::Stop) -> tramp_core::Error {
    match s {
        tramp_core::Stop::Read(e)
        | tramp_core::Stop::Analysis(e)
        | tramp_core::Stop::Write(e)
        | tramp_core::Stop::Finish(e) => e,
    }
}

fn stream(
    reqs: impl Iterator<Item = Result<Request, TraceError>>,
    sim: &mut Simulation,
    progress: &mut Progress,
) -> Option<Error> {
    for r in reqs {
        match r {
            Ok(r) => {
                sim.access(r);
                progress.record(sim.requests());
            }
            Err(e) => return Some(e.into()),
        }
    }
    None
}
