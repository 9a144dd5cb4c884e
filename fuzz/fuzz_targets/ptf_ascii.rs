//! Untrusted bytes as a PTF ASCII trace: reading never panics or hangs;
//! whatever events it yields before an error re-encode (binary, then
//! ASCII) to the same events; the verifier, with reachability, digests
//! them without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tramp_ptf::ascii::{AsciiReader, AsciiWriter};
use tramp_ptf::binary::{BinaryReader, BinaryWriter};
use tramp_graph::verify::{self, Options};
use tramp_ptf::{EventSink, EventSource};

fuzz_target!(|data: &[u8]| {
    let Ok(mut r) = AsciiReader::new(data) else {
        return;
    };
    let notes = r.notes().to_vec();
    let mut events = Vec::new();
    while let Ok(Some(e)) = r.next_event() {
        events.push(e);
    }
    // Notes that the writers refuse (`$`) are not an oracle failure.
    let Ok(mut w) = BinaryWriter::new(Vec::new(), &notes) else {
        return;
    };
    for e in &events {
        w.write_event(e).expect("events read are writable");
    }
    w.finish().unwrap();
    let bin = w.into_inner();
    let mut b = BinaryReader::new(&bin[..]).expect("our header reads");
    let mut again = Vec::new();
    while let Some(e) = b.next_event().expect("our binary reads") {
        again.push(e);
    }
    assert_eq!(again, events);
    if let Ok(mut t) = AsciiWriter::new(Vec::new(), &notes) {
        // Class names with leading blanks cannot be written as ASCII.
        if events.iter().all(|e| t.write_event(e).is_ok()) {
            t.finish().unwrap();
            let text = t.into_inner();
            let mut r2 = AsciiReader::new(&text[..]).expect("our ASCII reads");
            let mut third = Vec::new();
            while let Some(e) = r2.next_event().expect("our ASCII reads") {
                third.push(e);
            }
            assert_eq!(third, events);
        }
    }
    let mut r = AsciiReader::new(data).unwrap();
    let _ = verify::verify(&mut r, Options { gc: true, max_violations: 10 });
});
