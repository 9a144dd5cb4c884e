//! The Twitter fixture's requests, shared by the test binaries.

use std::io::BufReader;

use tramp_cachesim::Request;
use tramp_cachesim::trace::CsvReader;

const TRACE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/cache/twitter_cluster52.csv.zst"
);

pub fn twitter() -> Vec<Request> {
    let f = std::fs::File::open(TRACE).expect("fixture");
    let z = zstd::Decoder::new(f).expect("zstd");
    CsvReader::new(BufReader::new(z))
        .collect::<Result<_, _>>()
        .expect("clean trace")
}
