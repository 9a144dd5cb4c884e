//! `tramp dump`: a trace as text, one record per line.

use anyhow::{Context, Result};
use clap::Args;
use tramp_core::drive;
use tramp_io::Output;

use super::{InputArgs, end_run};

/// Print a trace as text, one record per line: HATF traces in the HATF
/// text form (metadata records included), Meta-TF in its text form, PTF in
/// its ASCII form, so that `tramp convert` can turn it back into the
/// identical binary; Heph (which has no text form of its own) in tramp's
/// generic text form (`type field=value …`). See `tramp formats`.
///
/// A recording's allocations end with a note naming their site by function
/// and line (`  # strdup (libc.so.6+0x9e9aa)`), from the trace's own module
/// map; the text reader ignores notes, so the text converts back to the
/// same bytes.
#[derive(Args)]
pub struct DumpArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Write here instead of stdout (compressed by extension).
    #[arg(short, long, default_value = "-")]
    output: String,
}

pub fn run(a: DumpArgs) -> Result<()> {
    let mut o = super::open(&a.input, true)?;
    let out = Output::create(&a.output, None).with_context(|| format!("creating {}", a.output))?;
    let sink = match o.format.text_form {
        // HATF text (of HATF and tpack): a recording's allocations carry
        // their site as a note the reader ignores.
        Some("hatf-text") => Box::new(tramp_record::notes::NotedText::new(out)),
        Some(text) => tramp_formats::create_sink(
            out,
            tramp_formats::parse(text)?,
            Some(o.format),
            Some("explicit"),
            o.source.header(),
        )?,
        None => Box::new(tramp_core::text::TextSink::new(out)),
    };
    let run = drive(&mut *o.source, &mut [], vec![sink], &mut o.progress);
    let covers = "";
    end_run(run, &o, Some(&a.output), covers)
}
