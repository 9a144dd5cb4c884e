//! Times decoding a tpack file into HATF items (no other work):
//! `cargo run --release -p tramp-tpack --example decode FILE.tpack`.

use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("a tpack file");
    let bytes = std::fs::read(&path).expect("readable");
    let mut best = f64::MAX;
    let mut n = 0u64;
    for _ in 0..3 {
        let t = Instant::now();
        let mut r = tramp_tpack::Reader::new(&bytes[..]);
        n = 0;
        let mut sum = 0u64;
        while let Some(i) = r.next_item().expect("decodes") {
            if let tramp_hatf::Item::Event(e) = i {
                sum = sum.wrapping_add(e.address ^ e.time);
            }
            n += 1;
        }
        std::hint::black_box(sum);
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
        "{n} records in {best:.3} s: {:.1} M records/s",
        n as f64 / best / 1e6
    );
}
