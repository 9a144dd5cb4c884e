//! The universal Meta-TF codec: any DTD, run from its compiled
//! [`Plan`](crate::plan::Plan), as a tramp [`Source`](tramp_core::Source)
//! ([`MetaSource`]) and [`Sink`](tramp_core::Sink) ([`MetaSink`]).
//!
//! * [`container`]: the file around the records (docs/formats/metatf.md,
//!   "Trace files"): the Appendix B header (`\x7fMTF`, class, byte order,
//!   DTD name, section index), the DTD's own text as section 0 when it is
//!   embedded, and the data sections.
//! * `state`: what metadata records change as the trace goes on (a field's
//!   width or interpretation for one record type in the current section,
//!   previous values, the current section), shared by both directions.
//! * [`decoder`] / [`encoder`]: the record stream, both ways.

pub mod container;
pub mod decoder;
pub mod encoder;
mod state;

pub use container::{DataSection, Header, SectionSink, read_header, read_header_sections};
pub use decoder::MetaSource;
pub use encoder::MetaSink;

pub const MAGIC: [u8; 4] = [0x7f, b'M', b'T', b'F'];
const FORMAT: &str = "metatf";
/// Longest record accepted (a width taken from a field could claim more).
pub const MAX_RECORD: usize = 16 << 20;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetaError {
    #[error("not a Meta-TF trace (magic {0:02x?}, expected 7f 4d 54 46)")]
    Magic(Vec<u8>),
    /// The input failed while a part of the file was read (a damaged or
    /// cut compressed stream, a read error).
    #[error("the {what} cannot be read: {why}")]
    Unreadable { what: String, why: String },
    #[error("header field {field} has an impossible value {value}")]
    Header { field: &'static str, value: u64 },
    #[error("the header's section index points past the end of the file ({0})")]
    Index(String),
    /// A field that reads a data section, and what is wrong with it.
    #[error("data section: {0}")]
    DataSection(String),
    #[error("the trace names DTD `{0}` and does not embed it; pass its file (--dtd)")]
    NoDtd(String),
    #[error("the embedded DTD does not check: {0}")]
    BadDtd(String),
    #[error("unknown tag {tag} in section {section}")]
    UnknownTag { tag: u64, section: u8 },
    #[error("record `{record}` is cut short: it needs {needed} bytes, the input has {available}")]
    Truncated {
        record: String,
        needed: usize,
        available: usize,
    },
    #[error("field `{field}` of `{record}` claims {len} bytes (at most {MAX_RECORD})")]
    Absurd {
        record: String,
        field: String,
        len: u64,
    },
    #[error("metadata names record tag {tag}, field {field}, property {property}: {why}")]
    Metadata {
        tag: u64,
        field: u64,
        property: u64,
        why: String,
    },
    #[error("field `{field}` of `{record}`: {why}")]
    Encode {
        record: String,
        field: String,
        why: String,
    },
    #[error("record type `{0}` has no place in this DTD")]
    Unmapped(String),
}

pub(crate) fn put(out: &mut Vec<u8>, v: u64, n: usize, big: bool) {
    let b = v.to_le_bytes();
    if big {
        out.extend(b[..n].iter().rev());
    } else {
        out.extend_from_slice(&b[..n]);
    }
}

#[inline(always)]
pub(crate) fn get(b: &[u8], big: bool) -> u64 {
    match (b.len(), big) {
        (1, _) => return b[0] as u64,
        (2, true) => return u16::from_be_bytes([b[0], b[1]]) as u64,
        (2, false) => return u16::from_le_bytes([b[0], b[1]]) as u64,
        (4, true) => return u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as u64,
        (4, false) => return u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64,
        (8, true) => return u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        (8, false) => return u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        _ => {}
    }
    let mut v = 0u64;
    if big {
        for x in b {
            v = v << 8 | *x as u64;
        }
    } else {
        for x in b.iter().rev() {
            v = v << 8 | *x as u64;
        }
    }
    v
}
