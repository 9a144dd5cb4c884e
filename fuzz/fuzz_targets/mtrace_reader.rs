//! Untrusted bytes as a glibc mtrace log: never a panic or a hang; the
//! notes it writes parse back, and a damaged line ends the read with its
//! line number.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tramp_alloctrace::MtraceReader;
use tramp_hatf::Item;

fuzz_target!(|data: &[u8]| {
    let mut r = MtraceReader::new(data);
    loop {
        match r.next_item() {
            Ok(Some(Item::Comment(c))) => {
                if c.starts_with(b"tramp:") {
                    assert!(tramp_symbols::Annotation::parse(c).is_some());
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
