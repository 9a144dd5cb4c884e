//! Meta-TF's entries in the format registry: traces of any DTD, binary and
//! text.

use std::sync::Arc;

use tramp_core::{Error, FormatDesc, Header, Holds, Schema, Sniff};

use crate::codec::{MAGIC, MetaSink, MetaSource};
use crate::text::{HEADER, MetaTextSink, MetaTextSource};

/// A Meta-TF trace of any DTD (embedded, or given with `--dtd`).
pub static METATF: FormatDesc = FormatDesc {
    name: "metatf",
    family: "metatf",
    about: "Meta-TF trace of any DTD, \\x7fMTF header, DTD embedded (extension .mtf)",
    extensions: &[".mtf"],
    sniff: |head| Sniff::magic(head, &[&MAGIC]),
    text_form: Some("metatf-text"),
    holds: Holds::ByName(described),
    open: |input, opts| Ok(Box::new(MetaSource::open(input, opts.dtd.as_deref())?)),
    create: |out, opts| {
        Ok(Box::new(MetaSink::new(
            out,
            need_dtd(opts.header.dtd.as_deref(), "metatf")?,
            false,
        )?))
    },
};

/// Meta-TF's text form: the DTD on `#| ` lines, then one record per line.
pub static METATF_TEXT: FormatDesc = FormatDesc {
    name: "metatf-text",
    family: "metatf",
    about: "Meta-TF text form: the DTD, then one record per line (extension .mtf.txt)",
    extensions: &[".mtf.txt"],
    sniff: |head| Sniff::magic(head, &[HEADER.as_bytes()]),
    text_form: Some("metatf-text"),
    holds: Holds::OwnOnly(
        "the Meta-TF text form holds records of its DTD only (convert to metatf, which maps records by name and kind)",
    ),
    open: |input, opts| Ok(Box::new(MetaTextSource::open(input, opts.dtd.as_deref())?)),
    create: |out, opts| {
        Ok(Box::new(MetaTextSink::new(
            out,
            need_dtd(opts.header.dtd.as_deref(), "metatf-text")?,
        )?))
    },
};

fn need_dtd<'a>(dtd: Option<&'a str>, format: &str) -> Result<&'a str, Error> {
    dtd.ok_or_else(|| Error::Missing(format!("writing {format} needs a DTD: pass --dtd FILE")))
}

/// The schema a Meta-TF output writes: its DTD's.
fn described(header: &Header) -> Result<Arc<Schema>, Error> {
    let text = header
        .dtd
        .as_deref()
        .ok_or_else(|| Error::Missing("a Meta-TF output needs a DTD (--dtd FILE)".into()))?;
    let dtd =
        crate::load(text).map_err(|d| Error::Language(tramp_diag::render("dtd", text, &d)))?;
    Ok(crate::plan::Plan::compile(&dtd).schema.clone())
}
