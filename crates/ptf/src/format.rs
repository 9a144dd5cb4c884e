//! PTF's entries in the format registry: the binary and the ASCII form.

use tramp_core::{FormatDesc, Holds, Sniff};

use crate::records::{PtfSink, PtfSource};

/// PTF binary: the `PTF 1.0` version line, notes, then LEB128 events.
pub static PTF: FormatDesc = FormatDesc {
    name: "ptf",
    family: "ptf",
    about: "PTF persistent-object-store trace, binary: `PTF 1.0` header, LEB128 events (extension .ptf)",
    extensions: &[".ptf"],
    sniff: |head| Sniff::magic(head, &[crate::binary::VERSION_PREFIX.as_bytes()]),
    text_form: Some("ptf-text"),
    holds: Holds::Nothing,
    open: |input, _| Ok(Box::new(PtfSource::open(input)?)),
    create: |out, opts| Ok(Box::new(PtfSink::new(out, false, &opts.header.notes)?)),
};

/// PTF's ASCII form: notes, `Trace begin`, one event per line, `Trace end`.
pub static PTF_TEXT: FormatDesc = FormatDesc {
    name: "ptf-text",
    family: "ptf",
    about: "PTF ASCII form: notes, `Trace begin`, one event per line, `Trace end` (extension .ptf.txt)",
    extensions: &[".ptf.txt"],
    // `Trace begin` starts the trace, or a line of it after the notes.
    sniff: |head| {
        let begin = crate::ascii::BEGIN.as_bytes();
        let line_starts = std::iter::once(0).chain(
            head.iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .map(|(i, _)| i + 1),
        );
        let found = line_starts.into_iter().any(|i| {
            head[i..].starts_with(begin)
                && matches!(head.get(i + begin.len()), None | Some(b'\n' | b'\r'))
        });
        if found { Sniff::Yes } else { Sniff::No }
    },
    text_form: Some("ptf-text"),
    holds: Holds::Nothing,
    open: |input, _| Ok(Box::new(PtfSource::open(input)?)),
    create: |out, opts| Ok(Box::new(PtfSink::new(out, true, &opts.header.notes)?)),
};
