//! Decodes the same events with three readers in one process, alternating
//! rounds, and prints each one's best rate and its ratio to the native
//! HATF reader:
//!
//! * native: `tramp_hatf::Reader` on the HATF 1.0 file (`next_item` and
//!   `for_each_item`, borrowed bytes and streamed);
//! * universal: `tramp_metatf::codec::MetaSource` on the Meta-TF file, the
//!   plan compiled once from the DTD the file embeds (`next_record` and
//!   `for_each_record`);
//! * generated: the module `tramp gen --rust bench/hatf-bench.dtd` writes
//!   (made by build.rs), streamed.
//!
//! Every reader folds the size, address and time of each allocation event
//! into a checksum; the two Meta-TF readers must agree.
//!
//! `cargo run --release -p tramp-bench-metatf -- FILE.hatf FILE.mtf [ROUNDS]`

include!(concat!(env!("OUT_DIR"), "/module.rs"));

use std::time::Instant;

use tramp_core::Source;

type Rate = (u64, u64, f64);

fn timed(f: impl FnOnce() -> (u64, u64)) -> Rate {
    let t = Instant::now();
    let (n, sum) = f();
    (n, sum, t.elapsed().as_secs_f64())
}

fn native_next<B: tramp_hatf::reader::Buffer>(mut r: tramp_hatf::Reader<B>) -> (u64, u64) {
    let (mut n, mut sum) = (0u64, 0u64);
    while let Some(item) = r.next_item().unwrap() {
        n += 1;
        if let tramp_hatf::Item::Event(e) = item {
            sum = sum.wrapping_add(e.address ^ e.size ^ e.time);
        }
    }
    (n, sum)
}

fn native_each<B: tramp_hatf::reader::Buffer>(mut r: tramp_hatf::Reader<B>) -> (u64, u64) {
    let mut sum = 0u64;
    let n = r
        .for_each_item(|item| {
            if let tramp_hatf::Item::Event(e) = item {
                sum = sum.wrapping_add(e.address ^ e.size ^ e.time);
            }
        })
        .unwrap();
    (n, sum)
}

fn universal(bytes: &[u8]) -> (u64, u64) {
    let mut src = tramp_metatf::codec::MetaSource::open(bytes, None).unwrap();
    let schema = src.schema().clone();
    // Field indices of size, address and time in the alloc record.
    let alloc = schema.types.iter().find(|t| t.name == "alloc").unwrap();
    let field = |name: &str| alloc.fields.iter().position(|f| f.name == name).unwrap();
    let (ty, size, address, time) = (alloc.index, field("size"), field("address"), field("time"));
    let (mut n, mut sum) = (0u64, 0u64);
    while let Some(rec) = src.next_record().unwrap() {
        n += 1;
        if rec.record_type().index == ty {
            let get = |i: usize| rec.get(i).and_then(|v| v.as_u64()).unwrap_or(0);
            sum = sum.wrapping_add(get(address) ^ get(size) ^ get(time));
        }
    }
    (n, sum)
}

fn universal_each(bytes: &[u8]) -> (u64, u64) {
    let mut src = tramp_metatf::codec::MetaSource::open(bytes, None).unwrap();
    let schema = src.schema().clone();
    let alloc = schema.types.iter().find(|t| t.name == "alloc").unwrap();
    let field = |name: &str| alloc.fields.iter().position(|f| f.name == name).unwrap();
    let (ty, size, address, time) = (alloc.index, field("size"), field("address"), field("time"));
    let mut sum = 0u64;
    let n = src
        .for_each_record(|rec| {
            if rec.record_type().index == ty {
                let get = |i: usize| rec.get(i).and_then(|v| v.as_u64()).unwrap_or(0);
                sum = sum.wrapping_add(get(address) ^ get(size) ^ get(time));
            }
        })
        .unwrap();
    (n, sum)
}

fn generated(bytes: &[u8]) -> (u64, u64) {
    let mut r = generated::Reader::new(bytes).unwrap();
    let (mut n, mut sum) = (0u64, 0u64);
    while let Some(rec) = r.next().unwrap() {
        n += 1;
        if let generated::Record::Alloc(a) = rec {
            sum = sum.wrapping_add(a.address ^ a.size ^ a.time);
        }
    }
    (n, sum)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: tramp-bench-metatf FILE.hatf FILE.mtf [ROUNDS]");
        std::process::exit(2);
    }
    let hatf = std::fs::read(&args[1]).unwrap();
    let mtf = std::fs::read(&args[2]).unwrap();
    let rounds: usize = args.get(3).map_or(5, |r| r.parse().unwrap());
    let names = [
        "native next_item (slice)",
        "native next_item (stream)",
        "native for_each_item (slice)",
        "native for_each_item (stream)",
        "universal next_record (stream)",
        "universal for_each_record",
        "generated next (stream)",
    ];
    let mut best = [f64::INFINITY; 7];
    let mut seen = [(0u64, 0u64); 7];
    for _ in 0..rounds {
        let runs: [Rate; 7] = [
            timed(|| native_next(tramp_hatf::Reader::from_slice(&hatf))),
            timed(|| native_next(tramp_hatf::Reader::new(&hatf[..]))),
            timed(|| native_each(tramp_hatf::Reader::from_slice(&hatf))),
            timed(|| native_each(tramp_hatf::Reader::new(&hatf[..]))),
            timed(|| universal(&mtf)),
            timed(|| universal_each(&mtf)),
            timed(|| generated(&mtf)),
        ];
        for (i, (n, sum, dt)) in runs.into_iter().enumerate() {
            best[i] = best[i].min(dt);
            seen[i] = (n, sum);
        }
    }
    assert_eq!(
        seen[4], seen[6],
        "the universal and generated readers disagree"
    );
    assert_eq!(seen[4], seen[5], "next_record and for_each_record disagree");
    println!(
        "{} bytes HATF 1.0, {} bytes Meta-TF; best of {rounds} rounds",
        hatf.len(),
        mtf.len()
    );
    let native_best = best[..4].iter().copied().fold(f64::INFINITY, f64::min);
    for i in 0..7 {
        let (n, _) = seen[i];
        println!(
            "{:<32} {:>7.1} M records/s  {:>5.2}x the native next_item stream, {:>5.2}x the fastest native",
            names[i],
            n as f64 / best[i] / 1e6,
            // Ratios of records per second (record counts differ by the
            // header records each format has).
            (n as f64 / best[i]) / (seen[1].0 as f64 / best[1]),
            (n as f64 / best[i]) / (seen[0].0 as f64 / native_best),
        );
    }
}
