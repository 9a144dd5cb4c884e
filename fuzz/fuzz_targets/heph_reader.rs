//! Untrusted bytes as a Heph trace: the reader never panics or hangs, it
//! only warns; a clean read re-encodes to exactly the input; the packets
//! it delivers survive a round trip; the span analysis and the Chrome
//! export digest them, and the export is valid JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tramp_heph::chrome::ChromeWriter;
use tramp_heph::spans::SpanStats;
use tramp_heph::{Packet, Reader};

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let mut packets = Vec::new();
    while let Some(p) = r.next_packet().expect("reading memory cannot fail") {
        packets.push(p);
    }
    let warnings = r.take_warnings();
    let mut again = Vec::new();
    for p in &packets {
        tramp_heph::writer::encode(&mut again, p).expect("what was read can be written");
    }
    if warnings.is_empty() {
        assert_eq!(again, data);
    }
    let mut r2 = Reader::new(&again[..]);
    let mut back = Vec::new();
    while let Some(p) = r2.next_packet().unwrap() {
        back.push(p);
    }
    assert!(r2.take_warnings().is_empty());
    assert_eq!(format!("{back:?}"), format!("{packets:?}"));
    let mut stats = SpanStats::new();
    let mut chrome = ChromeWriter::new(Vec::new());
    for p in &packets {
        if let Packet::Event(e) = p {
            stats.observe(e);
        }
        chrome.packet(p).unwrap();
    }
    let _ = stats.totals_table();
    // As tramp records: one record per packet and one warning per
    // warning, in any interleaving (a record read just after damage waits
    // behind the warning, and is not lost).
    let mut src = tramp_heph::records::HephSource::new(data);
    let (mut records, mut warned) = (0usize, 0usize);
    loop {
        match tramp_core::Source::next_item(&mut src).expect("reading memory cannot fail") {
            Some(tramp_core::Item::Record(_)) => records += 1,
            Some(tramp_core::Item::Warning(_)) => warned += 1,
            None => break,
        }
    }
    assert_eq!((records, warned), (packets.len(), warnings.len()));
    let json = chrome.finish().unwrap();
    serde_json::from_slice::<serde_json::Value>(&json).expect("the export is valid JSON");
});
