//! Untrusted bytes as a lackey log and as a din trace: never a panic or a
//! hang; every record has an address, lackey's a size from 1 to 65535; a
//! damaged line ends the read naming its line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tramp_core::Source;
use tramp_memtrace::{din, lackey};

fn drain(mut r: impl Source, sized: bool) {
    loop {
        match r.next_record() {
            Ok(Some(rec)) => {
                assert!(rec.get(0).and_then(|v| v.as_u64()).is_some());
                let size = rec.get(1).and_then(|v| v.as_u64());
                if sized {
                    assert!(size.is_some_and(|s| (1..=65535).contains(&s)));
                } else {
                    assert!(size.is_none());
                }
            }
            Ok(None) => break,
            Err(e) => {
                assert!(e.to_string().contains("line "), "{e}");
                break;
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    drain(lackey::reader(data), true);
    drain(din::reader(data), false);
});
