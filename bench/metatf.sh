#!/usr/bin/env bash
# Meta-TF readers beside the native HATF reader, on the same events, in one
# process: the built-in sample (EVENTS operations, default 10 M) encoded once
# as naive HATF 1.0 and once under bench/hatf-bench.dtd, then decoded from
# memory by the native HATF reader, the universal Meta-TF reader and the
# reader `tramp gen --rust` generates for the DTD (bench/metatf-readers,
# whose build.rs runs the generator). Best of ROUNDS alternating rounds.
#
#   bench/metatf.sh [EVENTS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
events=${1:-10000000}
rounds=${2:-5}
cargo build --release -q -p tramp-cli -p tramp-bench-metatf
tramp=target/release/tramp
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
$tramp sample --events "$events" -o "$dir/s.hatf" 2>/dev/null
$tramp convert --dtd bench/hatf-bench.dtd --to metatf "$dir/s.hatf" "$dir/s.mtf"
target/release/tramp-bench-metatf "$dir/s.hatf" "$dir/s.mtf" "$rounds"
