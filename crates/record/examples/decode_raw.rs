//! Decodes every chunk of one raw capture log three times and prints the
//! time each pass took, for measuring the raw decoder alone: `cargo run
//! --release -p tramp-record --example decode_raw -- LOG.raw`.
use std::collections::VecDeque;

fn main() {
    let path = std::path::PathBuf::from(std::env::args().nth(1).expect("LOG.raw"));
    let idx = tramp_record::raw::index(&path).expect("a raw log");
    let mut f = std::fs::File::open(&path).expect("readable");
    let mut payloads = Vec::new();
    for c in &idx.chunks {
        let mut buf = Vec::new();
        tramp_record::raw::read_chunk(&mut f, c, &mut buf).expect("a whole chunk");
        payloads.push((*c, buf));
    }
    for _ in 0..3 {
        let t = std::time::Instant::now();
        let (mut events, mut sum) = (0usize, 0u64);
        let mut q = VecDeque::new();
        for (c, p) in &payloads {
            tramp_record::raw::decode_chunk(c, p, &mut q).expect("an undamaged chunk");
            events += q.len();
            // Every event's time read, so no decoding is left out.
            sum = q.drain(..).fold(sum, |s, e| s.wrapping_add(e.time()));
        }
        let s = t.elapsed().as_secs_f64();
        eprintln!(
            "{events} events in {s:.3} s ({:.1} M/s; time checksum {sum:x})",
            events as f64 / s / 1e6
        );
    }
}
