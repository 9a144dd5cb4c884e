#!/usr/bin/env bash
# Heph: decode and Chrome-export throughput on a large generated trace
# (crates/heph/examples/heph_bench.rs: 8 streams, nested events, 0–4
# attributes of every type), in memory and through the CLI, beside zstd
# and python's json module (a reader of the export) in the same run.
#
#   bench/heph.sh [EVENTS]        default 2000000 (~200 MB)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000000}
cargo build --release -q -p tramp-cli -p tramp-heph --example heph_bench
tramp=$PWD/target/release/tramp
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
target/release/examples/heph_bench "$n" "$dir/t.heph"
size=$(stat -c %s "$dir/t.heph")
now() { date +%s.%N; }
run() { # NAME CMD...: best of 3, MB/s of trace
  local name=$1; shift
  local best=999999
  for _ in 1 2 3; do
    local s e; s=$(now); "$@" >/dev/null 2>&1; e=$(now)
    best=$(awk -v b="$best" -v s="$s" -v e="$e" 'BEGIN{t=e-s; print (t<b)?t:b}')
  done
  awk -v t="$best" -v sz="$size" -v n="$n" -v name="$name" 'BEGIN{printf "  %-38s %7.3f s  %8.1f MB/s  %6.2f M events/s\n", name, t, sz/t/1e6, n/t/1e6}'
}
echo "trace: $size bytes, $n events"
run "tramp export --chrome (file)" "$tramp" export --chrome "$dir/t.json" "$dir/t.heph"
run "tramp spans (totals + gaps)" "$tramp" spans "$dir/t.heph"
run "tramp stats" "$tramp" stats "$dir/t.heph"
run "tramp convert heph -> heph" "$tramp" convert "$dir/t.heph" "$dir/copy.heph"
zstd -q -3 -k "$dir/t.heph" -o "$dir/t.heph.zst"
run "peer: zstd -d of the trace (-3)" zstd -q -d -c "$dir/t.heph.zst"
run "peer: python json.load of the export" python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$dir/t.json"
echo "  export size: $(stat -c %s "$dir/t.json") bytes of JSON"
