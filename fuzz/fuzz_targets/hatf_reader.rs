//! Untrusted bytes into the HATF reader: no panic, no hang, every valid
//! trace re-encodes (explicit policy) to exactly the same bytes, and the
//! reader as a tramp source, pulled or pushed, yields a record per item
//! and the same end.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tramp_hatf::{OwnedItem, Policy, Reader, Writer};

fuzz_target!(|data: &[u8]| {
    let mut items: Vec<OwnedItem> = Vec::new();
    let mut r = Reader::from_slice(data).with_metadata(true);
    let clean = loop {
        match r.next_item() {
            Ok(Some(i)) => items.push(i.to_owned()),
            Ok(None) => break true,
            Err(_) => break false,
        }
    };
    // The streaming reader and the visitor agree with the borrowing reader.
    let mut streamed = Vec::new();
    let res = Reader::new(data).with_metadata(true).for_each_item(|i| streamed.push(i.to_owned()));
    assert_eq!(streamed, items);
    assert_eq!(res.is_ok(), clean);
    let mut src = tramp_hatf::records::HatfSource::new(data, true);
    let mut records = 0;
    let src_clean = loop {
        match tramp_core::Source::next_item(&mut src) {
            Ok(Some(tramp_core::Item::Record(_))) => records += 1,
            Ok(Some(tramp_core::Item::Warning(_))) => {}
            Ok(None) => break true,
            Err(_) => break false,
        }
    };
    assert_eq!(src_clean, clean);
    assert_eq!(records, items.len());
    // Pushed (the driver's way): the same records and the same end.
    let mut src = tramp_hatf::records::HatfSource::new(data, true);
    let mut pushed = 0;
    let res = tramp_core::Source::each_item(&mut src, &mut |item| {
        if let tramp_core::Item::Record(_) = item {
            pushed += 1;
        }
        std::ops::ControlFlow::Continue(())
    });
    assert_eq!(res.is_ok(), clean);
    assert_eq!(pushed, items.len());
    if clean {
        let mut w = Writer::new(Vec::new(), Policy::Explicit);
        for i in &items {
            w.write_item(&i.as_item()).expect("a decoded item re-encodes");
        }
        assert_eq!(w.into_inner().unwrap(), data);
    }
});
