//! HATF's entries in the format registry: the binary form and the text form.

use std::sync::Arc;

use tramp_core::{CreateOptions, Error, FormatDesc, Holds, Schema, Sink, Sniff, Source};

use crate::Policy;
use crate::records::{HatfSink, HatfSource, HatfTextSink, HatfTextSource};

/// HATF 1.0 binary. It has no magic number, but its first byte is a
/// record tag (0–11), which no text form starts with; an empty input is an
/// empty HATF trace.
pub static HATF: FormatDesc = FormatDesc {
    name: "hatf",
    family: "hatf",
    about: "HATF 1.0 binary heap-allocation trace (extension .hatf)",
    extensions: &[".hatf"],
    sniff: |head| match head.first() {
        None => Sniff::Maybe,
        Some(b) if *b <= crate::spec::TAG_METADATA => Sniff::Maybe,
        _ => Sniff::No,
    },
    text_form: Some("hatf-text"),
    holds: Holds::ByRole(hatf_schema),
    open: |input, opts| Ok(Box::new(HatfSource::new(input, opts.metadata))),
    create: |out, opts| Ok(Box::new(HatfSink::new(out, policy(opts)?))),
};

/// HATF's one-record-per-line text form.
pub static HATF_TEXT: FormatDesc = FormatDesc {
    name: "hatf-text",
    family: "hatf",
    about: "HATF text form, one record per line (extension .hatf.txt or .txt)",
    extensions: &[".hatf.txt", ".txt"],
    // The header's start, so that a file cut inside its header is still
    // read as HATF text (and said to be cut), not taken for another format.
    sniff: |head| Sniff::magic(head, &[crate::text::MAGIC.as_bytes()]),
    text_form: Some("hatf-text"),
    holds: Holds::ByRole(hatf_schema),
    open: |input, _| Ok(Box::new(HatfTextSource::new(input)) as Box<dyn Source + Send>),
    create: |out, _| Ok(Box::new(HatfTextSink::new(out)) as Box<dyn Sink>),
};

/// The policy asked for, else `explicit` for records of HATF's family
/// (keeping their metadata) and `naive` for any other.
fn policy(opts: &CreateOptions<'_>) -> Result<Policy, Error> {
    match opts.policy {
        Some(p) => Policy::parse(p)
            .ok_or_else(|| Error::Usage(format!("unknown policy `{p}` ({})", Policy::names()))),
        None if opts.same_family => Ok(Policy::Explicit),
        None => Ok(Policy::Naive),
    }
}

/// HATF's record schema: what HATF, its text form and tpack hold.
pub fn hatf_schema() -> Arc<Schema> {
    crate::records::schema().clone()
}
