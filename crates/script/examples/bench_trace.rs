//! Trace generator and hand-written baseline for bench/tramp/run.sh.
//!
//! `bench_trace gen N OUT.bin OUT.txt`: N IO records in the layout of
//! crates/script/tests/scripts/fs.desc (type byte, pid, file, page,
//! function; 14 bytes), skewed file and page choice, one write in five, and
//! the same records as text lines "type pid file page function" for awk.
//! `bench_trace count FILE.bin`: Figure 4's counts by a hand-written loop
//! over the raw 14-byte records.
//! `bench_trace count-records DESC FILE.bin`: the same counts by a
//! hand-written loop over the tramp records the description reader gives
//! (the records `tramp run` interprets the script over).

use std::io::{BufRead, BufReader, BufWriter, Read, Write};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("gen") => {
            let n: u64 = args[2].parse().expect("N");
            let mut bin = BufWriter::new(std::fs::File::create(&args[3]).expect("bin"));
            let mut txt = BufWriter::new(std::fs::File::create(&args[4]).expect("txt"));
            let mut x: u64 = 0x9e3779b97f4a7c15;
            for _ in 0..n {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Skewed: small files and pages are hot (u^2 and u^4 of
                // uniform u).
                let u = (x >> 11) as f64 / (1u64 << 53) as f64;
                let v = ((x >> 3) & 0xffff) as f64 / 65536.0;
                let file = (v * v * 16.0) as u32;
                let page = (u.powi(4) * 8192.0) as u32;
                let pid = (x >> 48) as u32 % 32;
                let func = (x >> 56).is_multiple_of(5) as u8;
                bin.write_all(&[0]).unwrap();
                bin.write_all(&pid.to_ne_bytes()).unwrap();
                bin.write_all(&file.to_ne_bytes()).unwrap();
                bin.write_all(&page.to_ne_bytes()).unwrap();
                bin.write_all(&[func]).unwrap();
                writeln!(txt, "0 {pid} {file} {page} {func}").unwrap();
            }
        }
        Some("count") => {
            let (mut reads, mut writes) = (0u64, 0u64);
            each_raw_record(&args[2], |rec| {
                if rec[0] == 0 {
                    if rec[13] == 0 {
                        reads += 1;
                    } else {
                        writes += 1;
                    }
                }
            });
            println!("{reads} {writes}");
        }
        Some("lru") => {
            // Figure 8 by hand: the raw bytes, the same buffer (an LRU
            // Cache of tramp-cachesim, 2048 objects) and the same keys as the
            // script gives it: the floor under `tramp run fig8`.
            use tramp_cachesim::{Cache, PolicyKind, Request, Unit};
            let mut cache = Cache::new(PolicyKind::Lru, 2048, Unit::Objects);
            each_raw_record(&args[2], |rec| {
                if rec[0] == 0 {
                    let file = u32::from_ne_bytes(rec[5..9].try_into().unwrap()) as u64;
                    let page = u32::from_ne_bytes(rec[9..13].try_into().unwrap()) as u64;
                    let id = 1 << 63 | file << 31 | page;
                    let req = if rec[13] == 0 {
                        Request::read(id, 1)
                    } else {
                        Request {
                            op: tramp_cachesim::Op::Write,
                            ..Request::read(id, 1)
                        }
                    };
                    cache.access(&req);
                }
            });
            let s = cache.stats();
            println!(
                "{} requests, {} misses",
                s.reads + s.writes,
                s.reads + s.writes - s.read_hits - s.write_hits
            );
        }
        Some("count-records") => {
            use tramp_core::{Source, Value};
            let text = std::fs::read_to_string(&args[2]).expect("description");
            let desc = std::sync::Arc::new(tramp_desc::parse(&text).expect("valid description"));
            let input =
                BufReader::with_capacity(1 << 16, std::fs::File::open(&args[3]).expect("bin"));
            let mut src = tramp_desc::DescSource::new(desc.clone(), input);
            let io = desc.record("IO").expect("an IO record");
            let func = desc.records[io]
                .fields
                .iter()
                .position(|f| f.name == "FUNCTION")
                .expect("a FUNCTION field");
            let (mut reads, mut writes) = (0u64, 0u64);
            while let Some(rec) = src.next_record().expect("clean trace") {
                if rec.record_type().index == io {
                    if rec.get(func) == Some(Value::U64(0)) {
                        reads += 1;
                    } else {
                        writes += 1;
                    }
                }
            }
            println!("{reads} {writes}");
        }
        _ => {
            let _ = BufReader::new(std::io::stdin()).lines();
            eprintln!(
                "usage: bench_trace gen N OUT.bin OUT.txt | count FILE.bin | count-records DESC FILE.bin"
            );
            std::process::exit(2);
        }
    }
}

/// Calls `f` on each 14-byte record of the generated trace's binary form.
fn each_raw_record(path: &str, mut f: impl FnMut(&[u8; 14])) {
    let mut r = BufReader::with_capacity(1 << 16, std::fs::File::open(path).expect("bin"));
    let mut rec = [0u8; 14];
    loop {
        match r.read_exact(&mut rec) {
            Ok(()) => f(&rec),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => panic!("{e}"),
        }
    }
}
