//! heaptrack in the format registry: the interpreted file read as HATF's
//! records (through HATF's `ItemSource`), so every heap analysis and every
//! heap format takes it.

use std::sync::{Arc, OnceLock};

use tramp_core::{FieldDef, FieldType, FormatDesc, Holds, RecordKind, Role, Schema, Sniff};
use tramp_hatf::records::ItemSource;

use crate::interpreted::InterpretedReader;
use crate::writer::HeaptrackSink;

/// The interpreted heaptrack file (`heaptrack.APP.PID.zst`): text whose
/// first line is `v HEAPTRACK_VERSION FILE_VERSION`.
pub static HEAPTRACK: FormatDesc = FormatDesc {
    name: "heaptrack",
    family: "heaptrack",
    about: "heaptrack's interpreted file (heaptrack.APP.PID.zst): sizes and call stacks, read with synthetic addresses",
    extensions: &[".heaptrack"],
    sniff,
    text_form: Some("hatf-text"),
    holds: Holds::ByRole(written),
    open: |input, _| {
        Ok(Box::new(ItemSource::from_reader(InterpretedReader::new(
            input,
        ))))
    },
    // The writer spills its events beside the output and appends them at
    // the end as they are (compressed alike), which needs the output
    // itself: tramp-io's, behind every file, pipe and stdout.
    create: |out, _| match out.into_any().downcast::<tramp_io::Output>() {
        Ok(out) => Ok(Box::new(HeaptrackSink::new(*out)?)),
        Err(_) => Err(tramp_core::Error::Usage(
            "heaptrack's writer needs a file or a pipe (tramp-io's Output)".into(),
        )),
    },
};

/// What a heaptrack file holds of a heap trace: allocations with their
/// size, time (to the millisecond) and call stack, frees and reallocs
/// (of blocks it names by size and stack), and notes. No addresses, no
/// threads, no heaps: a conversion that has them needs `--lossy`.
fn written() -> Arc<Schema> {
    static SCHEMA: OnceLock<Arc<Schema>> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            let f = |n: &str, t: FieldType, r: Role| FieldDef::new(n, t, Some(r));
            let size = || f("size", FieldType::U64, Role::Size);
            let time = || f("time", FieldType::U64, Role::Time);
            let stack = || f("attributes", FieldType::Bytes, Role::Attributes);
            let mut s = Schema::new("heaptrack");
            s.add_type("alloc", RecordKind::Alloc, vec![size(), time(), stack()]);
            s.add_type("free", RecordKind::Free, vec![time()]);
            s.add_realloc_types(|| vec![size(), time(), stack()]);
            s.add_type(
                "comment",
                RecordKind::Comment,
                vec![f("text", FieldType::Bytes, Role::Text)],
            );
            Arc::new(s)
        })
        .clone()
}

/// `v ` then two hexadecimal numbers on the first line.
fn sniff(head: &[u8]) -> Sniff {
    let Some(rest) = head.strip_prefix(b"v ") else {
        return Sniff::No;
    };
    let line = rest.split(|&b| b == b'\n').next().unwrap_or(rest);
    let fields: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
    let hex = |f: &[u8]| !f.is_empty() && f.len() <= 16 && f.iter().all(u8::is_ascii_hexdigit);
    if fields.len() == 2 && fields.iter().all(|f| hex(f)) && rest.len() > line.len() {
        Sniff::Yes
    } else {
        Sniff::No
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_line_tells() {
        assert_eq!(sniff(b"v 10400 3\nX ./prog\n"), Sniff::Yes);
        assert_eq!(sniff(b"v 10400\n"), Sniff::No);
        assert_eq!(sniff(b"alloc size=1\n"), Sniff::No);
        assert_eq!(sniff(b"v 1g 3\n"), Sniff::No);
    }
}
