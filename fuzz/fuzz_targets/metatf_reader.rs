//! Untrusted bytes as a Meta-TF trace: with the trace's embedded DTD or a
//! fixed one, reading never panics or hangs and memory stays bounded.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tramp_core::Source;
use tramp_metatf::codec::MetaSource;

const FSTRACE: &str = include_str!("../../crates/metatf/tests/dtd/good/fstrace.dtd");

fuzz_target!(|data: &[u8]| {
    for dtd in [None, Some(FSTRACE)] {
        if let Ok(mut src) = MetaSource::open(data, dtd) {
            let mut n = 0;
            while let Ok(Some(rec)) = src.next_record() {
                let _ = rec.fields().count();
                n += 1;
                if n > 100_000 {
                    break;
                }
            }
        }
    }
});
