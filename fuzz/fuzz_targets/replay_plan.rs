//! The replay plan's reader: any bytes give a plan or an error naming the
//! byte, never a panic; a plan read back encodes to the same body.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tramp_heap::replay::{plan_format, read_plan};

fuzz_target!(|data: &[u8]| {
    let Ok((h, ops, rows)) = read_plan(data) else {
        return;
    };
    assert_eq!(rows.len() as u64, h.threads);
    let mut body = Vec::new();
    for op in &ops {
        let mut b = [0u8; plan_format::MAX_OP_LEN];
        let n = plan_format::encode(op, &mut b);
        let (back, m) = plan_format::decode(&b[..n]).expect("own encoding");
        assert_eq!((back, m), (*op, n));
        body.extend_from_slice(&b[..n]);
    }
    // LEB128 has several spellings of a number (trailing zero groups);
    // the canonical one is never longer.
    assert!(body.len() as u64 <= h.body_len);
});
