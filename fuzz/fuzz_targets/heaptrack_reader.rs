//! Untrusted bytes as an interpreted heaptrack file: never a panic or a
//! hang; every allocation gets an address no live block has, every free
//! ends a block of its info or a fresh one, and a damaged line ends the read
//! with its line number.
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use tramp_hatf::{EventKind, Item};
use tramp_heaptrack::InterpretedReader;

fuzz_target!(|data: &[u8]| {
    let mut r = InterpretedReader::new(data);
    let mut live: HashSet<u64> = HashSet::new();
    loop {
        match r.next_item() {
            Ok(Some(Item::Event(e))) => match e.kind {
                EventKind::Alloc => assert!(live.insert(e.address), "address reused while live"),
                EventKind::Free => {
                    live.remove(&e.address);
                }
                _ => {}
            },
            Ok(Some(Item::Comment(c))) => {
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
