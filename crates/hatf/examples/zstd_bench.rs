//! Decode through zstd three ways, to see what pipelining buys:
//! `cargo run --release -p tramp-hatf --example zstd_bench -- FILE.zst`.
use std::time::Instant;

fn visit<B: tramp_hatf::reader::Buffer>(mut r: tramp_hatf::Reader<B>) -> u64 {
    r.for_each_item(|_| {}).unwrap()
}

fn main() {
    let path = std::env::args().nth(1).expect("usage: zstd_bench FILE.zst");
    let zst = std::fs::read(&path).unwrap();
    for _ in 0..2 {
        let t = Instant::now();
        let n = visit(tramp_hatf::Reader::new(
            zstd::Decoder::new(&zst[..]).unwrap(),
        ));
        let serial = t.elapsed().as_secs_f64();
        let z = zst.clone();
        let t = Instant::now();
        let piped =
            tramp_io::Pipelined::spawn(zstd::Decoder::new(std::io::Cursor::new(z)).unwrap());
        let m = visit(tramp_hatf::Reader::new(piped));
        let pipelined = t.elapsed().as_secs_f64();
        let z = zst.clone();
        let t = Instant::now();
        let input =
            tramp_io::Input::from_reader("x", Box::new(std::io::Cursor::new(z)), None).unwrap();
        let k = visit(tramp_hatf::Reader::new(input.reader));
        let via_input = t.elapsed().as_secs_f64();
        assert_eq!((n, m), (m, k));
        println!(
            "{n} records: serial {:.1}, pipelined {:.1}, via Input {:.1} M records/s",
            n as f64 / serial / 1e6,
            n as f64 / pipelined / 1e6,
            n as f64 / via_input / 1e6
        );
    }
}
