//! Untrusted bytes as Android record_allocs text: never a panic or a hang;
//! a damaged line ends the read with its line number.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tramp_alloctrace::android::AndroidReader;

fuzz_target!(|data: &[u8]| {
    let mut r = AndroidReader::new(data);
    loop {
        match r.next_item() {
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(e) => {
                assert!(e.to_string().contains("line "), "{e}");
                break;
            }
        }
    }
});
