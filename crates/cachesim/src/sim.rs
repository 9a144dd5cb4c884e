//! One simulation run: the caches asked for, the LRU curve if asked, fed
//! by one pass over a stream of requests, finishing into one report.
//!
//! Belady's OPT needs each request's next-access time. When the trace
//! carries them (libCacheSim's oracleGeneral, a csv with a next-access
//! column) OPT streams like the others; otherwise the requests are kept in
//! memory (24 bytes each) and OPT runs at the end, after one backward pass
//! fills the times in.

use std::fmt;

use rustc_hash::FxHashSet;
use serde::Serialize;

use crate::cache::{Cache, Unit};
use crate::cachegrind::{Cachegrind, CachegrindReport, Ref};
use crate::cpu::{Hierarchy, HierarchyReport, SpecError};
use crate::mini::{MiniReport, Miniature};
use crate::mrc::{MrcReport, StackDistances};
use crate::plot::curves_svg;
use crate::policy::PolicySpec;
use crate::request::{Request, fill_next_access};
use crate::sweep::{Sweep, SweepReport};

/// What to simulate.
#[derive(Clone, Debug)]
pub struct Options {
    pub policies: Vec<PolicySpec>,
    /// Capacities, in `unit`; empty: only the LRU curve.
    pub sizes: Vec<u64>,
    pub unit: Unit,
    /// Compute the LRU miss-ratio curve.
    pub mrc: bool,
    /// SHARDS sampling rate for the curve (None or 1: exact).
    pub shards: Option<f64>,
    /// Whether the requests carry next-access times.
    pub future_known: bool,
    /// A CPU-cache model fed by addresses ([`Simulation::access_memory`]).
    pub cpu: Option<CpuModel>,
    /// Threads for the caches (None: one per core).
    pub threads: Option<usize>,
    /// Requests that warm the caches (and the curve's stack) before
    /// counting starts.
    pub warmup: u64,
    /// Count the working set (distinct objects and their bytes) as well.
    pub census: bool,
    /// Curves of other policies by miniature simulation.
    pub curves: Option<Curves>,
}

/// Miss-ratio curves of any policy ([`Miniature`]).
#[derive(Clone, Debug)]
pub struct Curves {
    pub policies: Vec<PolicySpec>,
    /// The curve's points (full sizes).
    pub sizes: Vec<u64>,
    /// Sampling rate (Waldspurger et al. use 0.01 and 0.001).
    pub rate: f64,
    /// Also simulate every point in full, for the error.
    pub check: bool,
}

impl Options {
    /// Only what needs nothing but the requests: the working set.
    pub fn census(unit: Unit) -> Options {
        Options {
            policies: Vec::new(),
            sizes: Vec::new(),
            unit,
            mrc: false,
            shards: None,
            future_known: false,
            cpu: None,
            threads: Some(1),
            warmup: 0,
            census: true,
            curves: None,
        }
    }
}

/// What a trace asks of a cache: its length and working set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct WorkingSet {
    pub requests: u64,
    /// Distinct objects, and the bytes of each at its first request (as
    /// libCacheSim's `cal_working_set_size` counts).
    pub objects: u64,
    pub bytes: u64,
}

impl WorkingSet {
    /// In a cache's unit.
    pub fn size(&self, unit: Unit) -> u64 {
        match unit {
            Unit::Objects => self.objects,
            Unit::Bytes => self.bytes,
        }
    }
}

/// Counts the working set as requests go by.
#[derive(Default)]
struct Census {
    seen: FxHashSet<u64>,
    ws: WorkingSet,
}

/// The CPU caches a run feeds with memory accesses.
#[derive(Clone, Debug)]
pub enum CpuModel {
    /// An inclusive hierarchy with latencies: every access goes through it
    /// by its address alone.
    Hierarchy(Hierarchy),
    /// valgrind cachegrind's I1, D1 and LL: fetches, reads and writes apart,
    /// with their sizes.
    Cachegrind(Box<Cachegrind>),
}

/// `cachegrind:I1=…:D1=…:LL=…` ([`Cachegrind`]), else a hierarchy
/// ([`Hierarchy`]'s text).
impl std::str::FromStr for CpuModel {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.trim_start().starts_with("cachegrind") {
            Ok(CpuModel::Cachegrind(Box::new(s.parse()?)))
        } else {
            Ok(CpuModel::Hierarchy(s.parse()?))
        }
    }
}

/// What the CPU caches saw.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum CpuReport {
    Hierarchy(HierarchyReport),
    Cachegrind(CachegrindReport),
}

impl fmt::Display for CpuReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CpuReport::Hierarchy(h) => {
                writeln!(f, "CPU caches (inclusive):")?;
                write!(f, "{h}")
            }
            CpuReport::Cachegrind(c) => write!(f, "{c}"),
        }
    }
}

/// Where a trace's requests go: a whole [`Simulation`], one [`Cache`]
/// driven request by request (the Python package's `Cache.process`), or
/// a filter that passes on what another cache missed.
pub trait Sink {
    /// Feeds one request.
    fn access(&mut self, req: Request);
    /// Feeds one memory access of `size` bytes (absent: one) to CPU
    /// caches, where the sink has them.
    fn access_memory(&mut self, _r: Ref, _addr: u64, _size: Option<u64>) {}
    /// Whether memory accesses are wanted ([`Sink::access_memory`]).
    fn has_cpu(&self) -> bool {
        false
    }
    /// Requests fed so far.
    fn requests(&self) -> u64;
}

impl Sink for Simulation {
    #[inline]
    fn access(&mut self, req: Request) {
        Simulation::access(self, req)
    }
    #[inline]
    fn access_memory(&mut self, r: Ref, addr: u64, size: Option<u64>) {
        Simulation::access_memory(self, r, addr, size)
    }
    fn has_cpu(&self) -> bool {
        Simulation::has_cpu(self)
    }
    fn requests(&self) -> u64 {
        Simulation::requests(self)
    }
}

impl Sink for Cache {
    #[inline]
    fn access(&mut self, req: Request) {
        Cache::access(self, &req);
    }
    fn requests(&self) -> u64 {
        self.stats().requests()
    }
}

/// A run in progress.
pub struct Simulation {
    online: Sweep,
    offline: Option<(Sweep, Vec<Request>)>,
    order: Vec<PolicySpec>,
    mrc: Option<StackDistances>,
    sizes: Vec<u64>,
    requests: u64,
    cpu: Option<CpuModel>,
    warmup: u64,
    census: Option<Census>,
    mini: Option<Miniature>,
    /// Caches of the online sweep that are the table's (the rest simulate
    /// the curves' points in full).
    table_caches: usize,
}

impl Simulation {
    pub fn new(opts: &Options) -> Simulation {
        let (late, now): (Vec<PolicySpec>, Vec<PolicySpec>) = opts
            .policies
            .iter()
            .cloned()
            .partition(|p| p.needs_future() && !opts.future_known);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = opts.threads.unwrap_or(cores);
        let sweep =
            |p: &[PolicySpec]| Sweep::with_threads(p, &opts.sizes, opts.unit, threads, opts.warmup);
        // The table's caches, then the curves' points in full when checked.
        let mut caches: Vec<Cache> = now
            .iter()
            .flat_map(|p| opts.sizes.iter().map(move |&s| (p, s)))
            .map(|(p, s)| Cache::of(p, s, opts.unit).with_warmup(opts.warmup))
            .collect();
        let table_caches = caches.len();
        if let Some(c) = opts.curves.as_ref().filter(|c| c.check) {
            for p in &c.policies {
                for &s in &c.sizes {
                    caches.push(Cache::of(p, s, opts.unit).with_warmup(opts.warmup));
                }
            }
        }
        let online = Sweep::of_caches(caches, opts.unit, threads);
        let offline = (!late.is_empty()).then(|| (sweep(&late), Vec::new()));
        Simulation {
            online,
            table_caches,
            census: opts.census.then(Census::default),
            mini: opts
                .curves
                .as_ref()
                .map(|c| Miniature::new(&c.policies, &c.sizes, opts.unit, c.rate, opts.warmup)),
            offline,
            order: opts.policies.clone(),
            mrc: (opts.mrc || (opts.sizes.is_empty() && !opts.census && opts.curves.is_none()))
                .then(|| {
                    match opts.shards {
                        Some(r) if r < 1.0 => StackDistances::sampled(opts.unit, r),
                        _ => StackDistances::new(opts.unit),
                    }
                    .with_warmup(opts.warmup)
                }),
            sizes: opts.sizes.clone(),
            requests: 0,
            cpu: opts.cpu.clone(),
            warmup: opts.warmup,
        }
    }

    /// Feeds one request.
    #[inline]
    pub fn access(&mut self, req: Request) {
        self.requests += 1;
        self.online.access(&req);
        if let Some(m) = &mut self.mrc {
            m.access(&req);
        }
        if let Some((_, buf)) = &mut self.offline {
            buf.push(req);
        }
        if let Some(m) = &mut self.mini {
            m.access(&req);
        }
        if let Some(c) = &mut self.census {
            c.ws.requests += 1;
            if c.seen.insert(req.id) {
                c.ws.objects += 1;
                c.ws.bytes += req.size as u64;
            }
        }
    }

    /// Feeds one memory access of `size` bytes (absent: one) to the CPU
    /// caches, if any.
    #[inline]
    pub fn access_memory(&mut self, r: Ref, addr: u64, size: Option<u64>) {
        match &mut self.cpu {
            Some(CpuModel::Hierarchy(h)) => {
                h.access(addr);
            }
            Some(CpuModel::Cachegrind(c)) => c.access(r, addr, size.unwrap_or(1)),
            None => {}
        }
    }

    /// Whether a CPU-cache hierarchy is simulated.
    pub fn has_cpu(&self) -> bool {
        self.cpu.is_some()
    }

    /// Requests fed so far.
    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// Runs what waited for the whole trace and reports.
    pub fn finish(self) -> SimReport {
        let online = self.online.finish();
        let (unit, mut caches) = (online.unit, online.caches);
        let full: Vec<f64> = caches
            .drain(self.table_caches..)
            .map(|c| c.miss_ratio)
            .collect();
        let curves = self
            .mini
            .map(|m| m.finish((!full.is_empty()).then_some(&full[..])));
        if let Some((mut sweep, mut buf)) = self.offline {
            fill_next_access(&mut buf);
            for r in &buf {
                sweep.access(r);
            }
            caches.extend(sweep.finish().caches);
        }
        // Back into the order the policies were asked for.
        let names: Vec<String> = self.order.iter().map(|p| p.to_string()).collect();
        let rank = |name: &str| names.iter().position(|n| *n == name).unwrap_or(usize::MAX);
        caches.sort_by_key(|c| (rank(&c.policy), c.capacity));
        let mrc = self.mrc.map(|m| {
            let curve = m.finish();
            let sizes = if self.sizes.is_empty() {
                curve.log_sizes(24)
            } else {
                self.sizes.clone()
            };
            let plot = curve.at(&curve.log_sizes(200));
            (MrcReport::new(&curve, &sizes), plot)
        });
        let (mrc, lru_curve) = match mrc {
            Some((r, p)) => (Some(r), p),
            None => (None, Vec::new()),
        };
        SimReport {
            requests: self.requests,
            warmup: self.warmup.min(self.requests),
            table: (!caches.is_empty()).then_some(SweepReport { unit, caches }),
            mrc,
            lru_curve,
            working_set: self.census.map(|c| c.ws),
            curves,
            cpu: self.cpu.map(|m| match m {
                CpuModel::Hierarchy(h) => CpuReport::Hierarchy(h.report()),
                CpuModel::Cachegrind(c) => CpuReport::Cachegrind(c.report()),
            }),
        }
    }
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// The result of a run.
#[derive(Clone, Debug, Serialize)]
pub struct SimReport {
    /// Requests fed, the warm-up's included.
    pub requests: u64,
    /// Requests that warmed the caches, not counted in any ratio.
    #[serde(skip_serializing_if = "is_zero")]
    pub warmup: u64,
    /// Each (policy, size) cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<SweepReport>,
    /// The LRU miss-ratio curve.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mrc: Option<MrcReport>,
    /// Other policies' curves, by miniature simulation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub curves: Option<MiniReport>,
    /// The working set, when counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub working_set: Option<WorkingSet>,
    /// The CPU caches' hits per level and average latency, or
    /// cachegrind's counters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuReport>,
    /// The curve at 200 log-spaced sizes, for plots.
    #[serde(skip)]
    pub lru_curve: Vec<(u64, f64)>,
}

impl SimReport {
    /// Miss-ratio curves as SVG: each simulated policy over its sizes, and
    /// the LRU curve from stack distances.
    pub fn svg(&self, title: &str) -> String {
        let mut curves = self.table.as_ref().map(|t| t.curves()).unwrap_or_default();
        let mut unit = self.table.as_ref().map(|t| t.unit);
        if let Some(m) = &self.mrc {
            unit = Some(m.summary.unit);
            let name = if m.summary.rate < 1.0 {
                "LRU (SHARDS)"
            } else {
                "LRU (stack distances)"
            };
            curves.push((name.to_string(), self.lru_curve.clone()));
        }
        if let Some(m) = &self.curves {
            unit = Some(m.unit);
            curves.extend(m.curves());
        }
        let unit = match unit {
            Some(Unit::Bytes) => "bytes",
            _ => "objects",
        };
        curves_svg(title, unit, &curves)
    }
}

impl fmt::Display for SimReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.warmup > 0 {
            writeln!(
                f,
                "{} requests; the first {} warmed the caches and are not counted",
                self.requests, self.warmup
            )?;
        } else {
            writeln!(f, "{} requests", self.requests)?;
        }
        if let Some(w) = &self.working_set {
            writeln!(f, "working set: {} objects, {} bytes", w.objects, w.bytes)?;
        }
        if let Some(t) = &self.table {
            writeln!(f)?;
            write!(f, "{t}")?;
        }
        if let Some(m) = &self.mrc {
            writeln!(f)?;
            write!(f, "{m}")?;
        }
        if let Some(m) = &self.curves {
            writeln!(f)?;
            write!(f, "{m}")?;
        }
        if let Some(c) = &self.cpu {
            writeln!(f)?;
            writeln!(f, "{c}")?;
        }
        Ok(())
    }
}
