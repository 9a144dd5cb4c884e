//! `tramp export`: a trace in a viewer's format.

use anyhow::{Context, Result, bail};
use clap::Args;
use tramp_core::Progress;
use tramp_core::io::Output;

use tramp_heap::HeapStats;
use tramp_symbols::ModuleMap;
use tramp_symbols::sites::SiteCounts;

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
#[group(id = "to", required = true, multiple = false, args = ["chrome", "pprof"])]
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
}

pub fn run(a: ExportArgs) -> Result<()> {
    match (&a.chrome, &a.pprof) {
        (Some(chrome), _) => self::chrome(&a.input, chrome),
        (_, Some(pprof)) => self::pprof(&a.input, pprof),
        (None, None) => bail!("name what to write: --chrome or --pprof"),
    }
}

/// A heap trace's profile as pprof's profile.proto.
fn pprof(input: &InputArgs, path: &str) -> Result<()> {
    // Created before the work: an output that cannot be written is
    // refused first.
    let mut out = Output::create(path, Some(tramp_core::io::Compression::None))
        .with_context(|| format!("creating {path}"))?;
    let mut o = super::open(input, false)?;
    let holds = o.source.schema().domains().heap;
    super::require(
        &o,
        holds,
        "export --pprof",
        "heap events (allocations, frees, reallocs)",
    )?;
    let mut stats: HeapStats<SiteCounts, tramp_heap::Site> = HeapStats::with(SiteCounts::new());
    let mut modules = ModuleMap::new();
    let run = o.run(&mut [&mut stats, &mut modules], Vec::new());
    let (_, sites) = stats.finish_with();
    let modules = tramp_core::Analysis::finish(modules);
    let rows = sites.report(&modules, usize::MAX).by_count;
    let profile = tramp_profile::pprof::profile(&rows, &modules.modules, 0);
    tramp_profile::pprof::write(&profile, &mut out)
        .and_then(|_| out.finish())
        .with_context(|| format!("writing {path}"))?;
    super::end_run(
        run,
        &o,
        Some(path),
        "; the profile covers the records before the error",
    )
}

/// A Heph trace as Chrome Trace Event JSON.
fn chrome(input: &InputArgs, path: &str) -> Result<()> {
    let d = super::detect(input)?;
    // The export reads Heph's packets directly.
    if d.format.family != tramp_heph::records::FORMAT {
        bail!("--chrome exports Heph traces; {} is {}", d.name, d.format);
    }
    let mut progress = Progress::of(&d.input);
    let mut reader = tramp_heph::Reader::new(d.input.reader);
    let out = Output::create(path, None).with_context(|| format!("creating {path}"))?;
    let out = tramp_heph::chrome::export(&mut reader, out, &mut progress)
        .with_context(|| format!("exporting {} to {path}", d.name))?;
    out.finish().with_context(|| format!("finishing {path}"))?;
    super::heph_damage(&d.name, reader.take_warnings())
}
