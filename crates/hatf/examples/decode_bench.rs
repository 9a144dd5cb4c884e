//! Decodes a HATF file from memory as fast as possible and prints the rate,
//! both borrowing the bytes (`from_slice`) and streaming them (`new`):
//! `cargo run --release -p tramp-hatf --example decode_bench -- FILE`.

fn drain<B: tramp_hatf::reader::Buffer>(mut r: tramp_hatf::Reader<B>) -> (u64, u64) {
    let (mut n, mut sum) = (0u64, 0u64);
    while let Some(item) = r.next_item().unwrap() {
        n += 1;
        if let tramp_hatf::Item::Event(e) = item {
            sum = sum.wrapping_add(e.address ^ e.size ^ e.time);
        }
    }
    (n, sum)
}

fn visit<B: tramp_hatf::reader::Buffer>(mut r: tramp_hatf::Reader<B>) -> (u64, u64) {
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

fn main() {
    let path = std::env::args().nth(1).expect("usage: decode_bench FILE");
    let bytes = std::fs::read(&path).unwrap();
    for round in 0..3 {
        let t = std::time::Instant::now();
        let (n, sum) = drain(tramp_hatf::Reader::from_slice(&bytes));
        let a = t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        let (m, sum2) = drain(tramp_hatf::Reader::new(&bytes[..]));
        let b = t.elapsed().as_secs_f64();
        assert_eq!((n, sum), (m, sum2));
        let t = std::time::Instant::now();
        assert_eq!(visit(tramp_hatf::Reader::from_slice(&bytes)), (n, sum));
        let c = t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        assert_eq!(visit(tramp_hatf::Reader::new(&bytes[..])), (n, sum));
        let d = t.elapsed().as_secs_f64();
        println!(
            "round {round}: {n} records (M records/s): next_item slice {:.1}, stream {:.1}; for_each_item slice {:.1}, stream {:.1}",
            n as f64 / a / 1e6,
            n as f64 / b / 1e6,
            n as f64 / c / 1e6,
            n as f64 / d / 1e6
        );
    }
}
