//! One module per subcommand: its argument struct (whose doc comments are
//! its `--help`) and the wiring of library calls. Shared here: the input
//! arguments, opening an input, printing reports, and ending a run.

pub mod analyze;
pub mod cachesim;
pub mod cc;
pub mod check;
pub mod convert;
pub mod diff;
pub mod dump;
pub mod export;
pub mod export_chrome;
pub mod export_parquet;
pub mod formats;
pub mod gen_code;
pub mod heap_views;
pub mod rds;
pub mod record;
pub mod record_after;
pub mod record_start;
pub mod replay;
pub mod report;
pub mod run;
pub mod sample;
pub mod sizes;
pub mod spans;
pub mod stats;
pub mod verify;
pub mod workload;

use anyhow::Result;
use clap::Args;
use tramp_core::Run;
use tramp_formats::Format;

/// Options shared by commands that read a trace.
#[derive(Args)]
pub struct InputArgs {
    /// Trace file, or `-` for stdin. zstd, gzip and xz are unwrapped
    /// automatically.
    pub input: String,
    /// Input format (default: detected from the content, then the name).
    /// See `tramp formats`.
    #[arg(long = "format", short = 'f')]
    pub format: Option<String>,
    /// DTD file for Meta-TF traces that do not embed theirs (read from
    /// disk only; DTDs are never fetched over the network).
    #[arg(long, value_name = "FILE.dtd")]
    pub dtd: Option<String>,
    /// A TRAMP format description of the trace's layout (docs/formats/tramp.md):
    /// the trace is read as the records it describes (format tramp-desc).
    #[arg(long, value_name = "FILE", conflicts_with = "format")]
    pub desc: Option<String>,
    #[command(flatten)]
    pub select: SelectArgs,
}

impl InputArgs {
    /// The trace these arguments name, as the library takes it.
    pub fn spec(&self) -> tramp_api::TraceSpec {
        tramp_api::TraceSpec {
            path: self.input.clone(),
            format: self.format.clone(),
            dtd: self.dtd.clone(),
            desc: self.desc.clone(),
            select: self.select.selection(),
        }
    }
}

/// The part of a trace a command reads (docs/select.md).
#[derive(Args, Clone, Default)]
pub struct SelectArgs {
    /// Read only the records in this time range from the trace's first
    /// timed record: `2s..5s`, `250ms..1s`, `0%..50%` of the run, `2s..`
    /// (to the end), `..500ms`; a bare number is seconds. Frees of blocks
    /// allocated before the range are not anomalies (docs/select.md).
    #[arg(id = "select_time", long = "time", value_name = "A..B", value_parser = tramp_core::select::TimeRange::parse)]
    pub time: Option<tramp_core::select::TimeRange>,
    /// Read only the records of these threads (comma-separated ids).
    #[arg(
        id = "select_threads",
        long = "thread",
        value_name = "TID",
        value_delimiter = ','
    )]
    pub threads: Vec<u64>,
    /// Read only the records of this process of the recording (its
    /// `tramp:process` note).
    #[arg(id = "select_pid", long = "pid", value_name = "PID")]
    pub pid: Option<u64>,
}

impl SelectArgs {
    /// The selection, as the library takes it.
    pub fn selection(&self) -> tramp_core::select::Selection {
        tramp_core::select::Selection {
            time: self.time,
            threads: self.threads.clone(),
            pid: self.pid,
        }
    }
}

pub use tramp_api::input::{Detected, read_dtd};

/// Opens the input and tells its format (given, or detected).
pub fn detect(args: &InputArgs) -> Result<Detected> {
    Ok(tramp_api::input::detect(&args.spec())?)
}

/// The format an output is written in (`tramp_formats::for_output`),
/// warning when its name says another.
pub fn output_format(name: &str, to: Option<Option<&str>>, stdout: Format) -> Result<Format> {
    let (format, named) = tramp_formats::for_output(name, to, stdout)?;
    if let Some(f) = named {
        eprintln!("tramp: warning: {name} is named like {f} but --to {format} writes {format}");
    }
    Ok(format)
}

pub use tramp_formats::pipeline::Opened;

/// Opens the input as records (decoded on a second core).
pub fn open(args: &InputArgs, metadata: bool) -> Result<Opened> {
    Ok(tramp_api::open(&args.spec(), metadata)?)
}

/// Writes to stdout; a closed pipe is reported as an error (and then
/// treated as success by main), never a panic.
pub fn print(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Prints a report as text or JSON.
pub fn print_report<R: serde::Serialize + std::fmt::Display + ?Sized>(
    report: &R,
    json: bool,
) -> Result<()> {
    write_report(&mut std::io::stdout().lock(), report, json)
}

/// Writes a report as text or JSON to `out` (stdout, stderr, a file).
pub fn write_report<R: serde::Serialize + std::fmt::Display + ?Sized>(
    out: &mut dyn std::io::Write,
    report: &R,
    json: bool,
) -> Result<()> {
    out.write_all(tramp_core::render(report, json).as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Prints the warnings of a run on stderr, then returns how it ended
/// (`tramp_api::end`: the error names the trace, what the output above
/// covers, and where it stopped).
pub fn end_run(run: Run, o: &Opened, out: Option<&str>, covers: &'static str) -> Result<()> {
    let e = tramp_api::end(run, o, out, covers);
    warn(&e.name, &e.warnings);
    Ok(e.into_result()?)
}

/// How a profile job reads a recording: its profile index, or with
/// `--verify-index` its events checked against the index.
#[derive(Args, Clone, Copy, Default)]
pub struct IndexArgs {
    /// Read the recording's events instead of its profile index, and fail
    /// (exit 1, naming the first figure) unless the two agree. Without
    /// it, a whole tpack recording is answered from its index when it has
    /// one (docs/index.md), else from its events, with a note.
    #[arg(long)]
    pub verify_index: bool,
}

impl IndexArgs {
    pub fn wanted(self) -> tramp_api::indexed::IndexUse {
        match self.verify_index {
            true => tramp_api::indexed::IndexUse::Verify,
            false => tramp_api::indexed::IndexUse::Read,
        }
    }
}

/// Ends a profile job: its note (why not the index) and its warnings on
/// stderr, then how its run ended.
pub fn end_profiled(p: tramp_api::indexed::Profiled, covers: &'static str) -> Result<()> {
    if let Some(note) = p.note() {
        eprintln!("tramp: note: {note}");
    }
    if let Some(note) = &p.images {
        eprintln!("tramp: note: {note}");
    }
    let e = tramp_api::ending::end_named(p.run, &p.name, p.format, None, covers);
    warn(&e.name, &e.warnings);
    Ok(e.into_result()?)
}

/// The damage a reader skipped, on stderr, a line each.
pub fn warn(name: &str, warnings: &[tramp_core::Warning]) {
    for w in warnings {
        eprintln!("tramp: warning: {name}: {w}");
    }
}

/// Prints the damage a Heph reader skipped and, if there was any, returns
/// the error that makes the exit non-zero.
pub fn heph_damage(name: &str, warnings: Vec<tramp_heph::reader::Warning>) -> Result<()> {
    warn(name, &warnings);
    tramp_api::ending::end_warnings(name, "heph", &warnings).map_or(Ok(()), |e| Err(e.into()))
}
