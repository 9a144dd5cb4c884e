//! The one way a trace is opened and run: an input (a path or `-`,
//! compressed or not) is given its format (named, or detected from its
//! first bytes and name), decoded as records (on a second core, through
//! `tramp_core::ReadAhead`, unless the caller keeps that core busy), and
//! run through views, analyses and sinks by `tramp_core::drive`, whose
//! [`Run`] carries how it stopped and the one damage summary.
//!
//! It lives here rather than in `tramp-core` because detection needs the
//! list of formats, which only this crate knows. The CLI's commands,
//! `tramp replay` and `tramp cachesim` open through it; `tramp run` opens
//! tramp formats by the same detection and runs them through the same
//! driver, but decides on read-ahead only once the script is compiled.

use tramp_core::{Error, Observe, OpenOptions, Run, Sink, Source, drive};
use tramp_io::Input;
use tramp_io::Progress;

use crate::Format;

/// An input opened as records, with its progress bar.
pub struct Opened {
    pub source: Box<dyn Source>,
    pub format: Format,
    pub progress: Progress,
    /// The input's name, for messages.
    pub name: String,
}

/// Opens `input` as records of `format` (`None`: detected). `ahead`:
/// decode on a second core.
pub fn open(
    input: Input,
    format: Option<Format>,
    opts: &OpenOptions,
    ahead: bool,
) -> Result<Opened, Error> {
    let format = match format {
        Some(f) => f,
        None => crate::detect_input(&input)?,
    };
    let progress = Progress::of(&input);
    let name = input.name.clone();
    let source = (format.open)(input.reader, opts)?;
    let source: Box<dyn Source> = if ahead {
        tramp_core::ahead::on_a_spare_core(source)?
    } else {
        source
    };
    Ok(Opened {
        source,
        format,
        progress,
        name,
    })
}

impl Opened {
    /// Runs every record through `analyses` (views are analyses that feed
    /// their own) and `sinks`, with this input's progress bar.
    pub fn run(&mut self, analyses: &mut [&mut dyn Observe], sinks: Vec<Box<dyn Sink>>) -> Run {
        drive(&mut *self.source, analyses, sinks, &mut self.progress)
    }
}

/// The note a trace carries when its addresses are made up (a heaptrack
/// file's: docs/formats/heaptrack.md).
pub const SYNTHETIC_NOTE: &[u8] = tramp_heaptrack::interpreted::SYNTHETIC_NOTE.as_bytes();

/// A source that stops with an error at the note of a trace whose
/// addresses are made up: for commands whose answers are about real
/// addresses (replaying them into an allocator, caching their lines).
/// The note comes before any heap record, so nothing is done with them.
pub struct RealAddresses {
    inner: Box<dyn Source>,
    /// What refuses, for the message (`replay`).
    command: &'static str,
}

impl RealAddresses {
    pub fn new(inner: Box<dyn Source>, command: &'static str) -> RealAddresses {
        RealAddresses { inner, command }
    }
}

fn refusal(command: &str) -> Error {
    Error::Usage(format!(
        "the trace's addresses are synthetic (tramp made them up for a file that has none, \
         such as heaptrack's): `tramp {command}` would work on addresses no program used; \
         --synthetic-ok runs it anyway"
    ))
}

fn is_synthetic(rec: &tramp_core::Record<'_>) -> bool {
    rec.record_type().kind == tramp_core::RecordKind::Comment
        && rec
            .role(tramp_core::Role::Text)
            .and_then(|v| v.as_bytes())
            .is_some_and(|t| t == SYNTHETIC_NOTE)
}

impl Source for RealAddresses {
    fn schema(&self) -> &std::sync::Arc<tramp_core::Schema> {
        self.inner.schema()
    }

    fn next_record(&mut self) -> Result<Option<tramp_core::Record<'_>>, Error> {
        let command = self.command;
        let rec = self.inner.next_record()?;
        if rec.as_ref().is_some_and(is_synthetic) {
            return Err(refusal(command));
        }
        Ok(rec)
    }

    fn next_item(&mut self) -> Result<Option<tramp_core::Item<'_>>, Error> {
        let command = self.command;
        let item = self.inner.next_item()?;
        if let Some(tramp_core::Item::Record(r)) = &item
            && is_synthetic(r)
        {
            return Err(refusal(command));
        }
        Ok(item)
    }

    fn position(&self) -> tramp_core::Position {
        self.inner.position()
    }

    fn header(&self) -> &tramp_core::Header {
        self.inner.header()
    }
}

impl Opened {
    /// Refuses a trace whose schema holds none of what a command works on
    /// (its tables would be all zeros): `needs` says what `tramp COMMAND`
    /// needs, and the error what the trace holds instead.
    pub fn require(&self, holds: bool, command: &str, needs: &str) -> Result<(), Error> {
        if holds {
            return Ok(());
        }
        Err(Error::Usage(format!(
            "{} ({}) holds {}: `tramp {command}` needs {needs}",
            self.name,
            self.format,
            self.source.schema().domains().describe()
        )))
    }

    /// Stops at the note of a trace with synthetic addresses
    /// ([`RealAddresses`]).
    pub fn refuse_synthetic(&mut self, command: &'static str) {
        let inner = std::mem::replace(&mut self.source, Box::new(Empty));
        self.source = Box::new(RealAddresses::new(inner, command));
    }
}

/// No records (a placeholder while a source is wrapped).
struct Empty;

impl Source for Empty {
    fn schema(&self) -> &std::sync::Arc<tramp_core::Schema> {
        static EMPTY: std::sync::OnceLock<std::sync::Arc<tramp_core::Schema>> =
            std::sync::OnceLock::new();
        EMPTY.get_or_init(|| tramp_core::Schema::new("empty").shared())
    }

    fn next_record(&mut self) -> Result<Option<tramp_core::Record<'_>>, Error> {
        Ok(None)
    }

    fn position(&self) -> tramp_core::Position {
        tramp_core::Position::default()
    }
}
