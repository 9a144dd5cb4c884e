//! `tramp export --chrome`: a Heph trace as Chrome Trace Event JSON.

use anyhow::{Context, Result, bail};
use tramp_io::Output;
use tramp_io::Progress;

use super::InputArgs;

/// A Heph trace as Chrome Trace Event JSON.
pub fn run(input: &InputArgs, path: &str) -> Result<()> {
    let d = super::detect(input)?;
    // The export reads Heph's packets directly.
    if d.format.family != tramp_heph::records::FORMAT {
        bail!("--chrome exports Heph traces; {} is {}", d.name, d.format);
    }
    let mut progress = Progress::of(&d.input);
    let mut reader = tramp_heph::Reader::new(d.input.reader);
    let out = Output::create(path, None).with_context(|| format!("creating {path}"))?;
    let out = tramp_heph::chrome::export(&mut reader, out, &mut progress)
        .with_context(|| format!("exporting {} to {path}", d.name))?;
    out.finish().with_context(|| format!("finishing {path}"))?;
    super::heph_damage(&d.name, reader.take_warnings())
}
