//! record_allocs text written by tramp reads back as the same heap events:
//! random allocations, frees and reallocs on several threads, through
//! `AndroidSink` and `AndroidReader`.

use proptest::prelude::*;
use tramp_alloctrace::android::{AndroidReader, AndroidSink};
use tramp_core::RecordBuf;
use tramp_core::Sink;
use tramp_hatf::records::{item_to_record, schema};
use tramp_hatf::{EventKind, Item, OwnedEvent, OwnedItem};
use tramp_io::Output;

/// Operations: (thread, what, size); `what` picks alloc, free, realloc.
fn events(ops: &[(u64, u8, u64)]) -> Vec<OwnedEvent> {
    let (mut live, mut next, mut time) = (Vec::<u64>::new(), 0x1000u64, 0u64);
    let mut out = Vec::new();
    let ev = |kind, thread, size, address, new_address, time| {
        let mut e = OwnedEvent::new(kind);
        (e.thread, e.size, e.address, e.new_address, e.time) =
            (thread, size, address, new_address, time);
        e
    };
    for &(thread, what, size) in ops {
        time += 7;
        match what % 3 {
            1 if !live.is_empty() => {
                let a = live.swap_remove(size as usize % live.len());
                out.push(ev(EventKind::Free, thread, 0, a, 0, time));
            }
            2 if !live.is_empty() => {
                let i = size as usize % live.len();
                let old = live[i];
                if size % 2 == 0 {
                    out.push(ev(EventKind::ReallocNoAlloc, thread, size, old, old, time));
                } else {
                    let new = next;
                    next += 0x100;
                    live[i] = new;
                    out.push(ev(
                        EventKind::ReallocAllocFree,
                        thread,
                        size,
                        old,
                        new,
                        time,
                    ));
                    out.push(ev(EventKind::Alloc, thread, size, new, 0, time));
                    out.push(ev(EventKind::Free, thread, 0, old, 0, time));
                }
            }
            _ => {
                live.push(next);
                out.push(ev(EventKind::Alloc, thread, size, next, 0, time));
                next += 0x100;
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn written_and_read_back_the_same(ops in proptest::collection::vec((1u64..4, 0u8..3, 1u64..5000), 0..200)) {
        let evs = events(&ops);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.android");
        let mut sink = Box::new(AndroidSink::new(Box::new(Output::create(path.to_str().unwrap(), None).unwrap())));
        let mut buf = RecordBuf::new();
        for e in &evs {
            let item = Item::Event(e.as_event());
            item_to_record(&item, &mut buf);
            sink.write_record(&buf.as_record(&schema().types[buf.type_index()])).unwrap();
        }
        sink.finish().unwrap();
        let text = std::fs::read(&path).unwrap();
        let mut r = AndroidReader::new(&text[..]);
        let mut back = Vec::new();
        while let Some(item) = r.next_item().unwrap() {
            if let OwnedItem::Event(e) = item.to_owned()
                && e.kind != EventKind::CreateThread
            {
                back.push(e);
            }
        }
        prop_assert_eq!(back, evs);
    }
}
