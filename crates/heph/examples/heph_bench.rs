//! Decode and export throughput on a large generated trace, in memory:
//! `cargo run --release -p tramp-heph --example heph_bench -- [EVENTS] [OUT.heph]`.
//! The trace looks like the runtime's: 8 streams, nested events with
//! descriptions of 10–40 bytes and 0–4 attributes of every type (arrays
//! included). With OUT.heph it is also written there (for the CLI peers).

use std::time::Instant;

use tramp_heph::chrome::ChromeWriter;
use tramp_heph::{Reader, Value, Writer};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args.get(1).map_or(2_000_000, |s| s.parse().unwrap());
    let descriptions = [
        "Running thread-local process",
        "Polling for OS events",
        "Processing communication message",
        "Scheduling processes",
        "Running user function",
        "handling message",
    ];
    let mut w = Writer::new(Vec::new());
    w.epoch(1_795_312_333_888_124_039).unwrap();
    let mut t = 0u64;
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let attrs: Vec<(&str, Value)> = match x % 5 {
            0 => vec![],
            1 => vec![
                ("id", Value::U64(i)),
                ("name", Value::Str("comm_actor".into())),
            ],
            2 => vec![
                ("delta", Value::I64(-(i as i64))),
                ("ratio", Value::F64(i as f64 / 3.0)),
            ],
            3 => vec![
                ("ids", Value::U64s(vec![i, i + 1, i + 2])),
                ("label", Value::Str("scalar".into())),
            ],
            _ => vec![
                ("n", Value::U64(i)),
                ("names", Value::Strs(vec!["a".into(), "bb".into()])),
                ("xs", Value::F64s(vec![0.5, 1.5])),
                ("ok", Value::I64(1)),
            ],
        };
        t += 1 + x % 5000;
        w.event(
            (i % 8) as u32,
            x % 3,
            t,
            t + x % 100_000,
            descriptions[(x % 6) as usize],
            &attrs,
        )
        .unwrap();
    }
    let bytes = w.finish().unwrap();
    if let Some(path) = args.get(2) {
        std::fs::write(path, &bytes).unwrap();
    }
    let mb = bytes.len() as f64 / 1e6;
    let (mut best, mut best_owned, mut best_plain, mut count) =
        (f64::INFINITY, f64::INFINITY, f64::INFINITY, 0);
    for _ in 0..5 {
        // Decoding: every packet framed and validated (attributes
        // included), fixed fields and description read.
        let s = Instant::now();
        let mut r = Reader::new(&bytes[..]);
        let mut sum = 0u64;
        while let Some(p) = r.next_ref().unwrap() {
            if let tramp_heph::PacketRef::Event(e) = p {
                sum = sum
                    .wrapping_add(e.end - e.start + e.stream as u64 + e.description.len() as u64);
            }
        }
        std::hint::black_box(sum);
        best_plain = best_plain.min(s.elapsed().as_secs_f64());
        // Borrowed: every packet validated, every attribute decoded.
        let s = Instant::now();
        let mut r = Reader::new(&bytes[..]);
        let mut sum = 0u64;
        count = 0u64;
        while let Some(p) = r.next_ref().unwrap() {
            if let tramp_heph::PacketRef::Event(e) = p {
                sum = sum.wrapping_add(e.end - e.start + e.description.len() as u64);
                for (name, v) in e.attributes() {
                    sum = sum.wrapping_add(name.len() as u64);
                    std::hint::black_box(v);
                }
            }
            count += 1;
        }
        std::hint::black_box(sum);
        best = best.min(s.elapsed().as_secs_f64());
        // Owned packets (a String per description and name, a Vec per
        // attribute list).
        let s = Instant::now();
        let mut r = Reader::new(&bytes[..]);
        while let Some(p) = r.next_packet().unwrap() {
            std::hint::black_box(&p);
        }
        best_owned = best_owned.min(s.elapsed().as_secs_f64());
    }
    println!(
        "decode (validated, fields read): {count} packets, {mb:.1} MB in {best_plain:.3} s: {:.2} GB/s, {:.1} M packets/s",
        mb / 1e3 / best_plain,
        count as f64 / best_plain / 1e6
    );
    println!(
        "decode + every attribute decoded: {count} packets, {mb:.1} MB in {best:.3} s: {:.2} GB/s, {:.1} M packets/s",
        mb / 1e3 / best,
        count as f64 / best / 1e6
    );
    println!(
        "decode to owned packets: {count} packets, {mb:.1} MB in {best_owned:.3} s: {:.2} GB/s, {:.1} M packets/s",
        mb / 1e3 / best_owned,
        count as f64 / best_owned / 1e6
    );
    let s = Instant::now();
    let mut r = Reader::new(&bytes[..]);
    let mut c = ChromeWriter::new(Vec::with_capacity(bytes.len() * 3));
    while let Some(p) = r.next_packet().unwrap() {
        c.packet(&p).unwrap();
    }
    let json = c.finish().unwrap();
    let dt = s.elapsed().as_secs_f64();
    println!(
        "export: {:.1} MB of JSON in {dt:.3} s: {:.1} MB/s of trace in, {:.1} MB/s of JSON out, {:.2} M events/s",
        json.len() as f64 / 1e6,
        mb / dt,
        json.len() as f64 / 1e6 / dt,
        count as f64 / dt / 1e6
    );
}
