//! A cache simulation as one validated value (ripgrep's `HiArgs` is the
//! model): a [`Request`] holds what a user typed (policies, sizes, rates,
//! a layout) unchecked; [`plan`] checks every value, opens the trace,
//! counts its working set when a size is a fraction of it, and gives a
//! [`Plan`]; [`simulate`] runs it into a [`Simulated`] whose outcome,
//! picture and damage every front end shows the same way.

use tramp_cachesim::mini::{curve_policies, log_points};
use tramp_cachesim::policy::spec::SpecError;
use tramp_cachesim::sim::{Curves, Options, SimReport};
use tramp_cachesim::units::CacheSize;
use tramp_cachesim::{PolicySpec, Unit};
use tramp_cachetrace::{Fed, Keys, Layout, Mapping, working_set};
use tramp_io::{FileOutput, Input};

use crate::Error;

/// A simulation as asked for, not yet checked.
#[derive(Clone, Debug)]
pub struct Request {
    /// A trace path, or `-` for stdin.
    pub input: String,
    /// A layout or format name; `None`: detected.
    pub format: Option<String>,
    /// A TRAMP format description's path.
    pub desc: Option<String>,
    /// Policies as `name[:param=value…][+admission]`.
    pub policies: Vec<String>,
    /// Sizes (`1000`, `64k`, `1.5G`) or fractions of the working set
    /// (`0.01`, `1%`).
    pub sizes: Vec<String>,
    /// Sizes in bytes (objects weigh their size) rather than objects.
    pub bytes: bool,
    /// Requests that warm the caches first: a count or a fraction.
    pub warmup: String,
    /// Policies whose miss-ratio curves are drawn (`lru` exactly, others
    /// by miniature simulation); `None`: no curves.
    pub curves: Option<Vec<String>>,
    /// SHARDS sampling rate for the LRU curve.
    pub shards: Option<f64>,
    /// The miniature simulations' sampling rate.
    pub mini_rate: f64,
    /// Also simulate every curve point in full, for the error.
    pub mrc_check: bool,
    /// Cache-line bytes for addresses.
    pub line: u64,
    /// Fields naming objects (`--key`), and those marking writes.
    pub key: Option<String>,
    pub write: Option<String>,
    /// Simulate synthetic addresses (a heaptrack file's) all the same.
    pub synthetic_ok: bool,
    /// Split requests into pages of this many bytes.
    pub page: Option<u64>,
    /// A CPU cache hierarchy (`32k:8,1M:16`).
    pub cpu: Option<String>,
    /// Threads for the caches (`None`: one per core).
    pub threads: Option<usize>,
    /// The LRU curve is wanted for a picture.
    pub picture: bool,
    /// The part of the trace simulated (docs/select.md).
    pub select: tramp_core::select::Selection,
}

impl Request {
    /// LRU over `input` with every default.
    pub fn new(input: impl Into<String>) -> Request {
        Request {
            input: input.into(),
            format: None,
            desc: None,
            policies: vec!["lru".into()],
            sizes: Vec::new(),
            bytes: false,
            warmup: "0".into(),
            curves: None,
            shards: None,
            mini_rate: 0.01,
            mrc_check: false,
            line: 64,
            key: None,
            write: None,
            synthetic_ok: false,
            page: None,
            cpu: None,
            threads: None,
            picture: false,
            select: Default::default(),
        }
    }
}

/// A checked simulation, its trace opened.
pub struct Plan {
    pub input: Input,
    pub name: String,
    pub layout: Layout,
    pub options: Options,
    pub mapping: Mapping,
}

fn invalid(e: impl std::fmt::Display) -> Error {
    Error::Invalid(e.to_string())
}

/// A cache size: objects counted decimally, bytes binary; a cache needs a
/// size above 0.
fn size_of(s: &str, unit: Unit) -> Result<CacheSize, Error> {
    match CacheSize::parse(s, unit) {
        Ok(CacheSize::Units(0)) => {
            Err(invalid(format!("size {s:?}: a cache needs a size above 0")))
        }
        Ok(v) => Ok(v),
        Err(e) => Err(invalid(format!("size {e}"))),
    }
}

fn rate(option: &str, r: f64) -> Result<(), Error> {
    match r > 0.0 && r <= 1.0 {
        true => Ok(()),
        false => Err(invalid(format!(
            "{option} {r}: the sampling rate must be above 0 and at most 1"
        ))),
    }
}

/// How the trace's requests become cache keys, checked.
fn mapping(r: &Request) -> Result<Mapping, Error> {
    if r.line == 0 || !r.line.is_power_of_two() {
        return Err(invalid(format!(
            "--line {}: a cache line is a power of two bytes",
            r.line
        )));
    }
    if r.page == Some(0) {
        return Err(invalid("--page 0: a page has at least one byte"));
    }
    Ok(Mapping {
        line: r.line,
        keys: r
            .key
            .as_deref()
            .map(|k| Keys::parse(k, r.write.as_deref()))
            .transpose()?,
        desc: r.desc.as_deref().map(crate::input::read_desc).transpose()?,
        synthetic_ok: r.synthetic_ok,
        page: r.page,
        select: r.select.clone(),
        window: None,
    })
}

/// The selection's time range resolved (a range in percent reads the
/// trace's span first); a selection of a libCacheSim layout is refused.
fn window(r: &Request, layout: Layout) -> Result<Option<(u64, u64)>, Error> {
    if r.select.is_all() {
        return Ok(None);
    }
    if let Some(name) = layout.native_name() {
        return Err(tramp_cachetrace::Error::Select(name).into());
    }
    let Some(t) = r.select.time else {
        return Ok(None);
    };
    let span = match t.needs_span() {
        true => Some(crate::input::span(&crate::TraceSpec {
            path: r.input.clone(),
            format: r.format.clone(),
            dtd: None,
            desc: r.desc.clone(),
            select: Default::default(),
        })?),
        false => None,
    };
    Ok(Some(t.resolve(span)?))
}

/// The trace `r` names, opened, and its layout (described, named or
/// detected).
fn opened(r: &Request, mapping: &Mapping) -> Result<(Input, Layout), Error> {
    let input = Input::open(&r.input).map_err(|source| Error::Open {
        path: r.input.clone(),
        source,
    })?;
    let layout = match &mapping.desc {
        Some(_) => Layout::Tramp(&tramp_desc::format::DESC),
        None => Layout::detect(&input, r.format.as_deref()).map_err(|source| Error::Trace {
            what: format!("reading {}", r.input),
            source: Box::new(source),
        })?,
    };
    Ok((input, layout))
}

/// Checks every value of `r`, opens its trace (twice when the working set
/// must be counted first) and gives the simulation to run.
pub fn plan(r: &Request) -> Result<Plan, Error> {
    let unit = if r.bytes { Unit::Bytes } else { Unit::Objects };
    let policies = r
        .policies
        .iter()
        .map(|p| p.parse::<PolicySpec>())
        .collect::<Result<Vec<_>, SpecError>>()?;
    let sizes = r
        .sizes
        .iter()
        .map(|s| size_of(s, unit))
        .collect::<Result<Vec<_>, _>>()?;
    let warmup =
        CacheSize::parse(&r.warmup, Unit::Objects).map_err(|e| invalid(format!("--warmup {e}")))?;
    let (exact_lru, mini) = curve_policies(r.curves.as_deref().unwrap_or_default())?;
    if let Some(s) = r.shards {
        rate("--shards", s)?;
    }
    rate("--mini-rate", r.mini_rate)?;
    let mapping = mapping(r)?;
    let open = || {
        Input::open(&r.input).map_err(|source| Error::Open {
            path: r.input.clone(),
            source,
        })
    };
    let (input, layout) = opened(r, &mapping)?;
    let mut mapping = mapping;
    mapping.window = window(r, layout)?;
    // Fractions need the working set first: one pass more over the file.
    let census = sizes.iter().any(|s| s.is_fraction())
        || warmup.is_fraction()
        || (!mini.is_empty() && sizes.is_empty());
    let ws = match census {
        false => Default::default(),
        true if r.input == "-" => {
            return Err(invalid(
                "sizes as fractions of the working set, a --warmup fraction and --mrc curves without --size read the trace twice: give a file, not a pipe",
            ));
        }
        true => working_set(open()?, layout, unit, &mapping).map_err(|source| Error::Trace {
            what: format!("counting the working set of {}", r.input),
            source: Box::new(source),
        })?,
    };
    let sizes: Vec<u64> = sizes.iter().map(|s| s.resolve(ws.size(unit))).collect();
    for p in &policies {
        for &s in &sizes {
            p.check_capacity(s)?;
        }
    }
    let options = Options {
        curves: (!mini.is_empty()).then(|| Curves {
            policies: mini,
            sizes: match sizes.is_empty() {
                true => log_points(ws.size(unit), 20),
                false => sizes.clone(),
            },
            rate: r.mini_rate,
            check: r.mrc_check,
        }),
        policies,
        sizes,
        unit,
        mrc: exact_lru || r.shards.is_some() || r.picture,
        shards: r.shards,
        future_known: false,
        cpu: r
            .cpu
            .as_deref()
            .map(str::parse)
            .transpose()
            .map_err(invalid)?,
        threads: r.threads,
        warmup: match warmup {
            CacheSize::Units(n) => n,
            f => f.resolve(ws.requests),
        },
        census,
    };
    Ok(Plan {
        input,
        name: r.input.clone(),
        layout,
        options,
        mapping,
    })
}

/// What a simulation gave.
pub struct Simulated {
    pub report: SimReport,
    /// For tramp traces: records read and skipped.
    pub fed: Option<Fed>,
    /// Why reading stopped early, if it did.
    pub damage: Option<tramp_cachetrace::Error>,
    pub name: String,
}

/// Runs `plan` (the simulated requests also written as lcs to `lcs`, if
/// given). A trace of no request, or a curve that cannot be drawn, is an
/// error rather than a table of zeros.
pub fn simulate(plan: Plan, lcs: Option<FileOutput>) -> Result<Simulated, Error> {
    let name = plan.name;
    let out =
        tramp_cachetrace::simulate(plan.input, plan.layout, &plan.options, &plan.mapping, lcs)
            .map_err(|source| Error::Trace {
                what: format!("reading {name}"),
                source: Box::new(source),
            })?;
    if out.damage.is_none() && out.report.requests == 0 {
        return Err(invalid(format!(
            "{name}: the trace holds no request: nothing to simulate"
        )));
    }
    if let Some(why) = out.report.mrc.as_ref().and_then(|m| m.refusal()) {
        return Err(invalid(format!("{name}: {why}")));
    }
    Ok(Simulated {
        report: out.report,
        fed: out.fed,
        damage: out.damage,
        name,
    })
}

impl Simulated {
    /// The report with how much of the trace it covers.
    pub fn outcome(&self) -> tramp_core::Outcome<'_, SimReport> {
        tramp_core::Outcome {
            report: &self.report,
            complete: self.damage.is_none(),
            damage: match &self.damage {
                Some(tramp_cachetrace::Error::Skipped(d)) => Some(d.clone()),
                Some(e) => Some(tramp_core::Damage::stopped(None, e.to_string())),
                None => None,
            },
        }
    }

    /// The miss-ratio curves as SVG, titled by the trace's file name.
    pub fn svg(&self) -> String {
        let name = std::path::Path::new(&self.name)
            .file_name()
            .map_or(self.name.clone(), |n| n.to_string_lossy().into_owned());
        self.report.svg(&format!("Miss ratio of {name}"))
    }

    /// `Ok` when the whole trace was read, else the damage.
    pub fn into_result(self) -> Result<(), Error> {
        match self.damage {
            None => Ok(()),
            Some(source) => Err(Error::Trace {
                what: format!(
                    "reading {}; the results above cover the {} requests before the damage",
                    self.name, self.report.requests
                ),
                source: Box::new(source),
            }),
        }
    }
}

/// Feeds every request of the trace `r` names (its input, layout,
/// mapping; not its policies or sizes) into `sink`, one cache driven
/// request by request (the Python package's `Cache.process`). Damage
/// is an error after the requests before it were fed.
pub fn process<S: tramp_cachesim::sim::Sink>(sink: &mut S, r: &Request) -> Result<(), Error> {
    let mut mapping = mapping(r)?;
    let (input, layout) = opened(r, &mapping)?;
    mapping.window = window(r, layout)?;
    let (_, damage) =
        tramp_cachetrace::feed_requests(input, layout, &mapping, sink).map_err(|source| {
            Error::Trace {
                what: format!("reading {}", r.input),
                source: Box::new(source),
            }
        })?;
    match damage {
        None => Ok(()),
        Some(source) => Err(Error::Trace {
            what: format!(
                "reading {}; the cache holds the {} requests before the damage",
                r.input,
                sink.requests()
            ),
            source: Box::new(source),
        }),
    }
}

/// The analysis of the trace `r` names (its input, layout and mapping)
/// as libCacheSim's traceAnalyzer characterises it (tramp_analyze), and
/// the damage that stopped the read after some requests, if any: the
/// analysis then covers the requests before it.
pub fn analyze(
    r: &Request,
    opts: tramp_analyze::Options,
) -> Result<(tramp_analyze::Analysis, Option<Error>), Error> {
    let mut a = tramp_analyze::Analyzer::new(opts);
    let damage = match process(&mut a, r) {
        Ok(()) => None,
        Err(e) if tramp_cachesim::sim::Sink::requests(&a) > 0 => Some(e),
        Err(e) => return Err(e),
    };
    Ok((a.finish(), damage))
}

/// The analysis with how much of the trace it covers (what `--json`
/// prints).
pub fn analyzed<'a>(
    a: &'a tramp_analyze::Analysis,
    damage: Option<&Error>,
) -> tramp_core::Outcome<'a, tramp_analyze::Analysis> {
    tramp_core::Outcome {
        report: a,
        complete: damage.is_none(),
        damage: damage.map(|e| tramp_core::Damage::stopped(None, crate::error::message(e))),
    }
}

/// One cache's misses as a trace of their own: what a second-level cache
/// behind it would be asked.
#[derive(Clone, Debug, serde::Serialize)]
pub struct MissStream {
    pub policy: String,
    pub size: u64,
    pub requests: u64,
    pub misses: u64,
    pub miss_ratio: f64,
    pub byte_miss_ratio: f64,
    /// Where the misses went, and how many were written.
    pub output: String,
    pub written: u64,
}

impl std::fmt::Display for MissStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} {}: {} requests, {} misses (miss ratio {:.6}, byte miss ratio {:.6}); {} misses written to {}",
            self.policy,
            self.size,
            self.requests,
            self.misses,
            self.miss_ratio,
            self.byte_miss_ratio,
            self.written,
            self.output
        )
    }
}

/// A cache that passes on what it misses.
struct Filter {
    cache: tramp_cachesim::Cache,
    out: crate::workload::Writer,
    error: Option<Error>,
}

impl tramp_cachesim::sim::Sink for Filter {
    fn access(&mut self, req: tramp_cachesim::Request) {
        if !self.cache.access(&req)
            && self.error.is_none()
            && let Err(e) = self.out.write(&req)
        {
            self.error = Some(e);
        }
    }
    fn requests(&self) -> u64 {
        self.cache.stats().requests()
    }
}

/// Runs the one cache `r` asks (one policy, one size) over its trace and
/// writes every request it misses, with its original time, to `output`
/// in the layout its name gives (`tramp cachesim --emit-misses`). The
/// output is refused before the work, and removed if the read fails.
pub fn emit_misses(r: &Request, output: &str) -> Result<MissStream, Error> {
    let ([policy], [size]) = (r.policies.as_slice(), r.sizes.as_slice()) else {
        return Err(invalid(
            "--emit-misses writes the misses of one cache: give one --policy and one --size",
        ));
    };
    let spec: PolicySpec = policy.parse()?;
    let unit = if r.bytes { Unit::Bytes } else { Unit::Objects };
    let capacity = match size_of(size, unit)? {
        CacheSize::Units(n) => n,
        _ => {
            return Err(invalid(
                "--emit-misses takes a size in objects or bytes, not a fraction of the working set",
            ));
        }
    };
    spec.check_capacity(capacity)?;
    let mut f = Filter {
        cache: tramp_cachesim::Cache::of(&spec, capacity, unit),
        out: crate::workload::Writer::create(output)?,
        error: None,
    };
    process(&mut f, r)?;
    if let Some(e) = f.error {
        return Err(e);
    }
    let s = f.cache.stats().clone();
    let written = f.out.finish()?;
    Ok(MissStream {
        policy: spec.to_string(),
        size: capacity,
        requests: s.requests(),
        misses: s.misses(),
        miss_ratio: s.miss_ratio(),
        byte_miss_ratio: s.byte_miss_ratio(),
        output: output.to_string(),
        written,
    })
}

/// How a request trace is rewritten (`tramp convert … --shards`,
/// `--split-shards`, `--split-time`).
#[derive(Clone, Copy, Debug)]
pub enum Rewrite {
    /// The objects SHARDS keeps at this rate (the hash `cachesim
    /// --shards` samples by), into one trace.
    Shards(f64),
    /// The same sample kept at the rate × the requests read as it goes:
    /// a request to either of the last two objects written is dropped
    /// while the sample is ahead, the last repeated while it is behind
    /// (SHARDS' adjustment written into the trace: such requests hit at
    /// stack distance 1 or 2).
    ShardsAdjusted(f64),
    /// Every object into one of N traces by the same hash (a cluster's
    /// shards: an object's every request in one).
    SplitShards(u64),
    /// A trace per window of this many time units from the first
    /// request.
    SplitTime(u64),
}

impl Rewrite {
    /// The SHARDS rate of a sample (adjusted or not).
    fn sample_rate(self) -> Option<f64> {
        match self {
            Rewrite::Shards(r) | Rewrite::ShardsAdjusted(r) => Some(r),
            _ => None,
        }
    }
}

/// What a rewrite wrote: each output and its requests.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Rewritten {
    pub requests: u64,
    pub outputs: Vec<(String, u64)>,
    /// The adjusted sample's repeats dropped and added.
    pub dropped: u64,
    pub added: u64,
}

impl std::fmt::Display for Rewritten {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kept: u64 = self.outputs.iter().map(|o| o.1).sum();
        writeln!(f, "{} requests read, {kept} written:", self.requests)?;
        for (path, n) in &self.outputs {
            writeln!(f, "  {path}: {n} requests")?;
        }
        if self.dropped + self.added > 0 {
            writeln!(
                f,
                "  adjusted: {} requests to the last two objects written dropped, {} repeats of the last added",
                self.dropped, self.added
            )?;
        }
        Ok(())
    }
}

/// `OUT`'s stem numbered: `trace.oracleGeneral` → `trace.3.oracleGeneral`.
pub fn numbered(out: &str, k: u64) -> String {
    let p = std::path::Path::new(out);
    let name = p
        .file_name()
        .map_or(out.into(), |n| n.to_string_lossy().into_owned());
    let numbered = match name.split_once('.') {
        Some((stem, ext)) => format!("{stem}.{k}.{ext}"),
        None => format!("{name}.{k}"),
    };
    p.with_file_name(numbered).to_string_lossy().into_owned()
}

/// Where part `k` of a rewrite goes: `out` for a sample, else numbered.
fn part_path(how: Rewrite, out: &str, k: u64) -> String {
    match how.sample_rate() {
        Some(_) => out.to_string(),
        None => numbered(out, k),
    }
}

/// Writes the requests a rewrite keeps into its outputs.
struct Rewriter {
    how: Rewrite,
    out: String,
    sample: Option<tramp_cachesim::mrc::Spatial>,
    writers: std::collections::BTreeMap<u64, crate::workload::Writer>,
    start: Option<u64>,
    requests: u64,
    error: Option<Error>,
    /// The adjusted sample: requests written, the last, the object before
    /// it, repeats dropped and added.
    written: u64,
    last: Option<tramp_cachesim::Request>,
    last2: Option<u64>,
    dropped: u64,
    added: u64,
}

impl Rewriter {
    fn part(&self, req: &tramp_cachesim::Request) -> Option<u64> {
        match self.how {
            Rewrite::Shards(_) | Rewrite::ShardsAdjusted(_) => {
                self.sample.is_some_and(|s| s.keeps(req.id)).then_some(0)
            }
            Rewrite::SplitShards(n) => Some(tramp_core::rng::mix(req.id) % n),
            Rewrite::SplitTime(w) => Some(req.time.saturating_sub(self.start.unwrap_or(0)) / w),
        }
    }

    /// The adjusted sample: a request to either of the last two objects
    /// written is dropped while more are written than the rate expects,
    /// the last repeated while fewer (each request read is expected
    /// `rate` times). A repeat of the last moves nothing in an LRU stack;
    /// one of the object before it swaps the top two (distance-1 repeats
    /// alone ran out: docs/analyze.md).
    fn adjusted(&mut self, req: &tramp_cachesim::Request, rate: f64) -> Result<(), Error> {
        let expected = self.requests as f64 * rate;
        let kept = self.part(req).is_some();
        if kept
            && self.written as f64 + 1.0 > expected + 1.0
            && (self.last.is_some_and(|l| l.id == req.id) || self.last2 == Some(req.id))
        {
            self.dropped += 1;
            return Ok(());
        }
        if kept {
            self.put(req)?;
        }
        while (self.written as f64) + 1.0 < expected
            && let Some(l) = self.last
        {
            self.put(&l)?;
            self.added += 1;
        }
        Ok(())
    }

    fn put(&mut self, req: &tramp_cachesim::Request) -> Result<(), Error> {
        self.written += 1;
        self.last2 = self.last.map(|l| l.id);
        self.last = Some(*req);
        match self.writers.get_mut(&0) {
            Some(w) => w.write(req),
            None => Ok(()),
        }
    }

    fn write(&mut self, req: &tramp_cachesim::Request) -> Result<(), Error> {
        if let Rewrite::ShardsAdjusted(rate) = self.how {
            return self.adjusted(req, rate);
        }
        let Some(k) = self.part(req) else {
            return Ok(());
        };
        if !self.writers.contains_key(&k) {
            let path = part_path(self.how, &self.out, k);
            self.writers
                .insert(k, crate::workload::Writer::create(&path)?);
        }
        match self.writers.get_mut(&k) {
            Some(w) => w.write(req),
            None => Ok(()),
        }
    }
}

impl tramp_cachesim::sim::Sink for Rewriter {
    fn access(&mut self, req: tramp_cachesim::Request) {
        self.requests += 1;
        self.start.get_or_insert(req.time);
        if self.error.is_none()
            && let Err(e) = self.write(&req)
        {
            self.error = Some(e);
        }
    }
    fn requests(&self) -> u64 {
        self.requests
    }
}

/// Rewrites the requests of the trace `r` names as `how` says into
/// `out` (numbered per part for a split), each in the libCacheSim layout
/// `out`'s name gives; every output is removed if the read fails.
pub fn rewrite(r: &Request, how: Rewrite, out: &str) -> Result<Rewritten, Error> {
    if let Some(s) = how.sample_rate() {
        rate("--shards", s)?;
    }
    match how {
        Rewrite::SplitShards(0) => return Err(invalid("--split-shards 0: at least one shard")),
        Rewrite::SplitTime(0) => {
            return Err(invalid(
                "--split-time 0: a window is at least one time unit",
            ));
        }
        _ => {}
    }
    crate::workload::Layout::of(out)?;
    let mut w = Rewriter {
        how,
        out: out.to_string(),
        sample: how.sample_rate().map(tramp_cachesim::mrc::Spatial::new),
        writers: Default::default(),
        start: None,
        requests: 0,
        error: None,
        written: 0,
        last: None,
        last2: None,
        dropped: 0,
        added: 0,
    };
    // A sample of no object still writes its (empty) trace.
    if how.sample_rate().is_some() {
        w.writers.insert(0, crate::workload::Writer::create(out)?);
    }
    process(&mut w, r)?;
    if let Some(e) = w.error {
        return Err(e);
    }
    let mut outputs = Vec::new();
    for (k, writer) in w.writers {
        outputs.push((part_path(how, out, k), writer.finish()?));
    }
    Ok(Rewritten {
        requests: w.requests,
        outputs,
        dropped: w.dropped,
        added: w.added,
    })
}
