//! Heph's entry in the format registry.

use tramp_core::{FormatDesc, Holds, Sniff};

use crate::packet::{EVENT_MAGIC, METADATA_MAGIC};
use crate::records::{HephSink, HephSource};

/// Heph's trace format: metadata and event packets, big-endian.
pub static HEPH: FormatDesc = FormatDesc {
    name: "heph",
    family: "heph",
    about: "Heph actor-runtime trace: metadata and event packets with typed attributes (extension .heph or .bin.log)",
    extensions: &[".heph", ".bin.log"],
    sniff: |head| {
        Sniff::magic(
            head,
            &[&METADATA_MAGIC.to_be_bytes(), &EVENT_MAGIC.to_be_bytes()],
        )
    },
    text_form: None,
    holds: Holds::Nothing,
    open: |input, _| Ok(Box::new(HephSource::new(input))),
    create: |out, _| Ok(Box::new(HephSink::new(out))),
};
