//! Property tests: random events under random metadata, written then read,
//! come back unchanged, in binary and through the text form.

mod common;
use common::*;
use proptest::prelude::*;
use tramp_hatf::spec::EVENT_KINDS;
use tramp_hatf::{Field, Interp, Meta, OwnedEvent, OwnedItem, Policy, Width, Writer};

#[derive(Debug, Clone)]
enum Op {
    Meta(Meta),
    Event(OwnedEvent),
    Comment(Vec<u8>),
}

fn field() -> impl Strategy<Value = Field> {
    (0u8..6).prop_map(|c| Field::from_code(c).unwrap())
}

fn meta() -> impl Strategy<Value = Meta> {
    let width = prop_oneof![
        Just(Width::Fixed(0)),
        Just(Width::Fixed(1)),
        Just(Width::Fixed(2)),
        Just(Width::Fixed(4)),
        Just(Width::Fixed(8)),
        Just(Width::V1),
        Just(Width::V2),
    ];
    let small = prop_oneof![0u64..300, any::<u64>()];
    let interp = prop_oneof![
        Just(Interp::None),
        small.clone().prop_map(Interp::Default),
        small.clone().prop_map(Interp::BaseOffset),
        small.clone().prop_map(Interp::Delta),
        (small.clone(), -40i64..40).prop_map(|(i, s)| Interp::Stride {
            initial: i,
            stride: s as u64
        }),
    ];
    prop_oneof![
        (field(), width).prop_map(|(f, w)| Meta::SetWidth(f, w)),
        (field(), interp).prop_map(|(f, i)| Meta::SetInterp(f, i)),
    ]
}

/// Values cluster (so small widths, deltas and bases get used) but can be
/// anything.
fn value() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..4, 0u64..300, 0x1000u64..0x1100, any::<u64>()]
}

fn event() -> impl Strategy<Value = OwnedEvent> {
    (
        0usize..10,
        (value(), value(), value(), value(), value(), value()),
        prop::collection::vec(any::<u8>(), 0..4),
    )
        .prop_map(
            |(k, (size, address, new_address, thread, heap, time), attributes)| OwnedEvent {
                kind: EVENT_KINDS[k],
                size,
                address,
                new_address,
                thread,
                heap,
                time,
                attributes,
            },
        )
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => meta().prop_map(Op::Meta),
        6 => event().prop_map(Op::Event),
        1 => prop::collection::vec(any::<u8>(), 0..20).prop_map(Op::Comment),
    ]
}

/// Writes the ops with the explicit policy. Illegal metadata is dropped; an
/// event that the encoding in effect cannot hold is preceded by metadata
/// that makes room (the way a policy would). Returns the bytes and the items
/// the writer accepted.
fn write_ops(ops: &[Op]) -> (Vec<u8>, Vec<OwnedItem>) {
    let mut w = Writer::new(Vec::new(), Policy::Explicit);
    // One metadata record first: the writer then keeps the encoding it is
    // given (without any, it places its own).
    let first = Meta::SetWidth(Field::Attributes, Width::V1);
    w.write_meta(first).unwrap();
    let mut accepted = vec![OwnedItem::Meta(first)];
    for op in ops {
        match op {
            Op::Meta(m) => {
                if w.write_meta(*m).is_ok() {
                    accepted.push(OwnedItem::Meta(*m));
                }
            }
            Op::Comment(c) => {
                w.write_comment(c).unwrap();
                accepted.push(OwnedItem::Comment(c.clone()));
            }
            Op::Event(e) => {
                if w.write_event(&e.as_event()).is_err() {
                    let fixes = [
                        Meta::SetInterp(Field::Size, Interp::None),
                        Meta::SetWidth(Field::Size, Width::Fixed(8)),
                        Meta::SetInterp(Field::Address, Interp::None),
                        Meta::SetWidth(Field::Address, Width::Fixed(8)),
                        Meta::SetInterp(Field::Time, Interp::None),
                        Meta::SetWidth(Field::Time, Width::Fixed(8)),
                        Meta::SetInterp(Field::Thread, Interp::None),
                        Meta::SetWidth(Field::Thread, Width::Fixed(8)),
                        Meta::SetInterp(Field::Heap, Interp::None),
                        Meta::SetWidth(Field::Heap, Width::Fixed(8)),
                        Meta::SetInterp(Field::Attributes, Interp::None),
                        Meta::SetWidth(Field::Attributes, Width::V1),
                    ];
                    for m in fixes {
                        w.write_meta(m).unwrap();
                        accepted.push(OwnedItem::Meta(m));
                    }
                    w.write_event(&e.as_event()).unwrap();
                }
                accepted.push(OwnedItem::Event(canonical(e)));
            }
        }
    }
    (w.into_inner().unwrap(), accepted)
}

/// The reader reports zero for fields a record type does not have.
fn canonical(e: &OwnedEvent) -> OwnedEvent {
    e.canonical()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn explicit_metadata_round_trips(ops in prop::collection::vec(op(), 0..60)) {
        let (bytes, accepted) = write_ops(&ops);
        prop_assert_eq!(decode(&bytes, true), accepted);
    }

    #[test]
    fn binary_text_binary_is_byte_identical(ops in prop::collection::vec(op(), 0..60)) {
        let (bytes, _) = write_ops(&ops);
        let text = to_text(&bytes);
        prop_assert_eq!(from_text(&text), bytes);
    }

    #[test]
    fn every_way_of_reading_agrees(ops in prop::collection::vec(op(), 0..80)) {
        let (bytes, _) = write_ops(&ops);
        let want = decode(&bytes, true);
        // Borrowing the bytes, and visiting instead of pulling.
        let mut r = tramp_hatf::Reader::from_slice(&bytes).with_metadata(true);
        let mut got = Vec::new();
        while let Some(i) = r.next_item().unwrap() {
            got.push(i.to_owned());
        }
        prop_assert_eq!(&got, &want);
        let mut visited = Vec::new();
        let n = tramp_hatf::Reader::from_slice(&bytes)
            .with_metadata(true)
            .for_each_item(|i| visited.push(i.to_owned()))
            .unwrap();
        prop_assert_eq!(n as usize, want.len());
        prop_assert_eq!(&visited, &want);
        let mut streamed = Vec::new();
        tramp_hatf::Reader::new(&bytes[..]).with_metadata(true).for_each_item(|i| streamed.push(i.to_owned())).unwrap();
        prop_assert_eq!(&streamed, &want);
    }

    /// The generic source pushed (`each_item`, the driver's way) yields
    /// the records it yields pulled, with their positions after; broken
    /// off at any record, pulling goes on with the next one.
    #[test]
    fn the_source_pushed_yields_what_it_yields_pulled(
        ops in prop::collection::vec(op(), 0..80),
        stop in 1usize..100,
    ) {
        use std::ops::ControlFlow;
        use tramp_core::{Item, Source};
        let (bytes, _) = write_ops(&ops);
        let show = |r: &tramp_core::Record<'_>| format!("{} {:?}", r.record_type().name, r.fields().collect::<Vec<_>>());
        let mut pulled = tramp_hatf::records::HatfSource::new(&bytes[..], true);
        let mut want = Vec::new();
        while let Some(r) = pulled.next_record().unwrap() {
            want.push(show(&r));
        }
        let end = pulled.position();
        let mut pushed = tramp_hatf::records::HatfSource::new(&bytes[..], true);
        let mut got = Vec::new();
        pushed.each_item(&mut |item| {
            if let Item::Record(r) = item {
                got.push(show(r));
            }
            if got.len() == stop { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        }).unwrap();
        prop_assert_eq!(&got[..], &want[..got.len()]);
        prop_assert_eq!(got.len(), stop.min(want.len()));
        while let Some(r) = pushed.next_record().unwrap() {
            got.push(show(&r));
        }
        prop_assert_eq!(&got, &want);
        prop_assert_eq!(pushed.position(), end);
    }

    #[test]
    fn naive_policy_round_trips_any_events(events in prop::collection::vec(event(), 0..60)) {
        let items: Vec<OwnedItem> = events.iter().map(|e| OwnedItem::Event(canonical(e))).collect();
        let bytes = encode(&items, Policy::Naive);
        prop_assert_eq!(decode(&bytes, false), items);
    }

    #[test]
    fn same_and_combined_size_policies_round_trip_any_events(
        events in prop::collection::vec(event(), 0..120),
        repeat in 1usize..12,
    ) {
        // Repeat each event's size a few times so that runs occur.
        let items: Vec<OwnedItem> = events
            .iter()
            .flat_map(|e| std::iter::repeat_n(canonical(e), repeat))
            .map(OwnedItem::Event)
            .collect();
        for policy in [Policy::SameSize, Policy::CombinedSize] {
            let bytes = encode(&items, policy);
            prop_assert_eq!(decode(&bytes, false), items.clone());
        }
    }

    #[test]
    fn small_size_policy_round_trips_any_events(events in prop::collection::vec(event(), 0..120)) {
        let items: Vec<OwnedItem> = events.iter().map(|e| OwnedItem::Event(canonical(e))).collect();
        let bytes = encode(&items, Policy::SmallSize);
        prop_assert_eq!(decode(&bytes, false), items);
    }
}

/// The small-size rule on hand-made sizes: the first size sets the width,
/// a larger one widens at once, and a narrower run is narrowed to the
/// widest width it needed once it has saved 8 bytes.
#[test]
fn small_size_widens_at_once_and_narrows_after_a_paying_run() {
    use tramp_hatf::{Item, Meta, Width};
    // 5: width 1 set first; 300: widened to 2; then eight sizes of 1 byte:
    // each saves 1 byte at width 1, so the 8th narrows (8 x 1 >= 8).
    let mut items = vec![alloc(5, 0x10), alloc(300, 0x20)];
    items.extend((0..9).map(|i| alloc(7, 0x100 + i)));
    let bytes = encode(&items, Policy::SmallSize);
    let mut r = tramp_hatf::Reader::from_slice(&bytes).with_metadata(true);
    let mut seq = Vec::new();
    while let Some(item) = r.next_item().unwrap() {
        seq.push(match item {
            Item::Meta(Meta::SetWidth(Field::Size, Width::Fixed(n))) => {
                format!("size:{n}")
            }
            Item::Meta(_) => "meta".to_string(),
            Item::Event(e) => e.size.to_string(),
            Item::Comment(_) => "comment".to_string(),
        });
    }
    let want: Vec<String> = [
        "size:1", "5", "size:2", "300", "7", "7", "7", "7", "7", "7", "7", "size:1", "7", "7",
    ]
    .iter()
    .filter(|s| **s != "meta")
    .map(|s| s.to_string())
    .collect();
    // Other fields (address) get their naive metadata: compare sizes only.
    let got: Vec<String> = seq.into_iter().filter(|s| s != "meta").collect();
    assert_eq!(got, want);
}

/// The same-size rule: a run switches to `default SIZE` once it has paid
/// 16 bytes at full width (four records at the default 4 bytes), and back
/// to `none` when another size comes.
#[test]
fn same_size_switches_after_a_paying_run_and_back() {
    use tramp_hatf::Item;
    let mut items: Vec<OwnedItem> = (0..7).map(|i| alloc(100, 0x100 + i)).collect();
    items.push(alloc(7, 0x200));
    let bytes = encode(&items, Policy::SameSize);
    let mut r = tramp_hatf::Reader::from_slice(&bytes).with_metadata(true);
    let mut seq = Vec::new();
    while let Some(item) = r.next_item().unwrap() {
        match item {
            Item::Meta(Meta::SetInterp(Field::Size, Interp::Default(v))) => {
                seq.push(format!("default:{v}"))
            }
            Item::Meta(Meta::SetInterp(Field::Size, Interp::None)) => seq.push("none".into()),
            Item::Event(e) => seq.push(e.size.to_string()),
            _ => {}
        }
    }
    assert_eq!(
        seq,
        [
            "100",
            "100",
            "100",
            "100",
            "default:100",
            "100",
            "100",
            "100",
            "none",
            "7"
        ]
    );
    assert_eq!(decode(&bytes, false), items);
}

/// An alloc event of `size` bytes at `address`.
fn alloc(size: u64, address: u64) -> OwnedItem {
    let mut e = OwnedEvent::new(tramp_hatf::EventKind::Alloc);
    e.size = size;
    e.address = address;
    OwnedItem::Event(e)
}
