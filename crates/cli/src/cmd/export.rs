//! `tramp export`: a trace in a viewer's format.

use anyhow::{Context, Result, bail};
use clap::Args;
use tramp_core::io::Output;

use tramp_heap::{HeapFlow, HeapStats, Lived};
use tramp_profile::dhat::{Dhat, DhatCounts};
use tramp_profile::massif::{self, Held, MassifSnapshots};
use tramp_symbols::ModuleMap;
use tramp_symbols::sites::{SiteCounts, stack_of};

use super::InputArgs;

/// Export a trace for a viewer.
///
/// `--pprof OUT.pb.gz` writes a heap trace's profile as pprof's
/// profile.proto, gzip-compressed, which `go tool pprof`, Perfetto UI and
/// Pyroscope open: one sample per call stack with four values —
/// alloc_objects and alloc_space (everything the stack allocated) and
/// inuse_objects and inuse_space (what it still held at the end of the
/// trace: its leaks) —, one location per code address whose lines are its
/// inlined chain, one mapping per module; alloc_space is the default view.
/// docs/formats/pprof.md.
///
/// `--dhat OUT.json` writes it as DHAT's JSON (dhatFileVersion 2), which
/// DHAT's viewer (dh_view.html, shipped with valgrind) and the Firefox
/// Profiler open: per allocation site the bytes and blocks allocated, the
/// blocks' lifetimes added up, the most it held at once, what it held at
/// the global peak and at the end; times in the trace's unit (ns for
/// recordings). docs/formats/dhat.md.
///
/// `--massif OUT` writes the heap over time as valgrind massif's output,
/// which `ms_print` and massif-visualizer read: fewer than 100 evenly spaced
/// snapshots of the live bytes, the peak's detailed as massif's tree of
/// allocating stacks, and the last one detailed with what is left; time is
/// massif's `B` unit (bytes allocated and freed so far).
/// docs/formats/massif.md.
///
/// `--parquet DIR` writes a heap trace as three Parquet tables that query
/// engines (DuckDB, DataFusion, Spark, Trino, Polars) read as folders:
/// `DIR/events/NAME.parquet` (one row per heap event: kind, time, thread,
/// heap, size, address, old_address, object, stack, and a free's
/// lifetime), `DIR/stacks/NAME.parquet` (one row per frame: stack, depth,
/// pc, function, file, line, module) and `DIR/processes/NAME.parquet` (the
/// trace's process: pid, program, counts, times, whether complete); NAME is
/// the trace's file name without extensions, so each recorded process
/// (each trace) adds its own files to the same folders; a trace whose files
/// an earlier export wrote (the same NAME) is refused, naming that export's
/// trace, and a failed or interrupted export removes what it made. Row groups of 1 Mi
/// rows, zstd pages, text dictionary-encoded; the rows and bytes of each
/// column are printed (`--json` for JSON). docs/formats/parquet.md has a query for
/// each engine.
///
/// `--chrome OUT.json` writes the Chrome
/// Trace Event format that Perfetto (ui.perfetto.dev) and chrome://tracing
/// open. For Heph traces each stream becomes a process and each substream
/// a thread (with `process_name`/`thread_name` metadata events), each event
/// a complete event with its attributes (arrays included) as args;
/// timestamps are microseconds after the trace's epoch with nanosecond
/// decimals, the epoch is in `otherData.epoch_ns`. NaN and infinities
/// become the strings "NaN", "Infinity", "-Infinity". Damaged packets are
/// skipped with a warning; every whole packet is exported.
#[derive(Args)]
#[group(id = "to", required = true, multiple = false, args = ["chrome", "pprof", "dhat", "massif", "parquet"])]
pub struct ExportArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Write Chrome Trace Event JSON here, for Heph traces (`-` for
    /// stdout; .gz/.zst/.xz compress).
    #[arg(long, value_name = "OUT.json")]
    chrome: Option<String>,
    /// Write the heap profile as pprof's profile.proto here (gzip
    /// inside, as pprof reads it).
    #[arg(long, value_name = "OUT.pb.gz")]
    pprof: Option<String>,
    /// Write the heap profile as DHAT's JSON here.
    #[arg(long, value_name = "OUT.json")]
    dhat: Option<String>,
    /// Write the heap over time as massif's output here.
    #[arg(long, value_name = "OUT")]
    massif: Option<String>,
    /// Write the heap trace as Parquet tables into this folder (made if
    /// missing): events/, stacks/, processes/.
    #[arg(long, value_name = "DIR")]
    parquet: Option<String>,
    /// With --parquet: report the tables' rows and bytes as JSON.
    #[arg(long, requires = "parquet")]
    json: bool,
}

pub fn run(a: ExportArgs) -> Result<()> {
    if let Some(p) = &a.chrome {
        return super::export_chrome::run(&a.input, p);
    }
    if let Some(p) = &a.pprof {
        return self::pprof(&a.input, p);
    }
    if let Some(p) = &a.dhat {
        return self::dhat(&a.input, p);
    }
    if let Some(d) = &a.parquet {
        return super::export_parquet::run(&a.input, d, a.json);
    }
    match &a.massif {
        Some(p) => self::massif(&a.input, p),
        None => bail!("name what to write: --chrome, --pprof, --dhat, --massif or --parquet"),
    }
}

/// The output (created first: one that cannot be written is refused before
/// the work) and the input, which must hold heap events.
fn open_heap(
    input: &InputArgs,
    path: &str,
    compression: Option<tramp_core::io::Compression>,
    command: &str,
) -> Result<(Output, super::Opened)> {
    let out = Output::create(path, compression).with_context(|| format!("creating {path}"))?;
    let o = super::open(input, false)?;
    let holds = o.source.schema().domains().heap;
    o.require(holds, command, "heap events (allocations, frees, reallocs)")?;
    Ok((out, o))
}

/// Writes the export, finishes the output, and ends the run (its warnings,
/// and damage as an error, `covers` saying what the export covers).
fn finish(
    mut out: Output,
    path: &str,
    write: impl FnOnce(&mut Output) -> std::io::Result<()>,
    run: tramp_core::Run,
    o: &super::Opened,
    covers: &str,
) -> Result<()> {
    write(&mut out)
        .and_then(|_| out.finish())
        .with_context(|| format!("writing {path}"))?;
    super::end_run(run, o, Some(path), covers)
}

/// A sampled trace's export into a format without estimates is refused
/// (nothing is written).
fn refuse_sampled(sampling: Option<tramp_heap::sampling::Sampling>, what: &str) -> Result<()> {
    match sampling {
        Some(s) => bail!(s.export_refusal(what)),
        None => Ok(()),
    }
}

/// A heap trace's heap over time as massif's output.
fn massif(input: &InputArgs, path: &str) -> Result<()> {
    let (out, mut o) = open_heap(input, path, None, "export --massif")?;
    let mut stats: HeapStats<(SiteCounts, MassifSnapshots), tramp_heap::Site> =
        HeapStats::with((SiteCounts::new(), MassifSnapshots::new()));
    let mut modules = ModuleMap::new();
    let run = o.run(&mut [&mut stats, &mut modules], Vec::new());
    let (_, (sites, snaps)) = stats.finish_with();
    refuse_sampled(sites.sampling(), "massif's snapshots")?;
    let modules = tramp_core::Analysis::finish(modules);
    // Only the stacks that held something at the peak or at the end are
    // named (a trace of a million stacks names a few).
    let rows = sites.resolved(&modules);
    let (mut names, stacks) = (modules.names(), modules.stack_depth > 0);
    let mut named = |bytes: fn(&tramp_symbols::sites::SiteTotals) -> u64| {
        rows.iter()
            .filter(|(_, t)| bytes(t) > 0)
            .map(|(site, t)| (stack_of(&mut names, site.resolved(stacks)), bytes(t)))
            .collect::<Vec<_>>()
    };
    let (at_peak, at_end) = (named(|t| t.peak_bytes), named(|t| t.live_bytes));
    let peak: Vec<Held<'_>> = at_peak.iter().map(|(s, b)| (&s[..], *b)).collect();
    let end: Vec<Held<'_>> = at_end.iter().map(|(s, b)| (&s[..], *b)).collect();
    let cmd = modules.program().unwrap_or(&o.name).to_string();
    let text = massif::write(&cmd, &snaps.snapshots(), (snaps.peak, &peak), &end);
    finish(
        out,
        path,
        |out| std::io::Write::write_all(out, text.as_bytes()),
        run,
        &o,
        "; the snapshots cover the records before the error",
    )
}

/// A heap trace's profile as DHAT's JSON.
fn dhat(input: &InputArgs, path: &str) -> Result<()> {
    let (out, mut o) = open_heap(input, path, None, "export --dhat")?;
    let mut flow: HeapFlow<DhatCounts, Lived> = HeapFlow::new(DhatCounts::new());
    let mut modules = ModuleMap::new();
    let run = o.run(&mut [&mut flow, &mut modules], Vec::new());
    let counts = tramp_core::Analysis::finish(flow);
    refuse_sampled(counts.sampling(), "DHAT's counts")?;
    let modules = tramp_core::Analysis::finish(modules);
    let cmd = modules.program().unwrap_or(&o.name).to_string();
    let dhat = Dhat::new(
        &counts,
        &mut modules.names(),
        modules.stack_depth > 0,
        &cmd,
        modules.pid.unwrap_or(0),
    );
    finish(
        out,
        path,
        |out| dhat.write(out),
        run,
        &o,
        "; the profile covers the records before the error",
    )
}

/// A heap trace's profile as pprof's profile.proto.
fn pprof(input: &InputArgs, path: &str) -> Result<()> {
    // Created before the work: an output that cannot be written is
    // refused first.
    let (out, mut o) = open_heap(
        input,
        path,
        Some(tramp_core::io::Compression::None),
        "export --pprof",
    )?;
    let mut stats: HeapStats<SiteCounts, tramp_heap::Site> = HeapStats::with(SiteCounts::new());
    let mut modules = ModuleMap::new();
    let run = o.run(&mut [&mut stats, &mut modules], Vec::new());
    let (_, sites) = stats.finish_with();
    let modules = tramp_core::Analysis::finish(modules);
    let rows = sites.resolved(&modules);
    let profile = tramp_profile::pprof::profile(
        &rows,
        &mut modules.names(),
        &modules.modules,
        sites.sampling(),
    );
    finish(
        out,
        path,
        |out| tramp_profile::pprof::write(&profile, out),
        run,
        &o,
        "; the profile covers the records before the error",
    )
}
