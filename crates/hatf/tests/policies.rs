//! Every encoding policy decodes to the records it was given: random traces
//! shaped like heaps (strided, clustered and scattered addresses, runs of
//! sizes, threads and heaps, rising times), and a real CPython recording.

mod common;
use common::*;
use proptest::prelude::*;
use tramp_hatf::policy::POLICIES;
use tramp_hatf::spec::EVENT_KINDS;
use tramp_hatf::{EventKind, OwnedEvent, OwnedItem, Policy, Reader};

/// Every policy that places its own metadata.
fn policies() -> impl Iterator<Item = Policy> {
    POLICIES
        .iter()
        .map(|(_, p)| *p)
        .filter(|p| *p != Policy::Explicit)
}

/// An address pattern: a run of `len` addresses from `start`, stepping by
/// `step` (0: one address reused), or scattered anywhere.
#[derive(Clone, Debug)]
enum Pattern {
    Strided {
        start: u64,
        step: i64,
        len: usize,
    },
    Clustered {
        base: u64,
        spread: u64,
        len: usize,
        seed: u64,
    },
    Scattered(Vec<u64>),
}

fn pattern() -> impl Strategy<Value = Pattern> {
    prop_oneof![
        (any::<u64>(), -64i64..64, 1usize..40).prop_map(|(start, step, len)| Pattern::Strided {
            start,
            step,
            len
        }),
        (
            any::<u64>(),
            prop_oneof![Just(200u64), Just(60_000u64), 1u64..5000],
            1usize..60,
            any::<u64>()
        )
            .prop_map(|(base, spread, len, seed)| Pattern::Clustered {
                base,
                spread,
                len,
                seed
            }),
        prop::collection::vec(any::<u64>(), 1..8).prop_map(Pattern::Scattered),
    ]
}

fn addresses(p: &Pattern) -> Vec<u64> {
    match p {
        Pattern::Strided { start, step, len } => (0..*len)
            .map(|i| start.wrapping_add((*step as u64).wrapping_mul(i as u64)))
            .collect(),
        Pattern::Clustered {
            base,
            spread,
            len,
            seed,
        } => {
            let mut x = *seed | 1;
            (0..*len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    base.wrapping_add(x % spread)
                })
                .collect()
        }
        Pattern::Scattered(v) => v.clone(),
    }
}

/// Events over the addresses of some patterns, with sizes, threads, heaps
/// and times in runs.
fn trace() -> impl Strategy<Value = Vec<OwnedItem>> {
    (
        prop::collection::vec(pattern(), 1..8),
        prop::collection::vec(
            (
                0usize..10,
                0u64..70_000,
                0u64..4,
                0u64..3,
                0u64..100_000,
                1usize..6,
            ),
            1..40,
        ),
        any::<bool>(),
    )
        .prop_map(|(patterns, runs, with_comment)| {
            let addrs: Vec<u64> = patterns.iter().flat_map(addresses).collect();
            let mut out = Vec::new();
            let mut time = 0u64;
            let mut a = addrs.iter().cycle();
            for (k, size, thread, heap, dt, repeat) in runs {
                for _ in 0..repeat {
                    let kind = EVENT_KINDS[if k < 6 { k } else { k % 2 }];
                    let mut e = OwnedEvent::new(kind);
                    let layout = kind.layout();
                    if layout.contains(&tramp_hatf::Field::Size) {
                        e.size = size;
                    }
                    if layout.contains(&tramp_hatf::Field::Address) {
                        e.address = *a.next().unwrap();
                    }
                    if kind.is_realloc() {
                        e.new_address = *a.next().unwrap();
                    }
                    e.thread = thread;
                    if layout.contains(&tramp_hatf::Field::Heap) {
                        e.heap = heap;
                    }
                    time = time.wrapping_add(dt);
                    e.time = time;
                    out.push(OwnedItem::Event(e));
                }
            }
            if with_comment {
                out.insert(out.len() / 2, OwnedItem::Comment(b"phase".to_vec()));
            }
            out
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn every_policy_decodes_to_the_same_records(items in trace()) {
        for policy in policies() {
            let bytes = encode(&items, policy);
            prop_assert_eq!(decode(&bytes, false), items.clone(), "policy {}", policy);
        }
    }
}

/// The records (metadata left out) of a real recording: CPython building
/// JSON (25,781 records, 64-bit addresses, one thread, delta times).
fn recorded() -> Vec<OwnedItem> {
    let z = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/cpython-json.hatf.zst"
    ))
    .unwrap();
    let bytes = zstd::decode_all(&z[..]).unwrap();
    decode(&bytes, false)
}

#[test]
fn every_policy_round_trips_a_recorded_trace_and_the_address_rules_pay() {
    let items = recorded();
    assert!(items.len() > 20_000);
    let mut sizes = std::collections::BTreeMap::new();
    for policy in policies() {
        let bytes = encode(&items, policy);
        assert_eq!(decode(&bytes, false), items, "policy {policy}");
        sizes.insert(policy.name(), bytes.len());
    }
    // What each rule is for, on a real heap: sizes shrink under small-size,
    // addresses under the base-offset rules, times under time-delta, and
    // best is no larger than any single rule.
    let naive = sizes["naive"];
    for p in [
        "small-size",
        "baseoffset-2",
        "best-baseoffset",
        "time-delta",
    ] {
        assert!(sizes[p] < naive, "{p}: {} vs naive {naive}", sizes[p]);
    }
    for (p, n) in &sizes {
        assert!(sizes["best"] <= *n, "best {} > {p} {n}", sizes["best"]);
    }
}

/// Encoding with a policy then reading the bytes with metadata shows the
/// metadata the rule placed; `best` switches rules only between windows.
#[test]
fn the_stride_rule_covers_a_run_and_returns_to_raw() {
    let mut items: Vec<OwnedItem> = (0..8u64)
        .map(|i| {
            let mut e = OwnedEvent::new(EventKind::Alloc);
            e.size = 16;
            e.address = 0x1000 + 16 * i;
            OwnedItem::Event(e)
        })
        .collect();
    let mut last = OwnedEvent::new(EventKind::Alloc);
    last.size = 32;
    last.address = 0x9000;
    items.push(OwnedItem::Event(last));
    let bytes = encode(&items, Policy::Stride);
    // Eight allocs at 5 bytes (tag, 4-byte size) + one stride record (20),
    // then none (4), the 2-byte width (4) and a 7-byte alloc.
    assert_eq!(bytes.len(), 20 + 8 * 5 + 4 + 4 + 7);
    let mut r = Reader::from_slice(&bytes).with_metadata(true);
    let mut metas = 0;
    while let Some(i) = r.next_item().unwrap() {
        metas += matches!(i, tramp_hatf::Item::Meta(_)) as usize;
    }
    assert_eq!(metas, 3);
    assert_eq!(decode(&bytes, false), items);
}

/// SplitAddr: any HATF trace split into its main and address streams joins
/// back into the very same bytes, and the address stream holds exactly the
/// addresses stored raw.
fn split_join(bytes: &[u8]) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    use std::io::{Read, Write};
    use tramp_hatf::splitaddr::{Joiner, Splitter};
    let mut s = Splitter::new(Vec::new(), Vec::new());
    for chunk in bytes.chunks(7) {
        s.write_all(chunk).unwrap();
    }
    let (main, addrs) = s.finish().unwrap();
    let mut joined = Vec::new();
    Joiner::new(std::io::BufReader::new(&main[..]), &addrs[..])
        .read_to_end(&mut joined)
        .unwrap();
    (main, addrs, joined)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn splitaddr_joins_back_byte_for_byte(items in trace(), policy in 0usize..12) {
        let policy = POLICIES[policy].1;
        let policy = if policy == Policy::Explicit { Policy::Naive } else { policy };
        let bytes = encode(&items, policy);
        let (main, addrs, joined) = split_join(&bytes);
        prop_assert_eq!(&joined, &bytes);
        prop_assert_eq!(main.len() + addrs.len(), bytes.len());
    }
}

#[test]
fn splitaddr_moves_only_raw_addresses() {
    let items = recorded();
    let naive = encode(&items, Policy::Naive);
    let (_, addrs, joined) = split_join(&naive);
    assert_eq!(joined, naive);
    // Naive HATF of a 64-bit recording stores every address raw, 8 bytes.
    let n: usize = items
        .iter()
        .map(|i| match i {
            OwnedItem::Event(e) if e.kind.is_realloc() => 2,
            OwnedItem::Event(e) if e.kind.layout().contains(&tramp_hatf::Field::Address) => 1,
            _ => 0,
        })
        .sum();
    assert_eq!(addrs.len(), 8 * n);
    // Under best, the base-offset and stride runs keep their addresses in
    // the main stream.
    let best = encode(&items, Policy::Best);
    let (_, addrs_best, joined) = split_join(&best);
    assert_eq!(joined, best);
    assert!(addrs_best.len() < addrs.len());
    // A cut main stream is an error, not a short trace.
    let (main, addrs, _) = split_join(&best);
    let mut out = Vec::new();
    let r = std::io::Read::read_to_end(
        &mut tramp_hatf::splitaddr::Joiner::new(&main[..main.len() - 3], &addrs[..]),
        &mut out,
    );
    assert!(r.is_err());
}
