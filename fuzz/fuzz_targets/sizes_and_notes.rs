//! Untrusted words a user or a trace gives: sizes and counts (`tramp check
//! --max-peak 64MiB`, `--max-allocations 1.5M`, cache sizes) parse or are
//! refused with a reason, never a panic, and a parsed size prints back
//! (the budgets of `tramp_api::check` are these and a `regex` pattern);
//! process and command notes parse or are ignored, and a command note
//! parsed writes back to the same arguments.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tramp_core::units::{Base, parse};
use tramp_heap::images::{
    Images, command_note, parse_command, parse_process, parse_recorded, recorded_note,
};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for base in [Base::Binary, Base::Decimal] {
        if let Ok(n) = parse(&text, base) {
            // A whole number of bytes prints and parses back.
            assert_eq!(parse(&n.to_string(), base), Ok(n), "{text}");
        }
    }
    if let Some((args, cut)) = parse_command(data) {
        let again = command_note(&args, cut);
        assert_eq!(parse_command(again.as_bytes()), Some((args, cut)));
    }
    let _ = parse_process(data);
    if let Some(r) = parse_recorded(data) {
        assert!(tramp_core::numbers::utc_seconds(r.at).ends_with(" UTC"));
        if !r.host.contains(char::is_whitespace) && !r.host.contains(' ') {
            let again = recorded_note(&r);
            let back = parse_recorded(again.as_bytes()).unwrap();
            assert_eq!((back.at, back.clock0), (r.at, r.clock0));
        }
    }
    let mut images = Images::default();
    for line in data.split(|&b| b == b'\n') {
        images.note(line);
    }
    assert!(images.list.len() <= data.len());
});
