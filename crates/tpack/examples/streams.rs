//! Prints how many bytes each tpack stream takes for a HATF trace:
//! `cargo run --release -p tramp-tpack --example streams TRACE.hatf [CODEC[,block=N]]`.

use tramp_tpack::streams::NAMES;
use tramp_tpack::{Options, Writer};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let input = tramp_io::Input::open(&args[1]).expect("input");
    let mut r = tramp_hatf::Reader::new(input.reader);
    let opts = args.get(2).map_or_else(Options::default, |o| {
        Options::parse(o).expect("CODEC[,block=N]")
    });
    let mut w = Writer::new(std::io::sink(), opts).unwrap();
    let mut n = 0u64;
    while let Some(i) = r.next_item().unwrap() {
        n += !matches!(i, tramp_hatf::Item::Meta(_)) as u64;
        w.write_item(&i).unwrap();
    }
    let (_, totals) = w.finish().unwrap();
    let all: u64 = totals.iter().map(|t| t.stored).sum();
    println!(
        "{n} records, {all} bytes, {:.3} B/record",
        all as f64 / n as f64
    );
    for (name, t) in NAMES.iter().zip(totals) {
        println!(
            "{name:12} raw {:>10} stored {:>10} ({:.3} B/record)",
            t.raw,
            t.stored,
            t.stored as f64 / n as f64
        );
    }
}
