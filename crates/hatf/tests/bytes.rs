//! Byte-exact encodings of every HATF record type and metadata operation,
//! as laid out in Appendix A (multi-byte values big-endian).

mod common;
use common::*;
use tramp_hatf::{Event, EventKind, Field, Interp, Item, Meta, OwnedItem, Policy, Width, Writer};

fn e(kind: EventKind) -> Event<'static> {
    Event::new(kind)
}

fn enc(items: &[Item<'_>]) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), Policy::Explicit);
    for i in items {
        w.write_item(i).unwrap();
    }
    w.into_inner().unwrap()
}

fn check(items: &[Item<'_>], bytes: &[u8]) {
    assert_eq!(enc(items), bytes, "encoding of {items:?}");
    let owned: Vec<OwnedItem> = items.iter().map(|i| i.to_owned()).collect();
    assert_eq!(decode(bytes, true), owned, "decoding of {bytes:02x?}");
}

#[test]
fn alloc_and_free_in_the_default_configuration() {
    let mut a = e(EventKind::Alloc);
    a.size = 24;
    a.address = 0x1000_2000;
    check(&[Item::Event(a)], &[0, 0, 0, 0, 24, 0x10, 0x00, 0x20, 0x00]);
    let mut f = e(EventKind::Free);
    f.address = 0x0A0B_0C0D;
    check(&[Item::Event(f)], &[1, 0x0A, 0x0B, 0x0C, 0x0D]);
}

#[test]
fn the_four_realloc_tags() {
    for (kind, tag) in [
        (EventKind::ReallocNoAlloc, 2u8),
        (EventKind::ReallocAllocFree, 3),
        (EventKind::ReallocAlloc, 4),
        (EventKind::ReallocFree, 5),
    ] {
        let mut r = e(kind);
        r.size = 0x0102;
        r.address = 0x11223344;
        r.new_address = 0x55667788;
        check(
            &[Item::Event(r)],
            &[
                tag, 0, 0, 1, 2, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
            ],
        );
    }
}

#[test]
fn heap_and_thread_records_with_fields_switched_on() {
    // Default configuration: heap, thread and time are zero-width defaults.
    check(&[Item::Event(e(EventKind::CreateHeap))], &[6]);
    check(&[Item::Event(e(EventKind::DestroyHeap))], &[7]);
    check(&[Item::Event(e(EventKind::CreateThread))], &[8]);
    check(&[Item::Event(e(EventKind::DestroyThread))], &[9]);

    let on = [
        Item::Meta(Meta::SetInterp(Field::Heap, Interp::None)),
        Item::Meta(Meta::SetWidth(Field::Heap, Width::Fixed(1))),
        Item::Meta(Meta::SetInterp(Field::Thread, Interp::None)),
        Item::Meta(Meta::SetWidth(Field::Thread, Width::Fixed(2))),
        Item::Meta(Meta::SetInterp(Field::Time, Interp::None)),
        Item::Meta(Meta::SetWidth(Field::Time, Width::Fixed(4))),
    ];
    let meta_bytes: Vec<u8> = [
        [11, 2, 4, 0],
        [11, 1, 4, 1],
        [11, 2, 3, 0],
        [11, 1, 3, 2],
        [11, 2, 2, 0],
        [11, 1, 2, 4],
    ]
    .concat();
    let mut h = e(EventKind::CreateHeap);
    h.heap = 7;
    h.thread = 0x0102;
    h.time = 0x0A0B0C0D;
    let mut t = e(EventKind::DestroyThread);
    t.thread = 3;
    t.time = 9;
    let mut a = e(EventKind::Alloc);
    a.size = 1;
    a.address = 2;
    a.thread = 3;
    a.heap = 4;
    a.time = 5;
    let mut items = on.to_vec();
    items.extend([Item::Event(h), Item::Event(t), Item::Event(a)]);
    let mut bytes = meta_bytes;
    // createHeap: tag heap thread time
    bytes.extend([6, 7, 1, 2, 0x0A, 0x0B, 0x0C, 0x0D]);
    // destroyThread: tag thread time
    bytes.extend([9, 0, 3, 0, 0, 0, 9]);
    // alloc: tag size address thread heap time
    bytes.extend([0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 3, 4, 0, 0, 0, 5]);
    check(&items, &bytes);
}

#[test]
fn comment_has_a_two_byte_length() {
    check(
        &[Item::Comment(b"hello")],
        &[10, 0, 5, b'h', b'e', b'l', b'l', b'o'],
    );
    check(&[Item::Comment(b"")], &[10, 0, 0]);
    let long = vec![b'x'; 300];
    let mut bytes = vec![10, 1, 44];
    bytes.extend(&long);
    check(&[Item::Comment(&long)], &bytes);
}

#[test]
fn every_metadata_operation() {
    check(
        &[Item::Meta(Meta::SetWidth(Field::Size, Width::Fixed(0)))],
        &[11, 1, 0, 0],
    );
    check(
        &[Item::Meta(Meta::SetWidth(Field::Size, Width::Fixed(1)))],
        &[11, 1, 0, 1],
    );
    check(
        &[Item::Meta(Meta::SetWidth(Field::Address, Width::Fixed(2)))],
        &[11, 1, 1, 2],
    );
    check(
        &[Item::Meta(Meta::SetWidth(Field::Time, Width::Fixed(4)))],
        &[11, 1, 2, 4],
    );
    check(
        &[Item::Meta(Meta::SetWidth(Field::Thread, Width::Fixed(8)))],
        &[11, 1, 3, 8],
    );
    check(
        &[Item::Meta(Meta::SetWidth(Field::Attributes, Width::V1))],
        &[11, 1, 5, 9],
    );
    check(
        &[Item::Meta(Meta::SetWidth(Field::Attributes, Width::V2))],
        &[11, 1, 5, 10],
    );
    check(
        &[Item::Meta(Meta::SetInterp(Field::Heap, Interp::None))],
        &[11, 2, 4, 0],
    );
    let arg = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08];
    let a = u64::from_be_bytes(arg);
    for (interp, code) in [
        (Interp::Default(a), 1u8),
        (Interp::BaseOffset(a), 2),
        (Interp::Delta(a), 3),
    ] {
        let mut bytes = vec![11, 2, 1, code];
        bytes.extend(arg);
        check(
            &[Item::Meta(Meta::SetInterp(Field::Address, interp))],
            &bytes,
        );
    }
    let mut bytes = vec![11, 2, 2, 4];
    bytes.extend(arg);
    bytes.extend([0, 0, 0, 0, 0, 0, 0, 16]);
    check(
        &[Item::Meta(Meta::SetInterp(
            Field::Time,
            Interp::Stride {
                initial: a,
                stride: 16,
            },
        ))],
        &bytes,
    );
}

#[test]
fn base_offset_and_delta_store_signed_values() {
    let mut items = vec![
        Item::Meta(Meta::SetInterp(Field::Address, Interp::BaseOffset(0x1000))),
        Item::Meta(Meta::SetWidth(Field::Address, Width::Fixed(1))),
        Item::Meta(Meta::SetInterp(Field::Size, Interp::Delta(100))),
        Item::Meta(Meta::SetWidth(Field::Size, Width::Fixed(1))),
    ];
    let mut a = e(EventKind::Alloc);
    a.size = 105;
    a.address = 0x0FFF; // base - 1
    let mut b = e(EventKind::Alloc);
    b.size = 102; // previous - 3
    b.address = 0x107F; // base + 127
    items.extend([Item::Event(a), Item::Event(b)]);
    let bytes = [
        vec![11, 2, 1, 2, 0, 0, 0, 0, 0, 0, 0x10, 0],
        vec![11, 1, 1, 1],
        vec![11, 2, 0, 3, 0, 0, 0, 0, 0, 0, 0, 100],
        vec![11, 1, 0, 1],
        vec![0, 5, 0xFF],
        vec![0, 0xFD, 0x7F],
    ]
    .concat();
    check(&items, &bytes);
}

#[test]
fn stride_and_default_take_no_bytes() {
    let items = [
        Item::Meta(Meta::SetInterp(
            Field::Address,
            Interp::Stride {
                initial: 0x1000,
                stride: 16,
            },
        )),
        Item::Meta(Meta::SetInterp(Field::Size, Interp::Default(16))),
        Item::Event({
            let mut a = e(EventKind::Alloc);
            a.size = 16;
            a.address = 0x1010;
            a
        }),
        Item::Event({
            let mut a = e(EventKind::Alloc);
            a.size = 16;
            a.address = 0x1020;
            a
        }),
        // A negative stride is a two's-complement argument.
        Item::Meta(Meta::SetInterp(
            Field::Address,
            Interp::Stride {
                initial: 0x1020,
                stride: (-32i64) as u64,
            },
        )),
        Item::Event({
            let mut f = e(EventKind::Free);
            f.address = 0x1000;
            f
        }),
    ];
    let mut bytes = vec![
        11, 2, 1, 4, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 16,
    ];
    bytes.extend([11, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 16]);
    bytes.extend([0, 0]);
    bytes.extend([11, 2, 1, 4, 0, 0, 0, 0, 0, 0, 0x10, 0x20]);
    bytes.extend((-32i64).to_be_bytes());
    bytes.extend([1]);
    check(&items, &bytes);
}

#[test]
fn realloc_addresses_chain_through_delta_in_field_order() {
    // Old address first, then new: the new one is a delta from the old one.
    let mut r = e(EventKind::ReallocAllocFree);
    r.size = 64;
    r.address = 0x2000;
    r.new_address = 0x2040;
    let items = [
        Item::Meta(Meta::SetInterp(Field::Address, Interp::Delta(0x1F00))),
        Item::Meta(Meta::SetWidth(Field::Address, Width::Fixed(2))),
        Item::Event(r),
    ];
    let bytes = [
        vec![11, 2, 1, 3, 0, 0, 0, 0, 0, 0, 0x1F, 0],
        vec![11, 1, 1, 2],
        vec![3, 0, 0, 0, 64, 0x01, 0x00, 0x00, 0x40],
    ]
    .concat();
    check(&items, &bytes);
}

#[test]
fn attribute_widths() {
    let mut a = e(EventKind::Free);
    a.address = 1;
    a.attributes = b"ab";
    let items = [
        Item::Meta(Meta::SetInterp(Field::Attributes, Interp::None)),
        Item::Meta(Meta::SetWidth(Field::Attributes, Width::V1)),
        Item::Event(a),
        Item::Meta(Meta::SetWidth(Field::Attributes, Width::V2)),
        Item::Event(a),
        Item::Meta(Meta::SetWidth(Field::Attributes, Width::Fixed(2))),
        Item::Event(a),
    ];
    let bytes = [
        vec![11, 2, 5, 0],
        vec![11, 1, 5, 9],
        vec![1, 0, 0, 0, 1, 2, b'a', b'b'],
        vec![11, 1, 5, 10],
        vec![1, 0, 0, 0, 1, 0, 2, b'a', b'b'],
        vec![11, 1, 5, 2],
        vec![1, 0, 0, 0, 1, b'a', b'b'],
    ]
    .concat();
    check(&items, &bytes);
}

#[test]
fn naive_policy_adds_metadata_only_where_values_do_not_fit() {
    let mut a = e(EventKind::Alloc);
    a.size = 24;
    a.address = 0x1000;
    let mut b = a;
    b.address = 0x7f3a_0000_1000; // needs 8 bytes
    let mut c = b;
    c.thread = 3; // leaves the thread default
    let items: Vec<OwnedItem> = [a, b, c]
        .iter()
        .map(|x| Item::Event(*x).to_owned())
        .collect();
    let bytes = encode(&items, Policy::Naive);
    let expect = [
        vec![0, 0, 0, 0, 24, 0, 0, 0x10, 0],
        vec![11, 1, 1, 8],
        vec![0, 0, 0, 0, 24, 0, 0, 0x7f, 0x3a, 0, 0, 0x10, 0],
        vec![11, 2, 3, 0],
        vec![11, 1, 3, 1],
        vec![0, 0, 0, 0, 24, 0, 0, 0x7f, 0x3a, 0, 0, 0x10, 0, 3],
    ]
    .concat();
    assert_eq!(bytes, expect);
    assert_eq!(decode(&bytes, false), items);
}

#[test]
fn explicit_policy_rejects_values_that_do_not_fit_and_writes_nothing() {
    let mut w = Writer::new(Vec::new(), Policy::Explicit);
    // The input has metadata of its own: its encoding is kept as it is.
    w.write_meta(Meta::SetWidth(Field::Attributes, Width::V1))
        .unwrap();
    let before = w.into_inner().unwrap();
    let mut w = Writer::new(Vec::new(), Policy::Explicit);
    w.write_meta(Meta::SetWidth(Field::Attributes, Width::V1))
        .unwrap();
    let mut a = e(EventKind::Alloc);
    a.address = 1 << 40;
    let err = w.write_event(&a).unwrap_err().to_string();
    assert!(
        err.contains("address value 0x10000000000 cannot be encoded"),
        "{err}"
    );
    a.address = 1;
    a.thread = 2;
    let err = w.write_event(&a).unwrap_err().to_string();
    assert!(err.contains("default"), "{err}");
    assert_eq!(w.into_inner().unwrap(), before);
}

/// An input with no metadata of its own (a text trace without `set`
/// lines) under the explicit policy: metadata placed where values do not
/// fit, the same bytes as the naive policy.
#[test]
fn explicit_policy_without_input_metadata_places_what_naive_would() {
    let mut a = e(EventKind::Alloc);
    a.address = 1 << 40;
    let mut b = e(EventKind::Alloc);
    b.address = 1;
    b.thread = 2;
    let items: Vec<OwnedItem> = [a, b].iter().map(|x| Item::Event(*x).to_owned()).collect();
    let explicit = encode(&items, Policy::Explicit);
    assert_eq!(explicit, encode(&items, Policy::Naive));
    assert_eq!(decode(&explicit, false), items);
}

#[test]
fn naive_policy_keeps_a_delta_and_widens_it() {
    // The caller sets time to delta 0 in one byte; a gap of 280 needs two.
    let mut w = Writer::new(Vec::new(), Policy::Naive);
    w.write_meta(Meta::SetInterp(Field::Time, Interp::Delta(0)))
        .unwrap();
    w.write_meta(Meta::SetWidth(Field::Time, Width::Fixed(1)))
        .unwrap();
    let mut times = Vec::new();
    for t in [10u64, 20, 300, 290] {
        let mut f = e(EventKind::Free);
        f.address = 1;
        f.time = t;
        times.push(t);
        w.write_event(&f).unwrap();
    }
    let bytes = w.into_inner().unwrap();
    let start = [vec![11, 2, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0], vec![11, 1, 2, 1]].concat();
    assert_eq!(&bytes[..16], &start[..]);
    // The interpretation stays delta: no switch to none is written.
    assert!(
        !bytes.windows(4).any(|w| w == [11, 2, 2, 0]),
        "time must stay delta"
    );
    assert!(
        bytes.windows(4).any(|w| w == [11, 1, 2, 2]),
        "widened to two bytes"
    );
    let got: Vec<u64> = decode(&bytes, false)
        .into_iter()
        .filter_map(|i| match i {
            OwnedItem::Event(e) => Some(e.time),
            _ => None,
        })
        .collect();
    assert_eq!(got, times);
}
