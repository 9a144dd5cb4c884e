//! The heap profile's text inputs: a LeakSanitizer suppressions file (each
//! pattern matched against untrusted names) and folded stacks (merged and
//! drawn as a flame graph). Never a panic or a hang; errors name a line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tramp_symbols::suppressions::{Suppressions, matches};

fuzz_target!(|data: &[u8]| {
    // suppressions \0 folded stacks
    let mut parts = data.splitn(2, |&b| b == 0);
    let supp = String::from_utf8_lossy(parts.next().unwrap_or(&[])).into_owned();
    let folded = String::from_utf8_lossy(parts.next().unwrap_or(&[])).into_owned();
    match Suppressions::parse(&supp) {
        Ok(s) => {
            for p in &s.list {
                for name in folded.split([';', '\n', ' ']) {
                    let _ = matches(&p.pattern, name);
                }
                // A pattern without wildcards or anchors matches itself.
                if !p.pattern.contains(['*', '^', '$']) {
                    assert!(matches(&p.pattern, &p.pattern));
                }
            }
        }
        Err(e) => assert!(e.starts_with("line ")),
    }
    match tramp_profile::flame::parse_folded(&folded) {
        Ok(stacks) => {
            let svg = tramp_profile::flame::svg("t", "bytes", &stacks);
            assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        }
        Err(e) => assert!(e.starts_with("line ")),
    }
});
