//! The CPU-cache model against traces worked out by hand.

use tramp_cachesim::cpu::{GeometryError, Hierarchy, Level, Replacement, SetAssoc};

#[test]
fn direct_mapped_conflicts_miss_every_time() {
    // 4 sets of 1 way, 16-byte lines: addresses 0 and 64 share set 0.
    let mut c = SetAssoc::new(64, 1, 16, Replacement::Lru).unwrap();
    let got: Vec<bool> = [0, 64, 0, 64, 16, 16, 4]
        .iter()
        .map(|&a| c.access(a).0)
        .collect();
    assert_eq!(got, [false, false, false, false, false, true, false]);
    // 16 is line 1 (set 1): a hit the second time. 4 is line 0 again,
    // which 64 (line 4, set 0) had pushed out; now it pushes 64 out.
    assert!(c.contains(0) && !c.contains(64) && c.contains(16));
    assert_eq!(c.set_lines(0), [Some(0)]);
}

#[test]
fn four_way_lru_evicts_the_least_recently_used() {
    // One set of 4 ways, 1-byte lines (line = address).
    let mut c = SetAssoc::new(4, 4, 1, Replacement::Lru).unwrap();
    for a in [1, 2, 3, 4] {
        assert!(!c.access(a).0);
    }
    assert!(c.access(1).0); // order now (old → new): 2 3 4 1
    assert_eq!(c.access(5), (false, Some(2)));
    assert_eq!(c.access(6), (false, Some(3)));
    assert!(c.access(4).0); // 1 5 6 4
    assert_eq!(c.access(7), (false, Some(1)));
    assert_eq!(c.access(8), (false, Some(5)));
}

#[test]
fn tree_plru_follows_its_bits() {
    // 4 ways: bits b0 (root), b1 (ways 0-1), b2 (ways 2-3).
    let mut c = SetAssoc::new(4, 4, 1, Replacement::Plru).unwrap();
    for a in [10, 11, 12, 13] {
        c.access(a); // fill ways 0..3 in order
    }
    // After touching way 3 last: root points left, left node points to
    // way 0's sibling order as touched: way 0 then 1 touched → evict 0.
    assert_eq!(c.access(14), (false, Some(10)));
    // 14 is in way 0 now: root points right, right node (after 13) → way 2.
    assert_eq!(c.access(15), (false, Some(12)));
    // 15 in way 2: root left, left node (after 14 in way 0) → way 1.
    assert_eq!(c.access(16), (false, Some(11)));
    assert!(SetAssoc::new(12 * 64, 12, 64, Replacement::Plru).is_err());
}

#[test]
fn an_inclusive_hierarchy_back_invalidates() {
    let lvl = |name: &str, size, ways, line, lat| Level {
        name: name.into(),
        cache: SetAssoc::new(size, ways, line, Replacement::Lru).unwrap(),
        latency: lat,
        hits: 0,
    };
    // L1: 2 lines of 16 B, fully associative; L2: 2 lines of 32 B.
    let mut h =
        Hierarchy::new(vec![lvl("L1", 32, 2, 16, 1), lvl("L2", 64, 2, 32, 10)], 100).unwrap();
    assert_eq!(h.access(0), 100);
    assert_eq!(h.access(16), 10); // same 32-byte L2 line
    assert_eq!(h.access(0), 1);
    assert_eq!(h.access(64), 100); // L2 now {0-31, 64-95}; L1 evicts 16
    assert_eq!(h.access(128), 100); // L2 evicts 0-31 → L1 loses 0 too
    assert_eq!(h.access(0), 100);
    let r = h.report();
    assert_eq!(r.levels[0].hits, 1);
    assert_eq!(r.levels[1].hits, 1);
    assert_eq!(r.memory, 4);
    assert_eq!(r.cycles, 100 + 10 + 1 + 100 + 100 + 100);
    assert!(matches!(
        Hierarchy::new(vec![lvl("L1", 64, 2, 32, 1), lvl("L2", 64, 4, 16, 2)], 9),
        Err(GeometryError::Lines(0))
    ));
}

#[test]
fn table1_shape() {
    let h = Hierarchy::table1();
    let l = h.levels();
    assert_eq!(
        (l[0].cache.sets(), l[1].cache.sets(), l[2].cache.sets()),
        (64, 256, 1024)
    );
    let mut h = h;
    // A 32 KB stride-64 sweep twice: it fits L2, not L1 (16 KB).
    for _ in 0..2 {
        for a in (0..32 << 10).step_by(64) {
            h.access(a);
        }
    }
    let r = h.report();
    // First sweep: 512 lines of 64 B are 256 L2/L3 lines of 128 B: odd
    // halves hit L2 (256), even ones go to memory (256). Second sweep: L1
    // (LRU, 64 sets × 4) holds the last 16 KB only, which a forward sweep
    // evicts before reuse, so every access hits L2.
    assert_eq!(r.memory, 256);
    assert_eq!(r.levels[0].hits, 0);
    assert_eq!(r.levels[1].hits, 256 + 512);
}

#[test]
fn hierarchies_are_described_in_text() {
    let h: Hierarchy = "32K:8:64:4,1M:16:64:14:plru,mem:200".parse().unwrap();
    let l = h.levels();
    assert_eq!(
        (l.len(), l[0].cache.sets(), l[1].cache.sets()),
        (2, 64, 1024)
    );
    assert_eq!(h.report().memory_latency, 200);
    let t: Hierarchy = "table1".parse().unwrap();
    assert_eq!(t.levels().len(), 3);
    for (spec, msg) in [
        ("32K:8:64,mem:9", "SIZE:WAYS:LINE:LATENCY"),
        ("32K:8:64:4", "lacks mem:LATENCY"),
        ("mem:5", "names no cache level"),
        ("30000:8:64:4,mem:5", "whole number"),
        ("24K:6:64:4:plru,mem:5", "power-of-two number of ways"),
        ("32K:8:64:4:mru,mem:5", "lru or plru"),
    ] {
        let e = spec.parse::<Hierarchy>().unwrap_err().to_string();
        assert!(e.contains(msg), "{spec}: {e}");
    }
}

/// The resident memory of this process (VmRSS), in bytes.
fn resident() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib: u64 = s
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .unwrap()
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .unwrap();
    kib * 1024
}

#[test]
fn a_large_cache_costs_the_sets_it_uses_and_an_impossible_one_is_refused() {
    // 4 GiB of 64-byte lines: 1 GiB of tags and stamps if all were used.
    let before = resident();
    let mut c = SetAssoc::new(4 << 30, 16, 64, Replacement::Lru).unwrap();
    for i in 0..10_000u64 {
        c.access(i * 4096);
    }
    for i in 0..10_000u64 {
        assert!(c.contains(i * 4096));
    }
    let grown = resident().saturating_sub(before);
    assert!(grown < 128 << 20, "a sparse 4 GiB cache took {grown} bytes");
    // 1 TiB direct-mapped: 128 GiB of tags, refused with both figures.
    let e = "1024G:1:64:1,mem:1"
        .parse::<Hierarchy>()
        .unwrap_err()
        .to_string();
    assert!(e.contains("more than half of the"), "{e}");
    assert!(e.contains("bytes of memory available"), "{e}");
}
