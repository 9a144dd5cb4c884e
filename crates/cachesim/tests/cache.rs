//! Reads and writes, write-backs, prefetch, OPT's computed next accesses,
//! and the request-trace readers and writer.

use proptest::prelude::*;
use tramp_cachesim::request::fill_next_access;
use tramp_cachesim::trace::{Columns, CsvReader, OracleReader, TraceError, write_oracle};
use tramp_cachesim::{Cache, NEVER, Op, PolicyKind, Request, Unit};

mod common;

#[test]
fn dirty_evictions_are_write_backs() {
    // LRU of 2: W1 R2 R3 (1 leaves dirty) W2 R4 (3 leaves clean) R5 (2
    // leaves dirty).
    let mut c = Cache::new(PolicyKind::Lru, 2, Unit::Objects);
    for r in [
        Request::write(1, 8),
        Request::read(2, 8),
        Request::read(3, 8),
        Request::write(2, 8),
        Request::read(4, 8),
        Request::read(5, 8),
    ] {
        c.access(&r);
    }
    let s = c.stats();
    assert_eq!((s.reads, s.writes, s.read_hits, s.write_hits), (4, 2, 0, 1));
    assert_eq!((s.evictions, s.write_backs), (3, 2));
    assert_eq!(c.dirty(), 0);
    assert_eq!(s.bytes_missed, 5 * 8);
}

/// A policy with its own write-back bookkeeping hidden, so that the cache
/// keeps its set of dirty ids instead.
struct SetKept(Box<dyn tramp_cachesim::policy::Policy>);

impl tramp_cachesim::policy::Policy for SetKept {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn capacity(&self) -> u64 {
        self.0.capacity()
    }
    fn get(&mut self, a: tramp_cachesim::policy::Access, evicted: &mut Vec<u64>) -> bool {
        self.0.get(a, evicted)
    }
    fn contains(&self, id: u64) -> bool {
        self.0.contains(id)
    }
    fn occupied(&self) -> u64 {
        self.0.occupied()
    }
    fn len(&self) -> usize {
        self.0.len()
    }
}

proptest! {
    /// The dirty bits a single-queue policy keeps in its entries give the
    /// same write-backs and dirty count as the cache's own set of dirty ids.
    #[test]
    fn policy_kept_dirty_bits_agree_with_the_set(
        reqs in proptest::collection::vec((0u64..40, any::<bool>(), 1u32..5), 0..400),
        cap in 1u64..16,
        bytes in any::<bool>(),
    ) {
        let unit = if bytes { Unit::Bytes } else { Unit::Objects };
        for kind in [
            PolicyKind::Lru,
            PolicyKind::Fifo,
            PolicyKind::Clock { bits: 1 },
            PolicyKind::Sieve,
        ] {
            let mut fast = Cache::new(kind, cap, unit);
            let mut set = Cache::with_policy(Box::new(SetKept(kind.build(cap))), unit);
            for &(id, write, size) in &reqs {
                let r = if write { Request::write(id, size) } else { Request::read(id, size) };
                prop_assert_eq!(fast.access(&r), set.access(&r));
            }
            prop_assert_eq!(fast.stats().write_backs, set.stats().write_backs, "{}", kind);
            prop_assert_eq!(fast.dirty(), set.dirty(), "{}", kind);
        }
    }
}

#[test]
fn a_write_miss_that_is_not_admitted_leaves_nothing_dirty() {
    let mut c = Cache::new(PolicyKind::Lru, 10, Unit::Bytes);
    c.access(&Request::write(1, 11));
    assert_eq!(c.dirty(), 0);
    assert!(!c.contains(1));
}

#[test]
fn prefetch_loads_without_a_request() {
    for kind in PolicyKind::ALL {
        let mut c = Cache::new(kind, 100, Unit::Objects);
        let mut r = Request::read(7, 1);
        r.next_access = 2;
        c.prefetch(&r);
        assert!(c.contains(7), "{kind}");
        r.next_access = NEVER;
        assert!(c.access(&r), "{kind}: the prefetched object hits");
        let s = c.stats();
        assert_eq!((s.requests(), s.hits(), s.prefetches), (1, 1, 1), "{kind}");
    }
}

#[test]
fn opt_with_computed_next_accesses_matches_the_traces_own() {
    let mut reqs = common::twitter();
    for r in &mut reqs {
        r.next_access = NEVER;
    }
    fill_next_access(&mut reqs);
    for (size, want) in [(1000, 256267), (20000, 144377)] {
        let mut c = Cache::new(PolicyKind::Opt, size, Unit::Objects);
        for r in &reqs {
            c.access(r);
        }
        assert_eq!(c.stats().misses(), want);
    }
}

#[test]
fn csv_columns_come_from_the_header_and_errors_name_the_line() {
    let text = "# op, size, key\nget, 10, 5\nset,20,6\n\n# comment\nGET , 3, 5\n";
    let got: Vec<Request> = CsvReader::new(text.as_bytes())
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        got.iter().map(|r| (r.id, r.size, r.op)).collect::<Vec<_>>(),
        [(5, 10, Op::Read), (6, 20, Op::Write), (5, 3, Op::Read)]
    );
    let bad = "0, 1, 10, 4\n0, x, 10, 4\n";
    let mut r = CsvReader::new(bad.as_bytes());
    assert!(r.next().unwrap().is_ok());
    let e = r.next().unwrap().unwrap_err();
    assert!(matches!(e, TraceError::Csv { line: 2, .. }), "{e}");
    assert!(e.to_string().contains("\"x\""), "{e}");
    let short = "0\n";
    let e = CsvReader::new(short.as_bytes())
        .next()
        .unwrap()
        .unwrap_err();
    assert!(
        e.to_string().starts_with("line 1: no object id column"),
        "{e}"
    );
    let big = "0, 1, 99999999999, 4\n";
    let e = CsvReader::new(big.as_bytes()).next().unwrap().unwrap_err();
    assert!(e.to_string().contains("does not fit 32 bits"), "{e}");
    assert_eq!(
        Columns::from_header(" time, object, size, next_access_vtime"),
        Some(Columns::default())
    );
}

#[test]
fn an_endless_csv_line_is_damage_not_memory() {
    let mut text = b"0, 1, 10\n".to_vec();
    text.extend(std::iter::repeat_n(b'7', 200_000));
    let mut r = CsvReader::new(&text[..]);
    assert!(r.next().unwrap().is_ok());
    let e = r.next().unwrap().unwrap_err();
    assert_eq!(
        e.to_string(),
        "line 2 is longer than 65536 bytes (not a request)"
    );
}

#[test]
fn a_cut_oracle_record_is_reported_with_its_offset() {
    let mut bytes = Vec::new();
    for i in 0..3 {
        write_oracle(&mut bytes, i, &Request::read(i as u64, 100)).unwrap();
    }
    bytes.truncate(24 * 2 + 10);
    let mut r = OracleReader::new(&bytes[..]);
    assert!(r.next().unwrap().is_ok());
    assert!(r.next().unwrap().is_ok());
    let e = r.next().unwrap().unwrap_err();
    assert!(
        matches!(
            e,
            TraceError::Truncated {
                record: 2,
                offset: 48,
                len: 10
            }
        ),
        "{e}"
    );
    // Byte-exact against the layout: u32 time, u64 id, u32 size, i64 next.
    let mut one = Vec::new();
    let mut req = Request::read(0x0102030405060708, 0x0a0b0c0d);
    req.next_access = 5;
    write_oracle(&mut one, 0x11223344, &req).unwrap();
    assert_eq!(
        one,
        [
            0x44, 0x33, 0x22, 0x11, 8, 7, 6, 5, 4, 3, 2, 1, 0x0d, 0x0c, 0x0b, 0x0a, 5, 0, 0, 0, 0,
            0, 0, 0
        ]
    );
}

proptest! {
    #[test]
    fn oracle_records_round_trip(reqs in proptest::collection::vec(
        (any::<u32>(), any::<u64>(), any::<u32>(), prop_oneof![Just(NEVER), 0..i64::MAX as u64]),
        0..200,
    )) {
        let mut bytes = Vec::new();
        let reqs: Vec<(u32, Request)> = reqs
            .into_iter()
            .map(|(t, id, size, next)| (t, Request { id, size, op: Op::Read, next_access: next, time: t as u64, ttl: 0, }))
            .collect();
        for (t, r) in &reqs {
            write_oracle(&mut bytes, *t, r).unwrap();
        }
        prop_assert_eq!(bytes.len(), reqs.len() * 24);
        let back: Vec<Request> = OracleReader::new(&bytes[..]).map(Result::unwrap).collect();
        prop_assert_eq!(back, reqs.into_iter().map(|p| p.1).collect::<Vec<_>>());
    }

    #[test]
    fn csv_lines_round_trip(reqs in proptest::collection::vec(
        (any::<u64>(), any::<u32>(), prop_oneof![Just(NEVER), 0..i64::MAX as u64]),
        0..200,
    )) {
        let mut text = String::from("# time, object, size, next_access_vtime\n");
        for (id, size, next) in &reqs {
            let next = if *next == NEVER { i64::MAX as u64 } else { *next };
            text.push_str(&format!("0, {id}, {size}, {next}\n"));
        }
        let back: Vec<Request> = CsvReader::new(text.as_bytes()).map(Result::unwrap).collect();
        let want: Vec<Request> = reqs
            .into_iter()
            .map(|(id, size, next_access)| Request { id, size, op: Op::Read, next_access, time: 0, ttl: 0, })
            .collect();
        prop_assert_eq!(back, want);
    }

}

proptest! {
    // 24 policies × 2 units a case: 96 cases keep it to a few seconds.
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Objects whose size changes between requests (the fuzz target
    /// found LHD taking a grown size over its capacity): still never over.
    #[test]
    fn capacity_holds_when_sizes_change(reqs in proptest::collection::vec((0u64..20, 1u32..9), 1..300), cap in 8u64..40) {
        let mut reqs: Vec<Request> = reqs.iter().map(|&(id, size)| Request::read(id, size)).collect();
        fill_next_access(&mut reqs);
        for kind in PolicyKind::ALL {
            let mut c = Cache::new(kind, cap, Unit::Bytes);
            for r in &reqs {
                c.access(r);
                prop_assert!(c.policy().occupied() <= cap, "{} over capacity", kind);
            }
        }
    }

    /// Policies never hold more than their capacity, and a hit never
    /// evicts — except SLRU's, as libCacheSim's: a promotion passes tails
    /// down segment by segment, and the bottom segment may already hold
    /// more than its share (a miss with no room elsewhere enters it; the
    /// shares are truncated), so the cascade can end in an eviction;
    /// W-TinyLFU's main cache is such an SLRU; and LIRS's, where a hit on
    /// a resident HIR block makes it LIR, demoting a LIR block into the
    /// full HIR list, whose oldest block leaves.
    #[test]
    fn policies_respect_capacity(ids in proptest::collection::vec(0u64..50, 1..500), cap in 1u64..40) {
        let mut reqs: Vec<Request> = ids.iter().map(|&id| Request::read(id, (id % 5 + 1) as u32)).collect();
        fill_next_access(&mut reqs);
        for kind in PolicyKind::ALL {
            for unit in [Unit::Objects, Unit::Bytes] {
                let mut c = Cache::new(kind, cap, unit);
                for r in &reqs {
                    let before = c.stats().evictions;
                    let hit = c.access(r);
                    prop_assert!(c.policy().occupied() <= cap, "{} over capacity", kind);
                    let cascades = matches!(
                        kind,
                        PolicyKind::Slru { .. } | PolicyKind::Lirs | PolicyKind::WTinyLfu
                    );
                    prop_assert!(!hit || cascades || c.stats().evictions == before, "{} evicted on a hit", kind);
                }
                prop_assert_eq!(c.stats().requests(), reqs.len() as u64);
            }
        }
    }
}

#[test]
fn every_policy_reports_the_name_it_was_asked_by() {
    // clock2 and clock3 were once all labelled `clock`, which merged their
    // rows and curves.
    for name in [
        "lru", "fifo", "clock", "clock2", "clock3", "sieve", "s3fifo", "arc", "2q", "lfu", "opt",
        "slru", "slru3", "size", "mq",
    ] {
        let kind: tramp_cachesim::PolicyKind = name.parse().unwrap();
        assert_eq!(kind.to_string(), name);
        assert_eq!(kind.build(8).name(), name);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    /// A sweep on worker threads gives every cache the results it gets on
    /// one thread (requests past several batches, a last partial batch).
    #[test]
    fn a_sweep_on_threads_equals_one_thread(
        reqs in proptest::collection::vec((0u64..3000, 1u32..5000, any::<bool>()), 0..20_000),
        threads in 2usize..5,
    ) {
        use tramp_cachesim::sweep::Sweep;
        let mut reqs: Vec<Request> = reqs
            .into_iter()
            .map(|(id, size, w)| if w { Request::write(id, size) } else { Request::read(id, size) })
            .collect();
        fill_next_access(&mut reqs);
        for unit in [Unit::Objects, Unit::Bytes] {
            let sizes = match unit {
                Unit::Objects => vec![10, 100, 1000],
                Unit::Bytes => vec![10_000, 500_000],
            };
            // Every policy, and some with parameters and admission filters.
            let mut specs: Vec<tramp_cachesim::PolicySpec> =
                PolicyKind::ALL.iter().map(|&k| k.into()).collect();
            for s in ["s3fifo:small=0.2:move=1", "lru+bloom", "fifo+prob:prob=0.3", "mq:lifetime=50+size:size=2000"] {
                specs.push(s.parse().unwrap());
            }
            let mut one = Sweep::with_threads(&specs, &sizes, unit, 1, 0);
            let mut many = Sweep::with_threads(&specs, &sizes, unit, threads, 0);
            for r in &reqs {
                one.access(r);
                many.access(r);
            }
            let (a, b) = (one.finish(), many.finish());
            prop_assert_eq!(a.caches.len(), specs.len() * sizes.len());
            prop_assert_eq!(format!("{:?}", a.caches), format!("{:?}", b.caches));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// A cache warmed by the first N requests counts what a cold count of
    /// the whole trace less its count at request N gives; the LRU curve
    /// warmed the same way gives LRU's misses.
    #[test]
    fn warmup_leaves_the_first_requests_out(
        reqs in proptest::collection::vec((0u64..400, 1u32..5000, any::<bool>()), 1..3000),
        cut in 0.0f64..1.0,
    ) {
        let reqs: Vec<Request> = reqs
            .into_iter()
            .map(|(id, size, w)| if w { Request::write(id, size) } else { Request::read(id, size) })
            .collect();
        let n = ((reqs.len() as f64 * cut) as u64).max(1);
        for kind in [PolicyKind::Lru, PolicyKind::Arc, PolicyKind::S3Fifo] {
            let mut cold = Cache::new(kind, 50, Unit::Objects);
            let mut warm = Cache::new(kind, 50, Unit::Objects).with_warmup(n);
            let mut at_n = Default::default();
            for (i, r) in reqs.iter().enumerate() {
                cold.access(r);
                warm.access(r);
                if i as u64 + 1 == n {
                    at_n = cold.stats().clone();
                }
            }
            // As the simulation does at the trace's end: a trace no longer
            // than its warm-up (one request, say) leaves nothing counted.
            warm.end_warmup();
            let (all, w): (&tramp_cachesim::Stats, _) = (cold.stats(), warm.stats());
            let at_n: tramp_cachesim::Stats = at_n;
            prop_assert_eq!(w.reads, all.reads - at_n.reads);
            prop_assert_eq!(w.writes, all.writes - at_n.writes);
            prop_assert_eq!(w.hits(), all.hits() - at_n.hits());
            prop_assert_eq!(w.bytes_missed, all.bytes_missed - at_n.bytes_missed);
            prop_assert_eq!(w.evictions, all.evictions - at_n.evictions);
            prop_assert_eq!(w.write_backs, all.write_backs - at_n.write_backs);
            if kind == PolicyKind::Lru {
                let mut sd = tramp_cachesim::mrc::StackDistances::new(Unit::Objects).with_warmup(n);
                for r in &reqs {
                    sd.access(r);
                }
                prop_assert_eq!(sd.finish().misses(50), w.misses());
            }
        }
    }
}
