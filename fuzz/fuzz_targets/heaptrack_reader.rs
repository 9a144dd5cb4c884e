//! Untrusted bytes as a heaptrack file (interpreted or raw): never a panic
//! or a hang; in an interpreted file every allocation gets an address no
//! live block has; a damaged line ends the read with its line number.
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use tramp_hatf::{EventKind, Item};
use tramp_heaptrack::InterpretedReader;

fuzz_target!(|data: &[u8]| {
    let mut r = InterpretedReader::new(data);
    let mut live: HashSet<u64> = HashSet::new();
    // Only made-up addresses are the reader's to keep apart (a raw file's
    // are the file's own).
    let mut synthetic = false;
    loop {
        match r.next_item() {
            Ok(Some(Item::Event(e))) => match e.kind {
                EventKind::Alloc => {
                    assert!(live.insert(e.address) || !synthetic, "address reused while live")
                }
                EventKind::Free => {
                    live.remove(&e.address);
                }
                _ => {}
            },
            Ok(Some(Item::Comment(c))) => {
                synthetic |= c == b"tramp:addresses synthetic";
                // Notes tramp writes parse back.
                if c.starts_with(b"tramp:") && c != b"tramp:addresses synthetic" {
                    assert!(tramp_symbols::Annotation::parse(c).is_some(), "{:?}", String::from_utf8_lossy(c));
                }
            }
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(e) => {
                assert!(e.to_string().contains("line "), "{e}");
                break;
            }
        }
    }
});
