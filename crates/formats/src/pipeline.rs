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

use tramp_core::io::Input;
use tramp_core::{Error, Observe, OpenOptions, Progress, Run, Sink, Source, drive};

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
        Box::new(tramp_core::ReadAhead::new(source)?)
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
