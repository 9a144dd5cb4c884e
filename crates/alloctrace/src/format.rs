//! The allocation traces in the format registry: read as HATF's records
//! (through HATF's `ItemSource`), so every heap analysis and heap format
//! takes them.

use tramp_core::{Error, FormatDesc, Holds, Sniff};
use tramp_hatf::records::ItemSource;

use crate::mtrace::MtraceReader;

/// glibc's mtrace log: text that starts `= Start`.
pub static MTRACE: FormatDesc = FormatDesc {
    name: "mtrace",
    family: "mtrace",
    about: "glibc's mtrace() log (MALLOC_TRACE with libc_malloc_debug.so): allocations, frees, reallocs and their callers",
    extensions: &[".mtrace"],
    sniff: |head| Sniff::magic(head, &[b"= Start\n"]),
    text_form: Some("hatf-text"),
    holds: Holds::Nothing,
    open: |input, _| Ok(Box::new(ItemSource::from_reader(MtraceReader::new(input)))),
    create: |_, _| {
        Err(Error::Usage(
            "tramp reads mtrace logs; it does not write them (convert to tpack or HATF)".into(),
        ))
    },
};
