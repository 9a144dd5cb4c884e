//! Untrusted bytes as a binary PTF trace: reading never panics or hangs
//! and memory stays bounded; every event before an error re-encodes to
//! exactly the bytes it was read from; the verifier digests them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tramp_ptf::binary::{self, BinaryReader};
use tramp_graph::verify::{self, Options};
use tramp_ptf::EventSource;

fuzz_target!(|data: &[u8]| {
    let Ok(mut r) = BinaryReader::new(data) else {
        return;
    };
    let mut last = r.location().1;
    while let Ok(Some(e)) = r.next_event() {
        let start = r.location().1;
        assert!(start >= last);
        let mut enc = Vec::new();
        binary::encode(&mut enc, &e);
        // Canonical LEB128 re-encodes byte for byte; non-minimal varints
        // (legal to read) may shrink.
        let raw = &data[start as usize..];
        if raw.starts_with(&enc) {
            last = start + enc.len() as u64;
        } else {
            assert!(enc.len() < raw.len());
            last = start;
        }
    }
    let mut r = BinaryReader::new(data).unwrap();
    let _ = verify::verify(&mut r, Options { gc: true, max_violations: 10 });
});
