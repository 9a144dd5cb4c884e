//! The comparison forms of the HATF paper's Table 4 round-trip, on disk as
//! containers too, and `sizes` measures what an independent count gives.

use proptest::prelude::*;
use tramp_hatf::spec::EVENT_KINDS;
use tramp_hatf::{Event, Item, OwnedEvent, OwnedItem};
use tramp_io::Compression;
use tramp_study::ascii::{AsciiReader, write_line};
use tramp_study::content::paper_event;
use tramp_study::simple::{SimpleReader, SimpleWriter};
use tramp_study::split::{SplitReader, SplitWriter};
use tramp_study::{Compressor, Options};

fn paper() -> impl Strategy<Value = Event<'static>> {
    let v = prop_oneof![
        0u64..300,
        0x5555_0000_0000u64..0x5555_0001_0000,
        any::<u64>()
    ];
    (0usize..6, v.clone(), v.clone(), v).prop_map(|(k, size, address, new_address)| {
        let mut e = Event::new(EVENT_KINDS[k]);
        e.size = size;
        e.address = address;
        e.new_address = new_address;
        paper_event(&Item::Event(e)).unwrap()
    })
}

proptest! {
    #[test]
    fn simple_binary_round_trips(events in prop::collection::vec(paper(), 0..100)) {
        let mut w = SimpleWriter::new(Vec::new(), 8).unwrap();
        for e in &events { w.write(e).unwrap(); }
        let bytes = w.into_inner().unwrap();
        prop_assert_eq!(bytes.len(), 8 + 32 * events.len());
        let mut r = SimpleReader::new(&bytes[..]).unwrap();
        let mut got = Vec::new();
        while let Some(e) = r.next_event().unwrap() { got.push(e); }
        prop_assert_eq!(got, events);
    }

    #[test]
    fn ascii_round_trips(events in prop::collection::vec(paper(), 0..100)) {
        let mut bytes = Vec::new();
        for e in &events { write_line(&mut bytes, e).unwrap(); }
        let mut r = AsciiReader::new(&bytes[..]);
        let mut got = Vec::new();
        while let Some(e) = r.next_event().unwrap() { got.push(e); }
        prop_assert_eq!(got, events);
    }

    #[test]
    fn split_stream_round_trips(events in prop::collection::vec(paper(), 0..100)) {
        let mut w = SplitWriter::new([Vec::new(), Vec::new(), Vec::new(), Vec::new()], 8);
        for e in &events { w.write(e).unwrap(); }
        let outs = w.into_inner();
        prop_assert_eq!(outs.iter().map(Vec::len).sum::<usize>(), 25 * events.len());
        let mut r = SplitReader::new([&outs[0][..], &outs[1][..], &outs[2][..], &outs[3][..]], 8);
        let mut got = Vec::new();
        while let Some(e) = r.next_event().unwrap() { got.push(e); }
        prop_assert_eq!(got, events);
    }
}

#[test]
fn the_paper_s_32_bit_form_is_16_bytes_and_refuses_wider_values() {
    let mut e = Event::new(tramp_hatf::EventKind::Alloc);
    e.size = 24;
    e.address = 0x1000_2000;
    let mut w = SimpleWriter::new(Vec::new(), 4).unwrap();
    w.write(&e).unwrap();
    let bytes = w.into_inner().unwrap();
    assert_eq!(
        bytes,
        [
            b't', b's', b'i', b'm', b'p', b'l', b'e', 4, 0, 0, 0, 0, 24, 0, 0, 0, 0, 0x20, 0, 0x10,
            0, 0, 0, 0
        ]
    );
    e.address = 1 << 40;
    let mut w = SimpleWriter::new(Vec::new(), 4).unwrap();
    assert!(w.write(&e).is_err());
}

#[test]
fn damaged_forms_are_errors_naming_the_record() {
    let mut r = AsciiReader::new(&b"0 24 1000\n1 zz\n"[..]);
    assert!(r.next_event().unwrap().is_some());
    let e = r.next_event().unwrap_err().to_string();
    assert!(e.contains("line 2"), "{e}");
    let mut r = AsciiReader::new(&b"0 24 1000"[..]);
    assert!(
        r.next_event()
            .unwrap_err()
            .to_string()
            .contains("cut short")
    );
    let mut bytes = SimpleWriter::new(Vec::new(), 8)
        .unwrap()
        .into_inner()
        .unwrap();
    bytes.extend_from_slice(&[9; 32]);
    let e = SimpleReader::new(&bytes[..])
        .unwrap()
        .next_event()
        .unwrap_err();
    assert!(e.to_string().contains("record 0"), "{e}");
}

/// Both containers on disk, compressed, read back.
#[test]
fn containers_round_trip_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let items = tramp_workloads::sample::Sample::new(3_000, 1).collect::<Vec<OwnedItem>>();
    let events: Vec<Event<'static>> = items
        .iter()
        .filter_map(|i| paper_event(&i.as_item()))
        .collect();
    let split = dir.path().join("t.split");
    let mut w = tramp_study::split::create(&split, 8, Compression::Gzip).unwrap();
    for e in &events {
        w.write(e).unwrap();
    }
    tramp_study::split::finish(w).unwrap();
    assert!(split.join("address.gz").exists());
    let mut r = tramp_study::split::open(&split).unwrap();
    let mut got = Vec::new();
    while let Some(e) = r.next_event().unwrap() {
        got.push(e);
    }
    assert_eq!(got, events);

    let sa = dir.path().join("t.splitaddr");
    let mut w = tramp_study::splitaddr::create(&sa, Compression::Zstd).unwrap();
    for i in &items {
        w.write_item(&i.as_item()).unwrap();
    }
    tramp_study::splitaddr::finish(w).unwrap();
    let mut r = tramp_hatf::Reader::new(tramp_study::splitaddr::open(&sa).unwrap());
    let mut got: Vec<OwnedItem> = Vec::new();
    while let Some(i) = r.next_item().unwrap() {
        got.push(i.to_owned());
    }
    let want: Vec<OwnedItem> = items
        .into_iter()
        .filter(|i| !matches!(i, OwnedItem::Meta(_)))
        .collect();
    assert_eq!(got, want);
}

/// The uncompressed sizes `sizes` reports agree with sizes computed here
/// from the layouts, and every compressed size is a real compressor's.
#[test]
fn sizes_agree_with_an_independent_count() {
    let items = tramp_workloads::sample::Sample::new(5_000, 1).collect::<Vec<OwnedItem>>();
    let events: Vec<Event<'static>> = items
        .iter()
        .filter_map(|i| paper_event(&i.as_item()))
        .collect();
    let n = events.len() as u64;
    let o = Options {
        compressors: vec![Compressor::Gzip],
        threads: 2,
        ..Options::default()
    };
    let r = tramp_study::measure(items.clone(), &o, 0).unwrap();
    assert_eq!(r.data_records, n);
    let row = |t: &str| {
        r.rows
            .iter()
            .find(|x| x.name == t && x.table == tramp_study::sizes::Table::Forms)
            .unwrap()
    };
    assert_eq!(row("Simple Binary").bytes, 8 + 32 * n);
    assert_eq!(row("Split Stream").bytes, 25 * n);
    let ascii: u64 = events
        .iter()
        .map(|e| {
            let mut l = Vec::new();
            write_line(&mut l, e).unwrap();
            l.len() as u64
        })
        .sum();
    assert_eq!(row("ASCII").bytes, ascii);
    // HATF naive of the paper's content, encoded here.
    let mut w = tramp_hatf::Writer::new(Vec::new(), tramp_hatf::Policy::Naive);
    for e in &events {
        w.write_event(e).unwrap();
    }
    let naive = w.into_inner().unwrap();
    assert_eq!(row("HATF (naive)").bytes, naive.len() as u64);
    let mut g = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
    std::io::Write::write_all(&mut g, &naive).unwrap();
    assert_eq!(
        row("HATF (naive)").compressed[0],
        g.finish().unwrap().len() as u64
    );
    // SplitAddr holds HATF best's bytes, split.
    assert_eq!(row("HATF SplitAddr").bytes, row("HATF (best)").bytes);
    // Timing, when asked, reads back every record of every form.
    let t = tramp_study::measure(items, &o, 2_000)
        .unwrap()
        .timing
        .unwrap();
    assert_eq!(t.records, 2_000);
    assert!(t.rows.len() >= 7);
}

#[allow(dead_code)]
fn _owned(e: OwnedEvent) -> OwnedEvent {
    e
}

/// An encoder that fails (a 64-bit address in the paper's 32-bit Simple
/// Binary) ends the study with its error, naming the record and the
/// value, whether it
/// fails in the first batch or after many, on one thread or several; the
/// reading side is never left blocked.
#[test]
fn a_failing_encoder_ends_the_study_with_its_error() {
    for (threads, at) in [(1, 3usize), (2, 3), (3, 40_000), (2, 70_000)] {
        let mut items: Vec<OwnedItem> = (0..80_000u64)
            .map(|i| {
                let mut e = OwnedEvent::new(EVENT_KINDS[(i % 2) as usize]);
                e.size = 16 + i % 100;
                e.address = 0x1000 + 16 * (i / 2);
                OwnedItem::Event(e)
            })
            .collect();
        if let OwnedItem::Event(e) = &mut items[at] {
            e.address = 0x7f00_0000_0000;
        }
        let o = Options {
            compressors: vec![Compressor::Zstd],
            word: 4,
            threads,
        };
        let err = tramp_study::measure(items, &o, 0).unwrap_err().to_string();
        assert!(
            err.contains(&format!("record {at}:")) && err.contains("0x7f0000000000"),
            "threads {threads}, at {at}: {err}"
        );
    }
}
