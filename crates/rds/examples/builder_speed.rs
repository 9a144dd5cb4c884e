//! Pointer events per second through the profile builder (bench for
//! docs/benchmarks.md): many linked lists and binary trees built, traversed
//! repeatedly, half of them freed.
//!
//! usage: builder_speed [SCALE]

use std::time::Instant;

use tramp_rds::builder::Builder;

/// Resident memory of this process in bytes (Linux /proc), for the
/// profiler's memory per live object.
fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

fn run(scale: u64) -> (u64, usize, usize) {
    let base = rss();
    let mut b = Builder::new();
    let mut t = 0u64;
    let mut events = 0u64;
    let mut key = 1u64;
    let mut roots = Vec::new();
    for s in 0..scale {
        // A list of 100 nodes (site 1) hanging off a header (site 0).
        let head = key;
        b.alloc(head, 0, 16, t);
        key += 1;
        let mut prev = 0;
        for i in 0..100 {
            t += 1;
            b.alloc(key, 1, 16, t);
            if i == 0 {
                b.edge_add(head, 0, key, 1, t);
            } else {
                b.edge_add(prev, 8, key, 2, t);
            }
            events += 2;
            prev = key;
            key += 1;
        }
        // A tree of 127 nodes (site 2), children by index.
        let base = key;
        for i in 0..127 {
            b.alloc(base + i, 2, 24, t);
            events += 1;
            if i > 0 {
                let parent = base + (i - 1) / 2;
                b.edge_add(parent, 8 * (1 + (i - 1) % 2), base + i, 3, t);
                events += 1;
            }
        }
        key += 127;
        roots.push((head, base));
        // Traverse the list and the tree ten times.
        for _ in 0..10 {
            for n in head + 1..head + 100 {
                t += 1;
                b.edge_traverse(n, 8, None, 4, t, 1);
            }
            for i in 1..127 {
                b.edge_traverse(base + (i - 1) / 2, 8 * (1 + (i - 1) % 2), None, 5, t, 1);
            }
            events += 99 + 126;
        }
        // Free every other structure.
        if s % 2 == 1 {
            let (h, bse) = roots.swap_remove(0);
            for k in h..h + 101 {
                b.node_delete(k, 6, t);
            }
            for k in bse..bse + 127 {
                b.node_delete(k, 6, t);
            }
            events += 228;
        }
    }
    let grown = rss().saturating_sub(base);
    println!(
        "profiler memory: {:.1} MB resident growth with {} objects live ({:.0} bytes per live object, instances and queues included)",
        grown as f64 / 1e6,
        b.live_objects(),
        grown as f64 / b.live_objects().max(1) as f64
    );
    (events, b.instances().len(), b.live_objects())
}

fn main() {
    let scale: u64 = std::env::args()
        .nth(1)
        .map_or(4000, |s| s.parse().expect("scale"));
    let t = Instant::now();
    let (events, instances, live) = run(scale);
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{events} pointer and object events in {secs:.3} s: {:.1} M events/s ({instances} instances, {live} objects live at the end)",
        events as f64 / secs / 1e6
    );
}
