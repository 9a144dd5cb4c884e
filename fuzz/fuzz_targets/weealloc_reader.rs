//! Untrusted bytes as a wee_alloc trace: never a panic or a hang; live
//! blocks never share an address; a damaged line ends the read with its
//! line number.
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use tramp_alloctrace::weealloc::WeeAllocReader;
use tramp_hatf::{EventKind, Item};

fuzz_target!(|data: &[u8]| {
    let mut r = WeeAllocReader::new(data);
    let mut live = HashSet::new();
    loop {
        match r.next_item() {
            Ok(Some(Item::Event(e))) => match e.kind {
                EventKind::Alloc => assert!(live.insert(e.address)),
                EventKind::Free => assert!(live.remove(&e.address)),
                _ => {}
            },
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(e) => {
                assert!(e.to_string().contains("line "), "{e}");
                break;
            }
        }
    }
});
