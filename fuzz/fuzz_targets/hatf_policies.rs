//! Any HATF trace the reader accepts, re-encoded under every policy, decodes
//! to the same data records (no panic in the planners, no value lost).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tramp_hatf::policy::POLICIES;
use tramp_hatf::{Item, OwnedItem, Policy, Reader, Writer};

fn decode(data: &[u8]) -> Option<Vec<OwnedItem>> {
    let mut r = Reader::from_slice(data);
    let mut items = Vec::new();
    loop {
        match r.next_item() {
            Ok(Some(i)) => items.push(i.to_owned()),
            Ok(None) => return Some(items),
            Err(_) => return None,
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(items) = decode(data) else { return };
    for (_, policy) in POLICIES {
        if policy == Policy::Explicit {
            continue;
        }
        let mut w = Writer::new(Vec::new(), policy);
        for i in &items {
            if !matches!(i.as_item(), Item::Meta(_)) {
                w.write_item(&i.as_item()).expect("a decoded record re-encodes");
            }
        }
        let bytes = w.into_inner().unwrap();
        assert_eq!(decode(&bytes).as_ref(), Some(&items), "policy {policy}");
    }
});
