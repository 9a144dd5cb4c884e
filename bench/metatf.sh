#!/usr/bin/env bash
# Meta-TF readers beside the native HATF reader, on the same events, in one
# run: the built-in sample (EVENTS operations, default 5 M) encoded once as
# naive HATF 1.0 and once under bench/hatf-bench.dtd; decoded from memory
# by the native HATF reader, the universal Meta-TF reader, and the reader
# `tramp gen --rust` generates for the DTD.
#
#   bench/metatf.sh [EVENTS]
set -euo pipefail
cd "$(dirname "$0")/.."
events=${1:-5000000}
cargo build --release -q
cargo build --release -q -p tramp-hatf --example decode_bench
cargo build --release -q -p tramp-metatf --example decode_mtf
tramp=target/release/tramp
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
$tramp sample --events "$events" -o "$dir/s.hatf" 2>/dev/null
$tramp convert --dtd bench/hatf-bench.dtd --to metatf "$dir/s.hatf" "$dir/s.mtf"
ls -l "$dir/s.hatf" "$dir/s.mtf" | awk '{print $5, $9}'
$tramp gen --rust bench/hatf-bench.dtd -o "$dir/generated.rs"
cat > "$dir/main.rs" <<'RS'
mod generated;
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let t = std::time::Instant::now();
    let mut r = generated::Reader::new(&bytes[..]).unwrap();
    let mut n = 0u64;
    while let Some(rec) = r.next().unwrap() {
        n += 1;
        std::hint::black_box(&rec);
    }
    let dt = t.elapsed().as_secs_f64();
    println!("generated: {n} records in {dt:.3} s: {:.2} M records/s", n as f64 / dt / 1e6);
}
RS
rustc --edition=2024 -O -o "$dir/gen" "$dir/main.rs"
target/release/examples/decode_bench "$dir/s.hatf" | tail -1
target/release/examples/decode_mtf "$dir/s.mtf"
"$dir/gen" "$dir/s.mtf"
