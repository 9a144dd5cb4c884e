//! `tramp export`: a trace in a viewer's format.

use anyhow::{Result, bail};
use clap::Args;

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

/// What a profile export covers when the trace is damaged.
const PROFILE: &str = "; the profile covers the records before the error";

pub fn run(a: ExportArgs) -> Result<()> {
    if let Some(p) = &a.chrome {
        return super::export_chrome::run(&a.input, p);
    }
    if let Some(p) = &a.pprof {
        let none = Some(tramp_io::Compression::None);
        return export(
            &a.input,
            p,
            none,
            "export --pprof",
            tramp_api::export::pprof,
            PROFILE,
        );
    }
    if let Some(p) = &a.dhat {
        let dhat = tramp_api::export::dhat;
        return export(&a.input, p, None, "export --dhat", dhat, PROFILE);
    }
    if let Some(d) = &a.parquet {
        return super::export_parquet::run(&a.input, d, a.json);
    }
    match &a.massif {
        Some(p) => export(
            &a.input,
            p,
            None,
            "export --massif",
            tramp_api::export::massif,
            "; the snapshots cover the records before the error",
        ),
        None => bail!("name what to write: --chrome, --pprof, --dhat, --massif or --parquet"),
    }
}

/// Writes one heap export: the output created first (one that cannot be
/// written is refused before the work), the input opened (it must hold
/// heap events), the job run, its bytes written, the run ended.
fn export(
    input: &InputArgs,
    path: &str,
    compression: Option<tramp_io::Compression>,
    command: &str,
    job: fn(&mut super::Opened) -> Result<tramp_api::export::Exported, tramp_api::Error>,
    covers: &'static str,
) -> Result<()> {
    let out = tramp_api::output::create_with(path, compression)?;
    let mut o = tramp_api::heap::open_heap(&input.spec(), command)?;
    let (bytes, run, images) = job(&mut o)?;
    if let Some(n) = images {
        eprintln!("tramp: note: {n}");
    }
    out.write(&bytes)?;
    super::end_run(run, &o, Some(path), covers)
}
