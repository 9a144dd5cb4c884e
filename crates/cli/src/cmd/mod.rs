//! One module per subcommand: its argument struct (whose doc comments are
//! its `--help`) and the wiring of library calls. Shared here: the input
//! arguments, opening an input, printing reports, and ending a run.

pub mod cachesim;
pub mod cc;
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
pub mod record_stats;
pub mod replay;
pub mod report;
pub mod run;
pub mod sample;
pub mod sizes;
pub mod spans;
pub mod stats;
pub mod verify;
pub mod workload;

use anyhow::{Context, Result};
use clap::Args;
use tramp_core::io::Input;
use tramp_core::{OpenOptions, Run};
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
}

impl InputArgs {
    /// A trace file read in its detected format.
    pub fn path(input: impl Into<String>) -> InputArgs {
        InputArgs {
            input: input.into(),
            format: None,
            dtd: None,
            desc: None,
        }
    }
}

/// A text file a command reads besides its traces (a script, a
/// description): a path, or `-` for stdin. Noted as an input, so that no
/// output of the command can be written over it.
pub fn read_text(path: &str, what: &str) -> Result<String> {
    use std::io::Read;
    let mut text = String::new();
    if path == "-" {
        std::io::stdin()
            .read_to_string(&mut text)
            .with_context(|| format!("reading {what} from stdin"))?;
        return Ok(text);
    }
    tramp_core::io::note_input(path).with_context(|| format!("reading {what} {path}"))?;
    std::fs::read_to_string(path).with_context(|| format!("reading {what} {path}"))
}

/// A TRAMP format description's text, checked (errors name the file).
pub fn read_desc(path: &str) -> Result<String> {
    let text = read_text(path, "the description")?;
    if let Err(d) = tramp_desc::parse(&text) {
        eprint!("{}", tramp_diag::render(path, &text, &[d]));
        anyhow::bail!("the description {path} does not parse");
    }
    Ok(text)
}

/// A DTD file's text (from disk only: DTDs are never fetched): a path or
/// `-`, compressed or not; text that is not UTF-8 is an error naming the
/// line and column.
pub fn read_dtd(path: &str) -> Result<String> {
    match Input::read_text(path, "the DTD") {
        Err(tramp_core::Error::Io(e)) => Err(e).context(format!("opening the DTD {path}")),
        r => Ok(r?),
    }
}

/// An input whose format is known, not yet decoded.
pub struct Detected {
    pub input: Input,
    pub format: Format,
    pub name: String,
}

/// Opens the input and tells its format (given, or detected).
pub fn detect(args: &InputArgs) -> Result<Detected> {
    let input = Input::open(&args.input).with_context(|| format!("opening {}", args.input))?;
    let format = match args.format.as_deref() {
        _ if args.desc.is_some() => &tramp_desc::format::DESC,
        Some(f) => tramp_formats::parse(f)?,
        None => tramp_formats::detect_input(&input)
            .with_context(|| format!("reading {}", args.input))?,
    };
    Ok(Detected {
        input,
        format,
        name: args.input.clone(),
    })
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

impl Detected {
    /// Decodes the input as records, on a second core beside the command's
    /// own work (tramp_core::ReadAhead).
    pub fn open(self, args: &InputArgs, metadata: bool) -> Result<Opened> {
        self.open_with(args, metadata, true)
    }

    /// Decodes the input as records; `ahead`: on a second core. Commands
    /// that keep that core busy themselves (a zstd output's compressor)
    /// decode on their own thread instead: three busy threads on two cores
    /// ran slower than two.
    pub fn open_with(self, args: &InputArgs, metadata: bool, ahead: bool) -> Result<Opened> {
        let opts = OpenOptions {
            metadata,
            dtd: args.dtd.as_deref().map(read_dtd).transpose()?,
            desc: args.desc.as_deref().map(read_desc).transpose()?,
        };
        tramp_formats::pipeline::open(self.input, Some(self.format), &opts, ahead)
            .with_context(|| format!("reading {}", self.name))
    }
}

/// Opens the input as records (decoded on a second core).
pub fn open(args: &InputArgs, metadata: bool) -> Result<Opened> {
    detect(args)?.open(args, metadata)
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

/// Prints the warnings of a run on stderr, then turns the way it stopped
/// into an error with context: `reading NAME (FORMAT)` for damage (plus
/// `covers`, what the printed output covers), `writing OUT` for a sink.
pub fn end_run(run: Run, o: &Opened, out: Option<&str>, covers: &str) -> Result<()> {
    for w in &run.warnings {
        eprintln!("tramp: warning: {}: {w}", o.name);
    }
    let damage = run.damage();
    let Some(stop) = run.stop else {
        return match damage {
            Some(d) => Err(damaged(&o.name, &o.format.to_string(), &d, covers)),
            None => Ok(()),
        };
    };
    let mut reading = format!("reading {} ({}){covers}", o.name, o.format);
    if let tramp_core::Stop::Read(tramp_core::Error::Io(_)) = &stop {
        // An I/O error has no position of its own: say where the trace stops.
        reading = format!(
            "reading {} ({}): the last whole record read was record {}{covers}",
            o.name, o.format, run.records
        );
    }
    let out = out.unwrap_or("-");
    Err(match stop {
        tramp_core::Stop::Read(e) | tramp_core::Stop::Analysis(e) => {
            anyhow::Error::new(e).context(reading)
        }
        tramp_core::Stop::Write(e) => anyhow::Error::new(e).context(format!("writing {out}")),
        tramp_core::Stop::Finish(e) => anyhow::Error::new(e).context(format!("finishing {out}")),
    })
}

/// The error for a trace whose reader skipped damage (after everything
/// around it was delivered): the run's output stands, the exit is not 0.
/// The damage's own text is tramp-core's, the one every command uses.
pub fn damaged(
    name: &str,
    format: &str,
    damage: &tramp_core::Damage,
    covers: &str,
) -> anyhow::Error {
    anyhow::anyhow!("reading {name} ({format}){covers}: {damage}")
}

/// Prints the damage a Heph reader skipped and, if there was any, returns
/// the error that makes the exit non-zero.
pub fn heph_damage(name: &str, warnings: Vec<tramp_heph::reader::Warning>) -> Result<()> {
    for w in &warnings {
        eprintln!("tramp: warning: {name}: {w}");
    }
    match tramp_core::Damage::of(&warnings, warnings.len() as u64) {
        Some(d) => Err(damaged(name, "heph", &d, "")),
        None => Ok(()),
    }
}
