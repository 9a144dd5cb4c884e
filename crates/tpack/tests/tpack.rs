//! tpack round trips, damage and truncation.

use proptest::prelude::*;
use tramp_hatf::spec::EVENT_KINDS;
use tramp_hatf::{EventKind, OwnedEvent, OwnedItem};
use tramp_tpack::reader::Next;
use tramp_tpack::{Codec, Options, Reader, Writer};

fn pack(items: &[OwnedItem], opts: Options) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), opts).unwrap();
    for i in items {
        w.write_item(&i.as_item()).unwrap();
    }
    w.into_inner().unwrap()
}

type Unpacked = (Vec<OwnedItem>, Vec<String>, Option<String>);

/// Items, warnings and the error that ended reading, if any; read in line,
/// with the framer on its own thread, and with blocks decoded on one and on
/// three threads (and on three under a budget of one record out), which
/// must all agree exactly.
fn unpack(bytes: &[u8]) -> Unpacked {
    let inline = drain(Reader::new(bytes));
    let ahead = drain(Reader::read_ahead(std::io::Cursor::new(bytes.to_vec())).unwrap());
    assert_eq!(inline, ahead, "reading ahead changed what was read");
    for workers in [1, 3] {
        let parallel =
            drain(Reader::parallel(std::io::Cursor::new(bytes.to_vec()), workers).unwrap());
        assert_eq!(
            inline, parallel,
            "decoding on {workers} threads changed what was read"
        );
    }
    // A budget smaller than any block: one block out at a time.
    let one_at_a_time =
        drain(Reader::parallel_within(std::io::Cursor::new(bytes.to_vec()), 3, 1).unwrap());
    assert_eq!(
        inline, one_at_a_time,
        "the record budget changed what was read"
    );
    // Pushed, each way yields what it yields pulled.
    assert_eq!(inline, pushed(Reader::new(bytes)), "pushed in line");
    for (workers, budget) in [(1, 1 << 22), (3, 1 << 22), (3, 1)] {
        let r = Reader::parallel_within(std::io::Cursor::new(bytes.to_vec()), workers, budget);
        assert_eq!(
            inline,
            pushed(r.unwrap()),
            "pushed from {workers} threads, budget {budget}"
        );
    }
    inline
}

/// [`drain`] through `Reader::each_entry`.
fn pushed<R: std::io::Read>(mut r: Reader<R>) -> Unpacked {
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

fn drain<R: std::io::Read>(mut r: Reader<R>) -> Unpacked {
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

/// What a HATF reader gives back for an event: fields the kind lacks are 0.
fn canonical(e: OwnedEvent) -> OwnedEvent {
    e.canonical()
}

fn value() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..4,
        0u64..300,
        0x5500_0000_1000u64..0x5500_0000_2000,
        any::<u64>()
    ]
}

fn item() -> impl Strategy<Value = OwnedItem> {
    let event = (
        0usize..10,
        (value(), value(), value(), value(), value(), value()),
        prop_oneof![
            Just(vec![]),
            Just(vec![1, 2]),
            prop::collection::vec(any::<u8>(), 0..5)
        ],
    )
        .prop_map(
            |(k, (size, address, new_address, thread, heap, time), attributes)| {
                OwnedItem::Event(canonical(OwnedEvent {
                    kind: EVENT_KINDS[k],
                    size,
                    address,
                    new_address,
                    thread,
                    heap,
                    time,
                    attributes,
                }))
            },
        );
    prop_oneof![
        9 => event,
        1 => prop::collection::vec(any::<u8>(), 0..30).prop_map(OwnedItem::Comment),
    ]
}

/// A heap-like trace: allocations that reuse freed chunks, frees of live
/// objects, reallocs with their implied records.
fn heap_trace(seed: u64, n: usize) -> Vec<OwnedItem> {
    let mut x = seed | 1;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut live: Vec<(u64, u64)> = Vec::new();
    let mut freed: Vec<u64> = Vec::new();
    let mut top = 0x5555_0000_0000u64;
    let mut time = 1_000u64;
    let mut out = Vec::new();
    for i in 0..n {
        time += rnd() % 200;
        let r = rnd() % 10;
        let mut e;
        if r < 5 || live.is_empty() {
            let size = [16, 24, 32, 100, 4000][(rnd() % 5) as usize] + rnd() % 3;
            let addr = if rnd() % 2 == 0 && !freed.is_empty() {
                freed.pop().unwrap()
            } else {
                let a = top;
                top += tramp_tpack::model::chunk(size);
                a
            };
            live.push((addr, size));
            e = OwnedEvent::new(EventKind::Alloc);
            e.size = size;
            e.address = addr;
            if i % 7 == 0 {
                e.attributes = vec![1, (rnd() % 5) as u8];
            }
        } else if r < 9 {
            let k = (rnd() % live.len() as u64) as usize;
            let (addr, _) = live.swap_remove(k);
            freed.push(addr);
            e = OwnedEvent::new(EventKind::Free);
            e.address = addr;
        } else {
            let k = (rnd() % live.len() as u64) as usize;
            let (old, _) = live[k];
            let size = 5000 + rnd() % 100;
            let new = top;
            top += tramp_tpack::model::chunk(size);
            live[k] = (new, size);
            e = OwnedEvent::new(EventKind::ReallocAllocFree);
            e.size = size;
            e.address = old;
            e.new_address = new;
            e.time = time;
            out.push(OwnedItem::Event(e));
            let mut a = OwnedEvent::new(EventKind::Alloc);
            a.size = size;
            a.address = new;
            a.time = time;
            out.push(OwnedItem::Event(a));
            e = OwnedEvent::new(EventKind::Free);
            e.address = old;
        }
        e.time = time;
        e.thread = 1 + (i / 1000) as u64 % 3;
        out.push(OwnedItem::Event(e));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn any_items_round_trip(items in prop::collection::vec(item(), 0..200), block in 1usize..64, codec in 0u8..4) {
        let codec = [Codec::Raw, Codec::Zstd(3), Codec::Xz(1), Codec::Gzip(6)][codec as usize];
        let bytes = pack(&items, Options { codec, block_records: block, ..Options::default() });
        let (got, warnings, err) = unpack(&bytes);
        prop_assert!(warnings.is_empty() && err.is_none(), "{:?} {:?}", warnings, err);
        prop_assert_eq!(got, items);
    }

    /// Coding blocks on threads writes the same bytes as on one.
    #[test]
    fn threads_write_what_one_thread_writes(items in prop::collection::vec(item(), 0..300), block in 1usize..64, threads in 2usize..5) {
        let one = Options { codec: Codec::Zstd(1), block_records: block, ..Options::default() };
        let serial = pack(&items, one);
        let threaded = pack(&items, Options { threads, ..one });
        prop_assert!(serial == threaded, "{} vs {} bytes", serial.len(), threaded.len());
    }

    /// So does a writer that changes its threads as it goes.
    #[test]
    fn changing_threads_midway_writes_the_same(items in prop::collection::vec(item(), 0..300), block in 1usize..64, at in prop::collection::vec((0usize..300, 1usize..4), 0..6)) {
        let one = Options { codec: Codec::Raw, block_records: block, ..Options::default() };
        let serial = pack(&items, one);
        let mut w = Writer::new(Vec::new(), one).unwrap();
        for (i, item) in items.iter().enumerate() {
            for &(_, t) in at.iter().filter(|(j, _)| *j == i) {
                w.set_threads(t).unwrap();
            }
            w.write_item(&item.as_item()).unwrap();
        }
        let changing = w.into_inner().unwrap();
        prop_assert!(serial == changing, "{} vs {} bytes", serial.len(), changing.len());
    }

    #[test]
    fn heap_traces_round_trip(seed in any::<u64>(), n in 0usize..3000, block in prop_oneof![Just(1usize << 20), 50usize..500]) {
        let items = heap_trace(seed, n);
        let bytes = pack(&items, Options { block_records: block, ..Options::default() });
        let (got, _, err) = unpack(&bytes);
        prop_assert!(err.is_none(), "{:?}", err);
        prop_assert_eq!(got, items);
    }
}

proptest! {
    // Each case codes every block under four codecs, xz among them: fewer
    // cases keep it to seconds.
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// A sizing writer writes its own codec's file byte for byte and gives
    /// the length of the file each other codec's writer writes, with the
    /// threads it is asked for ignored.
    #[test]
    fn a_sizing_writer_gives_each_codecs_file_length(seed in any::<u64>(), n in 0usize..2000, block in prop_oneof![Just(1usize << 20), 100usize..600], mixed in prop::collection::vec(item(), 0..100), threads_at in 0usize..2000) {
        let mut items = heap_trace(seed, n);
        let at = items.len() / 2;
        items.splice(at..at, mixed);
        let codecs = [Codec::Gzip(6), Codec::Zstd(3), Codec::Xz(1), Codec::Raw];
        let own = Options { codec: Codec::Raw, block_records: block, ..Options::default() };
        let mut w = Writer::sizing(Vec::new(), own, &codecs).unwrap();
        for (i, item) in items.iter().enumerate() {
            if i == threads_at {
                w.set_threads(3).unwrap();
            }
            w.write_item(&item.as_item()).unwrap();
        }
        let (bytes, sizes) = w.sizes().unwrap();
        prop_assert!(bytes == pack(&items, own), "its own file differs");
        prop_assert_eq!(sizes.len(), codecs.len());
        for (codec, size) in codecs.iter().zip(&sizes) {
            let file = pack(&items, Options { codec: *codec, ..own });
            prop_assert_eq!(*size, file.len() as u64, "{:?}", codec);
        }
    }

}

/// The model earns its keep on a heap-like trace: tpack (zstd at its
/// default level 9) is smaller than zstd -19 of the naive HATF of the same
/// records.
#[test]
fn a_heap_like_trace_packs_smaller_than_zstd_of_hatf() {
    let items = heap_trace(7, 100_000);
    let bytes = pack(&items, Options::default());
    let mut w = tramp_hatf::Writer::new(Vec::new(), tramp_hatf::Policy::Naive);
    for i in &items {
        w.write_item(&i.as_item()).unwrap();
    }
    let hatf = w.into_inner().unwrap();
    let z = zstd::bulk::compress(&hatf, 19).unwrap();
    assert!(
        bytes.len() < z.len(),
        "tpack {} vs zstd -19 HATF {}",
        bytes.len(),
        z.len()
    );
}

/// A real CPython recording (25,781 records) comes back record for record.
#[test]
fn a_recorded_trace_round_trips() {
    let z = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../hatf/tests/fixtures/cpython-json.hatf.zst"
    ))
    .unwrap();
    let hatf = zstd::decode_all(&z[..]).unwrap();
    let mut r = tramp_hatf::Reader::new(&hatf[..]);
    let mut items = Vec::new();
    while let Some(i) = r.next_item().unwrap() {
        items.push(i.to_owned());
    }
    for codec in [Codec::Zstd(9), Codec::Xz(9), Codec::Raw] {
        let bytes = pack(
            &items,
            Options {
                codec,
                block_records: 10_000,
                ..Options::default()
            },
        );
        let (got, w, err) = unpack(&bytes);
        assert!(w.is_empty() && err.is_none());
        assert_eq!(got, items);
        if codec == Codec::Xz(9) {
            // Smaller than the zstd -19 HATF it came from.
            assert!(bytes.len() < z.len(), "{} vs {}", bytes.len(), z.len());
        }
    }
}

/// Cut at every offset: every whole block before the cut is delivered, and
/// the cut is an error (never a panic, never a silent end) unless it falls
/// exactly between blocks.
#[test]
fn truncation_at_every_offset_keeps_every_whole_block_before_it() {
    let items = heap_trace(3, 120);
    let block = 25;
    let bytes = pack(
        &items,
        Options {
            codec: Codec::Zstd(3),
            block_records: block,
            ..Options::default()
        },
    );
    // Block boundaries: walk the headers.
    let mut ends = vec![8usize];
    let mut at = 8;
    while at < bytes.len() {
        let len = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        at += 16 + len;
        ends.push(at);
    }
    assert_eq!(at, bytes.len());
    for cut in 0..=bytes.len() {
        let (got, _, err) = unpack(&bytes[..cut]);
        let whole = ends.iter().filter(|e| **e <= cut).count().saturating_sub(1);
        let want = (whole * block).min(items.len());
        assert_eq!(got.len(), want, "cut at {cut}");
        assert_eq!(&got[..], &items[..want]);
        assert_eq!(
            err.is_none(),
            ends.contains(&cut) && cut >= 8,
            "cut at {cut}: {err:?}"
        );
    }
}

/// 300 records in three zstd blocks of 100: the items, the block size, the
/// file, and the byte offset of the second block's header.
fn three_blocks() -> (Vec<OwnedItem>, usize, Vec<u8>, usize) {
    let items = heap_trace(5, 300);
    let block = 100;
    let bytes = pack(
        &items,
        Options {
            codec: Codec::Zstd(3),
            block_records: block,
            ..Options::default()
        },
    );
    let first_len = u32::from_le_bytes(bytes[16..20].try_into().unwrap()) as usize;
    let second = 8 + 16 + first_len;
    (items, block, bytes, second)
}

/// A damaged block loses only itself: a flipped byte in the second block's
/// body fails its checksum, the block is skipped with a warning naming its
/// offset, and the blocks after it decode.
#[test]
fn a_damaged_block_loses_only_itself() {
    let (items, block, mut bytes, second) = three_blocks();
    bytes[second + 16 + 5] ^= 0x40;
    let (got, warnings, err) = unpack(&bytes);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].contains(&format!("byte offset {second}")),
        "{}",
        warnings[0]
    );
    assert!(warnings[0].contains("checksum"), "{}", warnings[0]);
    let n = items.len();
    let mut want = items[..block].to_vec();
    want.extend_from_slice(&items[2 * block..n]);
    assert_eq!((got.len(), n), (want.len(), n));
    assert!(got == want);
    // A damaged block magic: the reader scans to the next block.
    let (_, _, mut bytes2, _) = three_blocks();
    bytes2[second] = b'X';
    let (got, warnings, err) = unpack(&bytes2);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(warnings.len(), 1);
    assert!(got == want);
}

/// Not tpack, or the wrong version: a clear error, nothing delivered.
#[test]
fn other_files_are_refused() {
    let (got, _, err) = unpack(b"\x00\x00\x00\x00");
    assert!(got.is_empty());
    assert!(err.unwrap().contains("not a tpack file"));
    for v in [0u8, 6, 9] {
        let (_, _, err) = unpack(&[b't', b'p', b'a', b'c', b'k', 0, v, 0]);
        assert!(err.unwrap().contains(&format!("version {v}")));
    }
    // An empty trace is the magic alone, of version 5; a version-1 or
    // version-2 magic alone is an empty trace too.
    let bytes = pack(&[], Options::default());
    assert_eq!(bytes, b"tpack\x00\x05\x00");
    assert_eq!(unpack(b"tpack\x00\x01\x00"), (vec![], vec![], None));
    assert_eq!(unpack(b"tpack\x00\x02\x00"), (vec![], vec![], None));
}

#[path = "../../../tests/support/doc_blocks.rs"]
mod doc_blocks;

/// The example of docs/formats/tpack.md is exact.
#[test]
fn docs_example_is_exact() {
    let md = doc_blocks::format_page("tpack");
    let text = &doc_blocks::blocks(&md, "tpack-records")[0];
    let mut r = tramp_hatf::text::TextReader::new(text.as_bytes());
    let mut items = Vec::new();
    while let Some(i) = r.next_item().unwrap() {
        items.push(i.to_owned());
    }
    let want = doc_blocks::unhex(&doc_blocks::blocks(&md, "hex")[0]);
    let bytes = pack(
        &items,
        Options {
            codec: Codec::Raw,
            ..Options::default()
        },
    );
    assert_eq!(bytes, want);
    let (got, _, err) = unpack(&want);
    assert!(err.is_none());
    assert_eq!(got, items);
}

/// The fuzz target's checksum fix-up (when the first byte is even), so
/// that a crash file reaches the same decoder path here.
fn fix_checksums(mut data: Vec<u8>) -> Vec<u8> {
    if data.first().is_some_and(|b| b & 1 == 0) {
        tramp_tpack::framer::reseal_checksums(&mut data);
    }
    data
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

/// Fuzz find: two damaged block headers in a row, the second found while
/// bytes of the first resynchronisation were still pushed back, counted
/// their bytes twice (an overflow panic). Now a clean run of warnings.
#[test]
fn resynchronising_twice_counts_offsets_once() {
    let data = fix_checksums(fixture("resync-pushback.bin"));
    let (_, warnings, error) = unpack(&data);
    // Both damaged headers are reported, each at an offset inside the
    // file (counted twice, the second offset ran past its end).
    assert!(warnings.len() >= 2, "{warnings:?} {error:?}");
    for w in &warnings {
        let at: u64 = w
            .split("byte offset ")
            .nth(1)
            .and_then(|t| t.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no offset in {w}"));
        assert!(at < data.len() as u64, "{w}: past the end ({})", data.len());
    }
}

/// Fuzz find: stream table lengths summed past 2^64 (an overflow panic);
/// now a clear error naming the stream.
#[test]
fn huge_stream_lengths_are_an_error() {
    let (_, _, err) = unpack(&fix_checksums(fixture("raw-length-overflow.bin")));
    let err = err.expect("an error");
    assert!(err.contains("length out of range"), "{err}");
}

/// A block header that claims far more records than its streams hold: every
/// reader (the parallel one sizes its table of records by the block) reads
/// the records there are and then fails on the missing ones, without
/// asking for memory the claim would need (found by the fuzzer).
#[test]
fn a_record_count_past_the_streams_allocates_nothing_it_claims() {
    let items = heap_trace(7, 50);
    let mut bytes = pack(&items, Options::default());
    // The first block's header follows the 8-byte file magic: magic, then
    // its record count.
    bytes[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    let (read, warnings, err) = unpack(&bytes);
    assert_eq!(read, items, "every record the streams hold is read");
    assert!(warnings.is_empty());
    let err = err.expect("an error");
    assert!(err.contains("ends early"), "{err}");
}

/// A zstd stream whose frame states the table's size but holds more (found
/// by the fuzzer): every way of reading stops at the same record with the
/// same error, whichever buffers each reused before.
#[test]
fn a_zstd_stream_longer_than_its_table_fails_alike_every_way() {
    let (items, _, err) = unpack(&fix_checksums(fixture("zstd-frame-longer-than-table.bin")));
    assert_eq!(items.len(), 4000, "the blocks before it are read");
    let err = err.expect("an error");
    assert!(err.contains("size-code: zstd"), "{err}");
}

/// A damaged zstd frame whose stated size differs from the table's goes
/// through the streaming decoder, whose error depended on how much room
/// each read offered, and so on the capacity of the buffer a reader
/// happened to reuse (found by the fuzzer): now the same error every way.
#[test]
fn a_damaged_unsized_zstd_stream_fails_alike_every_way() {
    let (items, _, err) = unpack(&fix_checksums(fixture("zstd-unsized-frame-damaged.bin")));
    assert_eq!(items.len(), 100, "the records before the damage are read");
    let err = err.expect("an error");
    assert!(err.contains("record 100: stream kind: zstd"), "{err}");
}

/// Readers with threads can be dropped part-way (their threads are left to
/// stop on their own) and after their end (their threads are joined).
#[test]
fn readers_with_threads_drop_part_way_and_at_the_end() {
    let items = heap_trace(11, 5000);
    let bytes = pack(
        &items,
        Options {
            block_records: 300,
            ..Options::default()
        },
    );
    for read_all in [false, true] {
        let mut ahead = Reader::read_ahead(std::io::Cursor::new(bytes.clone())).unwrap();
        let mut parallel = Reader::parallel(std::io::Cursor::new(bytes.clone()), 2).unwrap();
        // Its reading thread waits for room while the reader is dropped.
        let mut budgeted =
            Reader::parallel_within(std::io::Cursor::new(bytes.clone()), 2, 1).unwrap();
        for r in [&mut ahead, &mut parallel, &mut budgeted] {
            let mut n = 0;
            while r.next_item().unwrap().is_some() {
                n += 1;
                if !read_all && n == 10 {
                    break;
                }
            }
            assert_eq!(n, if read_all { items.len() } else { 10 });
        }
    }
}

/// `--policy` for tpack: a codec, optionally a block size.
#[test]
fn policies_name_a_codec_and_a_block_size() {
    let o = Options::parse("xz-3,block=4M").unwrap();
    assert_eq!(o.codec, Codec::Xz(3));
    assert_eq!(o.block_records, 4 << 20);
    assert_eq!(Options::parse("zstd").unwrap().block_records, 1 << 20);
    assert_eq!(Options::parse("raw,block=100").unwrap().block_records, 100);
    for bad in [
        "lz4",
        "zstd-23",
        "zstd,block=0",
        "zstd,block=17M",
        "zstd,blocks=4",
        "zstd,block=x",
    ] {
        assert!(Options::parse(bad).is_none(), "{bad}");
    }
    // Bigger blocks keep more frees inside their block: smaller output.
    let items = heap_trace(11, 20_000);
    let small = pack(
        &items,
        Options {
            block_records: 2_000,
            ..Options::default()
        },
    );
    let big = pack(&items, Options::parse("zstd,block=64K").unwrap());
    assert!(big.len() < small.len(), "{} vs {}", big.len(), small.len());
    let (got, _, err) = unpack(&big);
    assert!(err.is_none());
    assert_eq!(got, items);
}

/// The records of `fixtures/version1.tpack`: a heap-like trace in blocks of
/// 700 records, then events whose times jump far forward, backward (a
/// thread's late event) and across the whole 64-bit range, every event
/// kind, and comments.
fn version_1_items() -> Vec<OwnedItem> {
    let mut items = heap_trace(5, 2_000);
    let mut t = 1u64 << 40;
    for (i, jump) in [
        0i64,
        253,
        254,
        255,
        65_533,
        65_534,
        65_535,
        70_000,
        -1,
        -300,
        1 << 50,
    ]
    .into_iter()
    .enumerate()
    {
        t = t.wrapping_add(jump as u64);
        let mut e = OwnedEvent::new(EVENT_KINDS[i % 10]);
        e.size = 40;
        e.address = 0x5555_0001_0000 + 64 * i as u64;
        e.new_address = e.address + 0x1000;
        e.thread = 9;
        e.heap = (i % 3) as u64;
        e.time = t;
        items.push(OwnedItem::Event(canonical(e)));
        if i % 4 == 0 {
            items.push(OwnedItem::Comment(format!("jump {jump}").into_bytes()));
        }
    }
    for time in [u64::MAX, 0, u64::MAX / 2] {
        let mut e = OwnedEvent::new(EventKind::Free);
        e.address = 0x7000;
        e.time = time;
        items.push(OwnedItem::Event(e));
    }
    items
}

/// Files of format version 1 (times as zigzag varints in two streams,
/// written by the version-1 writer of commit 0a19744) still read, record
/// for record, every way.
#[test]
fn version_1_files_still_read() {
    let bytes = fixture("version1.tpack");
    assert_eq!(&bytes[..8], b"tpack\x00\x01\x00");
    let (got, warnings, err) = unpack(&bytes);
    assert!(warnings.is_empty() && err.is_none(), "{warnings:?} {err:?}");
    assert_eq!(got, version_1_items());
}

/// Wide codes that name nothing, in a block whose checksum holds: a free
/// age's first byte 255 (no age uses it) and a difference that makes the
/// age 0, and a new size's first byte 255, each stop reading with an error
/// naming the record, after the records before it.
#[test]
fn bad_wide_codes_are_errors_naming_the_record() {
    let mut e = OwnedEvent::new(EventKind::Alloc);
    e.size = 8;
    e.address = 0x1000;
    let alloc = OwnedItem::Event(e);
    let mut f = OwnedEvent::new(EventKind::Free);
    f.address = 0x1000;
    let free = OwnedItem::Event(f);
    let bytes = pack(
        &[alloc.clone(), free],
        Options {
            codec: Codec::Raw,
            ..Options::default()
        },
    );
    // Every length in this small table is one byte: the streams start
    // after the magic, the header, the summary and 28 × 3 bytes, in table
    // order.
    let table = 8 + 16 + tramp_tpack::SUMMARY;
    let stored = |i: usize| bytes[table + 3 * i + 2] as usize;
    let start = |i: usize| table + 28 * 3 + (0..i).map(stored).sum::<usize>();
    // Stream 6, free-age: the free's age 1 is the code zigzag(1) + 1 = 3.
    // Stream 2, size-raw: the new size 8.
    for (stream, was, code, why, kept) in [
        (6, 3, 0xff, "free-age code 255", 1),
        (6, 3, 0x01, "age 0", 1),
        (2, 8, 0xff, "size-raw code 255", 0),
    ] {
        let at = start(stream);
        assert_eq!((stored(stream), bytes[at]), (1, was));
        let mut bad = bytes.clone();
        bad[at] = code;
        let bad = fix_checksums(bad);
        let (got, warnings, err) = unpack(&bad);
        assert_eq!(got, [alloc.clone()][..kept], "{why}");
        assert!(warnings.is_empty());
        let err = err.expect("an error");
        assert!(
            err.contains(why) && err.contains(&format!("record {kept}")),
            "{err}"
        );
    }
}

/// A block header whose record count (outside the checksum) is damaged to
/// 0: the block's data is left over, which is damage, never a silent drop.
#[test]
fn a_block_claiming_no_records_is_damage() {
    let (items, block, mut bytes, second) = three_blocks();
    bytes[second + 4..second + 8].copy_from_slice(&0u32.to_le_bytes());
    let (got, _warnings, err) = unpack(&bytes);
    let err = err.expect("the zero count is reported");
    assert!(err.contains("records end before"), "{err}");
    // Everything before the damaged block was delivered.
    assert!(got.len() >= block && got[..block] == items[..block]);
}

/// The records of `fixtures/version2.tpack`: a heap-like trace in blocks of
/// 900 records whose allocations carry sites as a recording's do (a tag
/// byte and a varint), short and long, in call sequences that repeat with
/// variations, and a few comments.
fn version_2_items() -> Vec<OwnedItem> {
    let mut items = heap_trace(11, 4_000);
    let mut n = 0u64;
    for item in &mut items {
        if let OwnedItem::Event(e) = item
            && e.kind == EventKind::Alloc
        {
            n += 1;
            let site = (n % 9) * (n % 5) + (n / 1000);
            e.attributes = match n % 23 {
                0 => b"a site whose name is longer than sixteen bytes".to_vec(),
                7 => Vec::new(),
                _ => vec![2, 0x80 | (site as u8 & 0x7f), (site >> 7) as u8 + 1],
            };
        }
    }
    items
}

/// Files of format version 2 (attributes coded against the recent table
/// alone, written by the version-2 writer of commit b6c1069) still read,
/// record for record.
#[test]
fn version_2_files_still_read() {
    let bytes = fixture("version2.tpack");
    assert_eq!(&bytes[..8], b"tpack\x00\x02\x00");
    let (got, warnings, err) = unpack(&bytes);
    assert!(warnings.is_empty() && err.is_none(), "{warnings:?} {err:?}");
    assert_eq!(got, version_2_items());
}

/// The trailer's layout, byte for byte (docs/formats/tpack.md, "Trailer"),
/// and how readers take it: passed in order after the blocks, found from
/// the end, and damage to it reported, never a lost record.
#[test]
fn trailer_layout_and_damage() {
    use tramp_tpack::trailer::{Found, find};
    let records = heap_trace(5, 3000);
    let opts = Options {
        block_records: 1000,
        ..Options::default()
    };
    let mut w = Writer::new(Vec::new(), opts).unwrap();
    for i in &records {
        w.write_item(&i.as_item()).unwrap();
    }
    let bytes = w.finish_with_trailer(b"hi").unwrap();
    let plain = pack(&records, opts);
    let (items, warnings, err) = unpack(&plain);
    assert!(warnings.is_empty() && err.is_none());
    let n = records.len() as u64;
    let mut want = plain.clone();
    want.extend_from_slice(b"TPKI\x02\x00\x00\x00");
    want.extend_from_slice(&crc32fast::hash(b"hi").to_le_bytes());
    want.extend_from_slice(&n.to_le_bytes());
    want.extend_from_slice(b"hi");
    want.extend_from_slice(&22u64.to_le_bytes());
    want.extend_from_slice(b"tpackidx");
    assert_eq!(bytes, want);
    // Read in order: the records, then the end.
    assert_eq!(unpack(&bytes), (items.clone(), vec![], None));
    // Found from the end.
    match find(&mut std::io::Cursor::new(&bytes)).unwrap() {
        Found::Trailer(b) => assert_eq!(b, b"hi"),
        _ => panic!("no trailer found"),
    }
    assert!(matches!(
        find(&mut std::io::Cursor::new(&plain)).unwrap(),
        Found::None
    ));
    // Damage: its body, its record count, bytes after it. Every record is
    // kept and the damage is one warning; find() will not use it.
    let at = plain.len();
    for (what, damaged) in [
        ("checksum", {
            let mut b = bytes.clone();
            b[at + 20] ^= 1;
            b
        }),
        ("counts", {
            let mut b = bytes.clone();
            b[at + 12] ^= 1;
            b
        }),
        ("follow", {
            let mut b = bytes.clone();
            b.push(0);
            b
        }),
    ] {
        let (got, warnings, err) = unpack(&damaged);
        assert!(err.is_none(), "{what}: {err:?}");
        assert_eq!(got, items, "{what}");
        assert_eq!(warnings.len(), 1, "{what}: {warnings:?}");
        assert!(warnings[0].contains("index"), "{what}: {warnings:?}");
        assert!(
            matches!(
                find(&mut std::io::Cursor::new(&damaged)).unwrap(),
                Found::Unreachable(_)
            ),
            "{what}"
        );
    }
}

/// Joined files are one file of each one's records in turn, every block
/// copied as it was; a damaged block or another version is refused.
#[test]
fn joined_files_hold_each_files_records_in_turn() {
    use tramp_tpack::join::{copy_blocks, start};
    let opts = Options {
        block_records: 700,
        ..Options::default()
    };
    let (a, b) = (heap_trace(1, 2000), heap_trace(2, 900));
    let mut w = Writer::new(Vec::new(), opts).unwrap();
    for i in &a {
        w.write_item(&i.as_item()).unwrap();
    }
    let with_trailer = w.finish_with_trailer(b"index").unwrap();
    let plain = pack(&b, opts);
    let mut joined = Vec::new();
    start(&mut joined).unwrap();
    let ca = copy_blocks(&mut &with_trailer[..], &mut joined).unwrap();
    let cb = copy_blocks(&mut &plain[..], &mut joined).unwrap();
    let blocks = |n: usize| n.div_ceil(700) as u64;
    assert_eq!((ca.blocks, ca.records), (blocks(a.len()), a.len() as u64));
    assert_eq!((cb.blocks, cb.records), (blocks(b.len()), b.len() as u64));
    // The joined blocks are the two files' bytes, trailer and magic left out.
    assert_eq!(joined.len() as u64, 8 + ca.bytes + cb.bytes);
    assert_eq!(
        &joined[8..8 + ca.bytes as usize],
        &with_trailer[8..8 + ca.bytes as usize]
    );
    assert_eq!(&joined[8 + ca.bytes as usize..], &plain[8..]);
    let (items, warnings, err) = unpack(&joined);
    assert!(warnings.is_empty() && err.is_none(), "{warnings:?} {err:?}");
    let want: Vec<OwnedItem> = a.iter().chain(&b).cloned().collect();
    assert_eq!(items, unpack(&pack(&want, opts)).0);
    // A flipped byte in the second block: refused, naming where.
    let mut bad = plain.clone();
    let second = 8 + 16 + u32::from_le_bytes(plain[16..20].try_into().unwrap()) as usize;
    bad[second + 40] ^= 1;
    let e = copy_blocks(&mut &bad[..], &mut Vec::new()).unwrap_err();
    assert!(
        e.to_string()
            .starts_with(&format!("the block at byte {second}: block checksum")),
        "{e}"
    );
    let mut old = plain.clone();
    old[6] = 4;
    assert!(copy_blocks(&mut &old[..], &mut Vec::new()).is_err());
    let cut = &plain[..plain.len() - 3];
    let e = copy_blocks(&mut &cut[..], &mut Vec::new()).unwrap_err();
    assert!(e.to_string().contains("cut short"), "{e}");
}
