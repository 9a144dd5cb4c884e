//! The heap profile's text inputs: a LeakSanitizer suppressions file (each
//! pattern matched against untrusted names), folded stacks (merged and
//! drawn as a flame graph, and as a differential one against their other
//! half) and a recording's notes (stack-tree nodes rebuilt into stacks,
//! stored symbols). Never a panic or a hang; errors name a line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tramp_symbols::suppressions::{Suppressions, matches};

fuzz_target!(|data: &[u8]| {
    // suppressions \0 folded stacks \0 notes
    let mut parts = data.splitn(3, |&b| b == 0);
    let supp = String::from_utf8_lossy(parts.next().unwrap_or(&[])).into_owned();
    let folded = String::from_utf8_lossy(parts.next().unwrap_or(&[])).into_owned();
    let notes = parts.next().unwrap_or(&[]);
    let mut stacks = tramp_symbols::Stacks::default();
    for line in notes.split(|&b| b == b'\n') {
        match tramp_symbols::Annotation::parse(line) {
            Some(tramp_symbols::Annotation::Frames { first, nodes }) => {
                if stacks.define(first, &nodes) {
                    let last = first + nodes.len() as u64 - 1;
                    let frames = stacks.frames(last);
                    assert!(frames.len() <= stacks.len());
                    // The innermost frame kept is the filtered list's first.
                    let keep = |pc: u64| pc & 1 == 0;
                    let first_kept = frames.iter().copied().find(|&pc| keep(pc));
                    assert_eq!(stacks.innermost(last, keep), first_kept);
                }
            }
            Some(a) => {
                // What parses prints back to itself.
                assert_eq!(tramp_symbols::Annotation::parse(a.to_comment().as_bytes()), Some(a));
            }
            None => {}
        }
    }
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
            let (a, b) = stacks.split_at(stacks.len() / 2);
            let diff = tramp_profile::flame::svg_diff("d", "bytes", a, b);
            assert!(diff.ends_with("</svg>\n"));
        }
        Err(e) => assert!(e.starts_with("line ")),
    }
});
