//! Described traces as a tramp format: `tramp-desc`, read-only, never
//! detected (a layout without magic); commands open it with `--desc FILE`,
//! which hands the description's text to the reader.

use std::sync::Arc;

use tramp_core::{Error, FormatDesc, Holds, Sniff};

use crate::source::DescSource;

/// The registered format.
pub static DESC: FormatDesc = FormatDesc {
    name: "tramp-desc",
    family: "tramp-desc",
    about: "a binary trace in the layout a TRAMP format description gives (read with --desc FILE; read-only)",
    extensions: &[],
    sniff: |_| Sniff::No,
    text_form: None,
    holds: Holds::Nothing,
    open: |input, opts| {
        let text = opts.desc.as_deref().ok_or_else(|| {
            Error::Missing("a described trace needs its description: --desc FILE".into())
        })?;
        let desc = crate::parse(text)
            .map_err(|d| Error::Language(tramp_diag::render("description", text, &[d])))?;
        Ok(Box::new(DescSource::new(Arc::new(desc), input)))
    },
    create: |_, _| {
        Err(Error::Usage(
            "tramp-desc is read-only; write a described layout with a TRAMP script's spit (tramp run)"
                .into(),
        ))
    },
};
