//! `tramp export`: a trace in a viewer's format.

use anyhow::{Context, Result, bail};
use clap::Args;
use tramp_core::Progress;
use tramp_core::io::Output;

use super::InputArgs;

/// Export a trace for a viewer: `--chrome OUT.json` writes the Chrome
/// Trace Event format that Perfetto (ui.perfetto.dev) and chrome://tracing
/// open. For Heph traces each stream becomes a process and each substream
/// a thread (with `process_name`/`thread_name` metadata events), each event
/// a complete event with its attributes (arrays included) as args;
/// timestamps are microseconds after the trace's epoch with nanosecond
/// decimals, the epoch is in `otherData.epoch_ns`. NaN and infinities
/// become the strings "NaN", "Infinity", "-Infinity". Damaged packets are
/// skipped with a warning; every whole packet is exported.
#[derive(Args)]
pub struct ExportArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Write Chrome Trace Event JSON here (`-` for stdout; .gz/.zst/.xz
    /// compress).
    #[arg(long, value_name = "OUT.json")]
    chrome: String,
}

pub fn run(a: ExportArgs) -> Result<()> {
    let d = super::detect(&a.input)?;
    // The export reads Heph's packets directly.
    if d.format.family != tramp_heph::records::FORMAT {
        bail!("--chrome exports Heph traces; {} is {}", d.name, d.format);
    }
    let mut progress = Progress::of(&d.input);
    let mut reader = tramp_heph::Reader::new(d.input.reader);
    let out = Output::create(&a.chrome, None).with_context(|| format!("creating {}", a.chrome))?;
    let out = tramp_heph::chrome::export(&mut reader, out, &mut progress)
        .with_context(|| format!("exporting {} to {}", d.name, a.chrome))?;
    out.finish()
        .with_context(|| format!("finishing {}", a.chrome))?;
    super::heph_damage(&d.name, reader.take_warnings())
}
