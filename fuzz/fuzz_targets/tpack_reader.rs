//! Untrusted bytes into the tpack reader: no panic, no hang, bounded
//! memory. The block checksums are fixed up first (half the time) so that
//! the fuzzer reaches the stream decoders behind them; every input that
//! reads cleanly re-packs (raw codec) to a file that reads the same, and
//! coding its blocks on threads writes the same bytes. Every way of
//! reading, pulled and pushed, reads the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tramp_hatf::OwnedItem;
use tramp_tpack::reader::Next;
use tramp_tpack::{Codec, Options, Reader, Writer};


/// Items, warnings and the error, as text.
fn drain<R: std::io::Read>(mut r: Reader<R>) -> (Vec<OwnedItem>, Vec<String>, Option<String>) {
    let (mut items, mut warnings) = (Vec::new(), Vec::new());
    loop {
        match r.next_entry() {
            Ok(None) => return (items, warnings, None),
            Ok(Some(Next::Item(i))) => items.push(i.to_owned()),
            Ok(Some(Next::Warning(w))) => warnings.push(w.to_string()),
            Err(e) => return (items, warnings, Some(e.to_string())),
        }
    }
}

/// [`drain`] through `each_entry` (the items pushed).
fn pushed<R: std::io::Read>(mut r: Reader<R>) -> (Vec<OwnedItem>, Vec<String>, Option<String>) {
    let (mut items, mut warnings) = (Vec::new(), Vec::new());
    let end = r.each_entry(|e| {
        match e {
            Next::Item(i) => items.push(i.to_owned()),
            Next::Warning(w) => warnings.push(w.to_string()),
        }
        std::ops::ControlFlow::Continue(())
    });
    (items, warnings, end.err().map(|e| e.to_string()))
}

fn read(data: &[u8]) -> (Vec<OwnedItem>, bool) {
    let inline = drain(Reader::new(data));
    let ahead = drain(Reader::read_ahead(std::io::Cursor::new(data.to_vec())).unwrap());
    assert_eq!(inline, ahead);
    let parallel = drain(Reader::parallel(std::io::Cursor::new(data.to_vec()), 2).unwrap());
    assert_eq!(inline, parallel);
    let parallel = pushed(Reader::parallel(std::io::Cursor::new(data.to_vec()), 2).unwrap());
    assert_eq!(inline, parallel);
    let clean = inline.1.is_empty() && inline.2.is_none();
    (inline.0, clean)
}

fuzz_target!(|data: &[u8]| {
    let mut data = data.to_vec();
    if data.first().is_some_and(|b| b & 1 == 0) {
        tramp_tpack::framer::reseal_checksums(&mut data);
    }
    let (items, clean) = read(&data);
    // A time range skipping blocks by their summaries (version 4) never
    // panics, and of a file that reads cleanly reads a subset of the
    // blocks, cleanly. (Of a damaged one it may read more: a block it
    // skips is not decoded, so damage inside it behind a matching
    // checksum is never met.)
    let window = data.get(1..3).map(|w| (u64::from(w[0]) * 1000, u64::from(w[1]) * 100_000));
    let framer = tramp_tpack::framer::Framer::new(&data[..]).skipping(window);
    let skipping = drain(Reader::from_framer(framer));
    if clean {
        assert!(skipping.0.len() <= items.len());
        assert!(skipping.1.is_empty() && skipping.2.is_none());
    }
    if clean {
        let pack = |opts: Options| {
            let mut w = Writer::new(Vec::new(), opts).unwrap();
            for i in &items {
                w.write_item(&i.as_item()).unwrap();
            }
            w.into_inner().unwrap()
        };
        let one = Options { codec: Codec::Raw, block_records: 7, ..Options::default() };
        let again = pack(one);
        let (items2, clean2) = read(&again);
        assert!(clean2);
        assert_eq!(items2, items);
        // Blocks coded on threads: the same bytes.
        assert!(pack(Options { threads: 3, ..one }) == again);
    }
});
