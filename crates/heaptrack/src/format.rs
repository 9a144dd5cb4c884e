//! heaptrack in the format registry: the interpreted file read as HATF's
//! records (through HATF's `ItemSource`), so every heap analysis and every
//! heap format takes it.

use tramp_core::{Error, FormatDesc, Holds, Sniff};
use tramp_hatf::records::ItemSource;

use crate::interpreted::InterpretedReader;

/// The interpreted heaptrack file (`heaptrack.APP.PID.zst`): text whose
/// first line is `v HEAPTRACK_VERSION FILE_VERSION`.
pub static HEAPTRACK: FormatDesc = FormatDesc {
    name: "heaptrack",
    family: "heaptrack",
    about: "heaptrack's interpreted file (heaptrack.APP.PID.zst): sizes and call stacks, read with synthetic addresses",
    extensions: &[".heaptrack"],
    sniff,
    text_form: Some("hatf-text"),
    holds: Holds::Nothing,
    open: |input, _| {
        Ok(Box::new(ItemSource::from_reader(InterpretedReader::new(
            input,
        ))))
    },
    create: |_, _| {
        Err(Error::Usage(
            "writing heaptrack files is not built yet; convert to tpack or HATF".into(),
        ))
    },
};

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
