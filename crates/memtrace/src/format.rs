//! The memory-access traces in the format registry (read only: tramp
//! writes them as tpack, Meta-TF or text).

use tramp_core::{Error, FormatDesc, Holds, Sniff};

/// valgrind lackey's `--trace-mem=yes` log.
pub static LACKEY: FormatDesc = FormatDesc {
    name: "lackey",
    family: "memtrace",
    about: "valgrind lackey's memory trace (--trace-mem=yes: I, L, S, M lines with address and size; ==PID== lines skipped), read only",
    extensions: &[".lackey"],
    sniff: sniff_lackey,
    text_form: None,
    holds: Holds::Nothing,
    open: |input, _| Ok(Box::new(crate::lackey::reader(input))),
    create: |_, _| Err(read_only("lackey")),
};

/// Dinero IV's din input.
pub static DIN: FormatDesc = FormatDesc {
    name: "din",
    family: "memtrace",
    about: "Dinero IV din trace (LABEL ADDRESS lines: 0 read, 1 write, 2 fetch, 3 unknown, 4 flush), read only",
    extensions: &[".din"],
    sniff: sniff_din,
    text_form: None,
    holds: Holds::Nothing,
    open: |input, _| Ok(Box::new(crate::din::reader(input))),
    create: |_, _| Err(read_only("din")),
};

fn read_only(name: &str) -> Error {
    Error::Usage(format!(
        "tramp reads {name} traces; it does not write them (convert to tpack or Meta-TF)"
    ))
}

/// valgrind's banner naming lackey, or a first line that is an access.
fn sniff_lackey(head: &[u8]) -> Sniff {
    let first = head.split(|&b| b == b'\n').next().unwrap_or(head);
    if first.starts_with(b"==") && first.ends_with(b"== Lackey, an example Valgrind tool") {
        return Sniff::Yes;
    }
    match crate::lackey::parse(first) {
        Ok(Some(_)) if head.contains(&b'\n') => Sniff::Yes,
        _ => Sniff::No,
    }
}

/// Lines of a label and a hexadecimal address: nothing marks din, so only
/// when no other format claims the bytes and the name says nothing.
fn sniff_din(head: &[u8]) -> Sniff {
    let mut lines = head.split(|&b| b == b'\n');
    let complete = lines.clone().count() > 1;
    let first = lines.next().unwrap_or(head);
    match crate::din::parse(first) {
        Ok(Some(_)) if complete => Sniff::Maybe,
        _ => Sniff::No,
    }
}
