//! Decodes a Meta-TF trace with the universal reader and prints the rate,
//! pulling records (`next_record`) and visiting them (`for_each_record`):
//! `cargo run --release -p tramp-metatf --example decode_mtf -- FILE.mtf`.
use tramp_core::Source;

fn main() {
    let path = std::env::args().nth(1).expect("usage: decode_mtf FILE");
    let bytes = std::fs::read(&path).unwrap();
    let t = std::time::Instant::now();
    let mut src = tramp_metatf::codec::MetaSource::open(&bytes[..], None).unwrap();
    let (mut n, mut sum) = (0u64, 0u64);
    while let Some(rec) = src.next_record().unwrap() {
        n += 1;
        if let Some(v) = rec.get(1).and_then(|v| v.as_u64()) {
            sum = sum.wrapping_add(v);
        }
    }
    let dt = t.elapsed().as_secs_f64();
    println!(
        "universal next_record: {n} records in {dt:.3} s: {:.2} M records/s ({sum})",
        n as f64 / dt / 1e6
    );
    let t = std::time::Instant::now();
    let mut src = tramp_metatf::codec::MetaSource::open(&bytes[..], None).unwrap();
    let mut sum2 = 0u64;
    let m = src
        .for_each_record(|rec| {
            if let Some(v) = rec.get(1).and_then(|v| v.as_u64()) {
                sum2 = sum2.wrapping_add(v);
            }
        })
        .unwrap();
    let dt = t.elapsed().as_secs_f64();
    assert_eq!((n, sum), (m, sum2));
    println!(
        "universal for_each_record: {m} records in {dt:.3} s: {:.2} M records/s",
        m as f64 / dt / 1e6
    );
}
