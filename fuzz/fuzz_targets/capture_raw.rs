//! Untrusted bytes as a capture raw log: indexing and conversion to HATF
//! never panic or hang, and what converts is a valid HATF trace.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tramp_hatf::{Policy, Reader, Writer};

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!("tramp-fuzz-raw-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("trace.1.1.raw");
    std::fs::write(&path, data).unwrap();
    let mut w = Writer::new(Vec::new(), Policy::Naive);
    if tramp_record::convert_process(std::slice::from_ref(&path), &mut w).is_ok() {
        let bytes = w.into_inner().unwrap();
        let mut r = Reader::from_slice(&bytes);
        while r.next_item().expect("the converter writes valid HATF").is_some() {}
    }
});
