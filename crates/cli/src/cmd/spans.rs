//! `tramp spans`: span analysis of a Heph trace.

use anyhow::{Context, Result, bail};
use clap::Args;
use tramp_io::Progress;

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
    // Spans are inferred from Heph's packets, read here directly.
    if d.format.family != tramp_heph::records::FORMAT {
        bail!(
            "spans are inferred for Heph traces; {} is {}",
            d.name,
            d.format
        );
    }
    let tree = match a.tree.as_deref() {
        None => None,
        Some(t) => {
            let (s, sub) = match t.split_once(':') {
                Some((s, sub)) => (
                    s,
                    Some(
                        sub.parse::<u64>()
                            .with_context(|| format!("substream `{sub}`"))?,
                    ),
                ),
                None => (t, None),
            };
            Some((
                s.parse::<u32>().with_context(|| format!("stream `{s}`"))?,
                sub,
            ))
        }
    };
    let opts = tramp_heph::summary::Options {
        tree,
        max_ranges: a.max_ranges,
        top: None,
    };
    summarize(d, opts, false)
}

/// Reads a Heph trace natively (borrowed packets) into its summary, prints
/// it, then the damage the reader skipped over.
pub fn summarize(d: Detected, opts: tramp_heph::summary::Options, json: bool) -> Result<()> {
    let mut progress = Progress::of(&d.input);
    let mut reader = tramp_heph::Reader::new(d.input.reader);
    let summary = tramp_heph::summary::summarize(&mut reader, opts, &mut progress)
        .with_context(|| format!("reading {}", d.name))?;
    let warnings = reader.take_warnings();
    let shown = tramp_core::Outcome {
        report: &summary,
        complete: warnings.is_empty(),
        damage: tramp_core::Damage::of(&warnings, warnings.len() as u64),
    };
    print_report(&shown, json)?;
    if let Some(why) = summary.tree_refusal() {
        anyhow::bail!("--tree: {why}");
    }
    super::heph_damage(&d.name, warnings)
}
