//! HATF codec throughput: decode from memory, decode through zstd (beside
//! zstd alone, the peer), and encode, on two 10 M-record naive traces:
//!
//! * `paper`: the shape of the HATF paper's Table 4 traces — alloc, free and
//!   realloc records with size and address only (here 64-bit addresses);
//! * `full`: the built-in sample with threads, heaps and nanosecond times.
//!
//! Run: `cargo bench -p tramp-hatf --bench codec` (figures in docs/benchmarks.md).

use std::hint::black_box;
use std::io::Read;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tramp_hatf::{Item, OwnedItem, Policy, Reader, Writer};
use tramp_io::Input;
use tramp_workloads::sample::Sample;

const RECORDS: usize = 10_000_000;

fn paper_shape(item: OwnedItem) -> Option<OwnedItem> {
    match item {
        OwnedItem::Event(mut e) if e.kind.tag() <= 5 => {
            e.thread = 0;
            e.heap = 0;
            e.time = 0;
            e.attributes.clear();
            Some(OwnedItem::Event(e))
        }
        _ => None,
    }
}

fn traces() -> Vec<(&'static str, Vec<OwnedItem>)> {
    let full: Vec<OwnedItem> = Sample::new(RECORDS, 42).take(RECORDS).collect();
    let paper: Vec<OwnedItem> = Sample::new(RECORDS, 42)
        .filter_map(paper_shape)
        .take(RECORDS)
        .collect();
    vec![("paper", paper), ("full", full)]
}

fn encode(items: &[OwnedItem]) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), Policy::Naive);
    for i in items {
        w.write_item(&i.as_item()).unwrap();
    }
    w.into_inner().unwrap()
}

/// Visits every record, folding values so the work cannot be skipped.
fn visit<B: tramp_hatf::reader::Buffer>(mut r: Reader<B>) -> u64 {
    let mut sum = 0u64;
    r.for_each_item(|item| {
        if let Item::Event(e) = item {
            sum = sum.wrapping_add(e.address ^ e.size ^ e.time);
        }
    })
    .unwrap();
    sum
}

fn bench(c: &mut Criterion) {
    for (name, items) in traces() {
        let bytes = encode(&items);
        let zst: std::sync::Arc<[u8]> = zstd::encode_all(&bytes[..], 3).unwrap().into();
        eprintln!(
            "{name}: {} records, naive HATF {:.2} B/record, zstd-3 {:.2} B/record",
            items.len(),
            bytes.len() as f64 / items.len() as f64,
            zst.len() as f64 / items.len() as f64
        );
        let mut g = c.benchmark_group(name);
        g.sample_size(10)
            .measurement_time(Duration::from_secs(6))
            .throughput(Throughput::Elements(items.len() as u64));
        g.bench_function("decode_memory", |b| {
            b.iter(|| black_box(visit(Reader::from_slice(&bytes))))
        });
        g.bench_function("decode_memory_next_item", |b| {
            b.iter(|| {
                let mut r = Reader::from_slice(&bytes);
                let mut sum = 0u64;
                while let Some(item) = r.next_item().unwrap() {
                    if let Item::Event(e) = item {
                        sum = sum.wrapping_add(e.address ^ e.size ^ e.time);
                    }
                }
                black_box(sum)
            })
        });
        g.bench_function("decode_zstd", |b| {
            b.iter(|| {
                let input =
                    Input::from_reader("bench", Box::new(std::io::Cursor::new(zst.clone())), None)
                        .unwrap();
                // Decompression runs on Input's own thread, beside decoding.
                black_box(visit(Reader::new(input.reader)))
            })
        });
        g.bench_function("zstd_alone_peer", |b| {
            b.iter(|| {
                let mut d = zstd::Decoder::new(&zst[..]).unwrap();
                let mut buf = vec![0u8; 1 << 18];
                let mut total = 0usize;
                loop {
                    let n = d.read(&mut buf).unwrap();
                    if n == 0 {
                        break;
                    }
                    total += n;
                }
                black_box(total)
            })
        });
        g.bench_function("encode_naive", |b| {
            let mut out = Vec::with_capacity(bytes.len());
            b.iter(|| {
                out.clear();
                let mut w = Writer::new(&mut out, Policy::Naive);
                for i in &items {
                    w.write_item(&i.as_item()).unwrap();
                }
                w.into_inner().unwrap();
                black_box(out.len())
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
