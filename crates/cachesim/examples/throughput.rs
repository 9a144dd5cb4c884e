//! Requests per second of tramp's caches and of the `lru` and `schnellru`
//! crates on the same requests held in memory, and of tramp reading the
//! trace from its file. Used by bench/cachesim/run.sh.
//!
//! usage: throughput TRACE.csv|TRACE.oracleGeneral [SIZE...]

use std::hint::black_box;
use std::io::BufReader;
use std::time::Instant;

use tramp_cachesim::mrc::StackDistances;
use tramp_cachesim::policy::{Access, Lru, Policy};
use tramp_cachesim::trace::{CsvReader, OracleReader};
use tramp_cachesim::{Cache, PolicyKind, Request, Unit};

fn read(path: &str) -> Vec<Request> {
    let f = BufReader::with_capacity(1 << 20, std::fs::File::open(path).expect("trace"));
    if path.contains("oracleGeneral") {
        OracleReader::new(std::io::BufReader::new(f))
            .map(|r| r.expect("clean"))
            .collect()
    } else {
        CsvReader::new(f).map(|r| r.expect("clean")).collect()
    }
}

fn best<F: FnMut() -> u64>(reps: usize, mut f: F) -> (f64, u64) {
    let mut best = f64::MAX;
    let mut out = 0;
    for _ in 0..reps {
        let t = Instant::now();
        out = black_box(f());
        best = best.min(t.elapsed().as_secs_f64());
    }
    (best, out)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = &args[1];
    let sizes: Vec<u64> = if args.len() > 2 {
        args[2..].iter().map(|s| s.parse().expect("size")).collect()
    } else {
        vec![1000, 20000]
    };
    let reqs = read(path);
    let n = reqs.len() as f64;
    let line = |what: &str, size: u64, (secs, misses): (f64, u64)| {
        println!(
            "{what:<28} {size:>7} {:>8.2} Mreq/s  misses {misses}",
            n / secs / 1e6
        );
    };
    for &size in &sizes {
        line(
            "tramp Lru (policy)",
            size,
            best(5, || {
                let mut p = Lru::new(size);
                let mut ev = Vec::new();
                let mut m = 0;
                for r in &reqs {
                    ev.clear();
                    let a = Access {
                        id: r.id,
                        charge: 1,
                        next_access: r.next_access,
                        write: false,
                    };
                    m += !p.get(a, &mut ev) as u64;
                }
                m
            }),
        );
        line(
            "tramp Cache (lru)",
            size,
            best(5, || {
                let mut c = Cache::new(PolicyKind::Lru, size, Unit::Objects);
                for r in &reqs {
                    c.access(r);
                }
                c.stats().misses()
            }),
        );
        line(
            "lru crate",
            size,
            best(5, || {
                let mut c = lru::LruCache::new(std::num::NonZeroUsize::new(size as usize).unwrap());
                let mut m = 0;
                for r in &reqs {
                    if c.get(&r.id).is_none() {
                        m += 1;
                        c.put(r.id, ());
                    }
                }
                m
            }),
        );
        line(
            "schnellru crate",
            size,
            best(5, || {
                let mut c =
                    schnellru::LruMap::<u64, ()>::new(schnellru::ByLength::new(size as u32));
                let mut m = 0;
                for r in &reqs {
                    if c.get(&r.id).is_none() {
                        m += 1;
                        c.insert(r.id, ());
                    }
                }
                m
            }),
        );
        for kind in PolicyKind::ALL.into_iter().skip(1) {
            line(
                &format!("tramp Cache ({kind})"),
                size,
                best(3, || {
                    let mut c = Cache::new(kind, size, Unit::Objects);
                    for r in &reqs {
                        c.access(r);
                    }
                    c.stats().misses()
                }),
            );
        }
    }
    line(
        "tramp LRU curve (exact)",
        0,
        best(3, || {
            let mut sd = StackDistances::new(Unit::Objects);
            for r in &reqs {
                sd.access(r);
            }
            sd.finish().misses(sizes[0])
        }),
    );
    line(
        "tramp LRU curve (SHARDS 1%)",
        0,
        best(3, || {
            let mut sd = StackDistances::sampled(Unit::Objects, 0.01);
            for r in &reqs {
                sd.access(r);
            }
            sd.finish().misses(sizes[0])
        }),
    );
    line(
        "tramp read file + LRU",
        sizes[0],
        best(3, || {
            let f = BufReader::with_capacity(1 << 20, std::fs::File::open(path).unwrap());
            let mut c = Cache::new(PolicyKind::Lru, sizes[0], Unit::Objects);
            if path.contains("oracleGeneral") {
                for r in OracleReader::new(std::io::BufReader::new(f)) {
                    c.access(&r.unwrap());
                }
            } else {
                for r in CsvReader::new(f) {
                    c.access(&r.unwrap());
                }
            }
            c.stats().misses()
        }),
    );
}
