//! `tramp spans`: span analysis of a Heph trace.

use anyhow::Result;
use clap::Args;

use super::{Detected, InputArgs, print_report};

/// Analyse the spans of a Heph trace. An event is the child of the event
/// that contains it in time on the same stream and substream (Heph writes
/// no parent ids). Prints, per description: count, total time, self time
/// (total minus the time covered by its children), p50 and p99 of the
/// durations (to within 1 %); then, per stream, gaps in the event counter
/// (missed events, with wrap-around at 2^32 and late, out-of-order events
/// filling their gap). With `--tree STREAM[:SUBSTREAM]`, prints that
/// stream's span tree instead.
#[derive(Args)]
pub struct SpansArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Print the span tree of this stream (all its substreams) or of one
    /// substream (`STREAM:SUBSTREAM`).
    #[arg(long, value_name = "STREAM[:SUBSTREAM]")]
    tree: Option<String>,
    /// Missing-counter ranges listed per stream.
    #[arg(long, default_value_t = 10)]
    max_ranges: usize,
}

pub fn run(a: SpansArgs) -> Result<()> {
    let d = super::detect(&a.input)?;
    let opts = tramp_heph::summary::Options {
        tree: a.tree.as_deref().map(tramp_api::heph::tree).transpose()?,
        max_ranges: a.max_ranges,
        top: None,
    };
    summarize(d, opts, false)
}

/// Reads a Heph trace natively (borrowed packets) into its summary, prints
/// it, then the damage the reader skipped over.
pub fn summarize(d: Detected, opts: tramp_heph::summary::Options, json: bool) -> Result<()> {
    let s = tramp_api::heph::summarize(d, opts)?;
    print_report(&s.outcome(), json)?;
    super::warn(&s.name, &s.warnings);
    Ok(s.end()?)
}
