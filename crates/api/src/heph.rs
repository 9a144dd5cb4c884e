//! Heph traces read natively (borrowed packets, no records): the span
//! summary with its outcome, and the `STREAM[:SUBSTREAM]` a span tree is
//! asked of.

use tramp_core::{Damage, Outcome, Warning};
use tramp_heph::summary::{Options, Summary};

use crate::Error;
use crate::input::Detected;

/// A Heph trace's summary and the damage its reader skipped.
pub struct Summarized {
    pub summary: Summary,
    pub warnings: Vec<Warning>,
    pub name: String,
}

/// Reads a Heph trace into its summary.
pub fn summarize(d: Detected, opts: Options) -> Result<Summarized, Error> {
    if d.format.family != tramp_heph::records::FORMAT {
        return Err(Error::NotApplicable(format!(
            "spans are inferred for Heph traces; {} is {}",
            d.name, d.format
        )));
    }
    let mut progress = tramp_io::Progress::of(&d.input);
    let mut reader = tramp_heph::Reader::new(d.input.reader);
    let summary =
        tramp_heph::summary::summarize(&mut reader, opts, &mut progress).map_err(|source| {
            Error::Heph {
                path: d.name.clone(),
                source,
            }
        })?;
    Ok(Summarized {
        summary,
        warnings: reader.take_warnings(),
        name: d.name,
    })
}

impl Summarized {
    /// The summary with how much of the trace it covers.
    pub fn outcome(&self) -> Outcome<'_, Summary> {
        Outcome {
            report: &self.summary,
            complete: self.warnings.is_empty(),
            damage: Damage::of(&self.warnings, self.warnings.len() as u64),
        }
    }

    /// `Ok` unless a span tree could not be drawn or damage was skipped.
    pub fn end(&self) -> Result<(), Error> {
        if let Some(why) = self.summary.tree_refusal() {
            return Err(Error::Invalid(format!("--tree: {why}")));
        }
        match crate::ending::end_warnings(&self.name, "heph", &self.warnings) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// `STREAM` or `STREAM:SUBSTREAM`, as `--tree` takes it.
pub fn tree(s: &str) -> Result<(u32, Option<u64>), Error> {
    let (stream, sub) = match s.split_once(':') {
        Some((stream, sub)) => (stream, Some(sub)),
        None => (s, None),
    };
    let sub = sub
        .map(|t| {
            t.parse::<u64>()
                .map_err(|e| Error::Invalid(format!("substream `{t}`: {e}")))
        })
        .transpose()?;
    let stream = stream
        .parse::<u32>()
        .map_err(|e| Error::Invalid(format!("stream `{stream}`: {e}")))?;
    Ok((stream, sub))
}
