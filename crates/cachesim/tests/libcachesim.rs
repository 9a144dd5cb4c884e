//! Miss counts agree exactly with libCacheSim 0.3.5 on 1 M real requests
//! (Twitter cache cluster 52), by object count, for every policy both have.
//! The golden values were computed once by `bench/cachesim/golden.py` (the
//! Python binding `pip install libcachesim==0.3.5`); its output is pasted
//! below. Belady ran on the same requests in libCacheSim's oracleGeneral
//! layout because its csv reader drops next-access times.

use std::io::BufReader;

use tramp_cachesim::trace::CsvReader;
use tramp_cachesim::{Cache, PolicyKind, Request, Unit};

const TRACE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/cache/twitter_cluster52.csv.zst"
);

pub fn twitter() -> Vec<Request> {
    let f = std::fs::File::open(TRACE).expect("fixture");
    let z = zstd::Decoder::new(f).expect("zstd");
    CsvReader::new(BufReader::new(z))
        .collect::<Result<_, _>>()
        .expect("clean trace")
}

#[rustfmt::skip]
const GOLDEN: &[(&str, u64, u64)] = &[
    ("lru", 1000, 358717),  // miss ratio 0.358717
    ("lru", 5000, 266759),  // miss ratio 0.266759
    ("lru", 20000, 191436),  // miss ratio 0.191436
    ("lru", 80000, 148567),  // miss ratio 0.148567
    ("fifo", 100, 564226),  // miss ratio 0.564226
    ("fifo", 1000, 385756),  // miss ratio 0.385756
    ("fifo", 5000, 291887),  // miss ratio 0.291887
    ("fifo", 20000, 213988),  // miss ratio 0.213988
    ("fifo", 80000, 158515),  // miss ratio 0.158515
    ("clock", 100, 525609),  // miss ratio 0.525609
    ("clock", 1000, 358394),  // miss ratio 0.358394
    ("clock", 5000, 266513),  // miss ratio 0.266513
    ("clock", 20000, 192070),  // miss ratio 0.192070
    ("clock", 80000, 149372),  // miss ratio 0.149372
    ("sieve", 100, 519299),  // miss ratio 0.519299
    ("sieve", 1000, 345097),  // miss ratio 0.345097
    ("sieve", 5000, 249360),  // miss ratio 0.249360
    ("sieve", 20000, 184444),  // miss ratio 0.184444
    ("sieve", 80000, 148838),  // miss ratio 0.148838
    ("s3fifo", 100, 521916),  // miss ratio 0.521916
    ("s3fifo", 1000, 327709),  // miss ratio 0.327709
    ("s3fifo", 5000, 232187),  // miss ratio 0.232187
    ("s3fifo", 20000, 177490),  // miss ratio 0.177490
    ("s3fifo", 80000, 149152),  // miss ratio 0.149152
    ("arc", 100, 515041),  // miss ratio 0.515041
    ("arc", 1000, 353482),  // miss ratio 0.353482
    ("arc", 5000, 254043),  // miss ratio 0.254043
    ("arc", 20000, 185122),  // miss ratio 0.185122
    ("arc", 80000, 148603),  // miss ratio 0.148603
    ("2q", 100, 508217),  // miss ratio 0.508217
    ("2q", 1000, 318203),  // miss ratio 0.318203
    ("2q", 5000, 231958),  // miss ratio 0.231958
    ("2q", 20000, 183311),  // miss ratio 0.183311
    ("2q", 80000, 158515),  // miss ratio 0.158515
    ("lfu", 100, 627002),  // miss ratio 0.627002
    ("lfu", 1000, 486580),  // miss ratio 0.486580
    ("lfu", 5000, 373110),  // miss ratio 0.373110
    ("lfu", 20000, 263267),  // miss ratio 0.263267
    ("lfu", 80000, 148838),  // miss ratio 0.148838
    ("opt", 100, 386886),  // miss ratio 0.386886
    ("opt", 1000, 256267),  // miss ratio 0.256267
    ("opt", 5000, 181591),  // miss ratio 0.181591
    ("opt", 20000, 144377),  // miss ratio 0.144377
    ("opt", 80000, 143542),  // miss ratio 0.143542
];

#[test]
fn every_policy_matches_libcachesim_on_the_twitter_trace() {
    let reqs = twitter();
    assert_eq!(reqs.len(), 1_000_000);
    let mut wrong = Vec::new();
    for &(name, size, want) in GOLDEN {
        let kind: PolicyKind = name.parse().unwrap();
        let mut c = Cache::new(kind, size, Unit::Objects);
        for r in &reqs {
            c.access(r);
        }
        let got = c.stats().misses();
        if got != want {
            wrong.push(format!("{name} {size}: {got} misses, libCacheSim {want}"));
        }
        assert!(c.policy().len() as u64 <= size, "{name} {size} over capacity");
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
