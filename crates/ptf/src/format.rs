//! PTF's entries in the format registry: the binary and the ASCII form.

use tramp_core::{Domain, FormatDesc, Sniff};

use crate::records::{PtfSink, PtfSource};

/// PTF binary: the `PTF 1.0` version line, notes, then LEB128 events.
pub static PTF: FormatDesc = FormatDesc {
    name: "ptf",
    family: "ptf",
    about: "PTF persistent-object-store trace, binary: `PTF 1.0` header, LEB128 events (extension .ptf)",
    extensions: &[".ptf"],
    sniff: |head| Sniff::magic(head, &[crate::binary::VERSION_PREFIX.as_bytes()]),
    domain: Domain::Objects,
    text_form: Some("ptf-text"),
    open: |input, _| Ok(Box::new(PtfSource::open(input)?)),
    create: |out, opts| Ok(Box::new(PtfSink::new(out, false, &opts.header.notes)?)),
};

/// PTF's ASCII form: notes, `Trace begin`, one event per line, `Trace end`.
pub static PTF_TEXT: FormatDesc = FormatDesc {
    name: "ptf-text",
    family: "ptf",
    about: "PTF ASCII form: notes, `Trace begin`, one event per line, `Trace end` (extension .ptf.txt)",
    extensions: &[".ptf.txt"],
    sniff: |head| Sniff::magic(head, &[crate::ascii::BEGIN.as_bytes()]),
    domain: Domain::Objects,
    text_form: Some("ptf-text"),
    open: |input, _| Ok(Box::new(PtfSource::open(input)?)),
    create: |out, opts| Ok(Box::new(PtfSink::new(out, true, &opts.header.notes)?)),
};
