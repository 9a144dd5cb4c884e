#!/usr/bin/env bash
# End-to-end HATF throughput of the tramp binary beside zstd (the peer that
# every compressed trace passes through), in one run.
#
#   bench/hatf-cli.sh [EVENTS]      (default 5,000,000 simulated operations)
#
# Prints seconds and records/s for each command and the ratio to `zstd -d`.
set -euo pipefail
cd "$(dirname "$0")/.."
events=${1:-5000000}
cargo build --release -q
tramp=target/release/tramp
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

$tramp sample --events "$events" --seed 7 -o "$dir/t.hatf" 2>/dev/null
zstd -q -3 "$dir/t.hatf" -o "$dir/t.hatf.zst"
records=$($tramp stats --json "$dir/t.hatf" | python3 -c 'import json,sys; print(json.load(sys.stdin)["records"])')
bytes=$(stat -c %s "$dir/t.hatf")
zbytes=$(stat -c %s "$dir/t.hatf.zst")
echo "trace: $records records, $bytes bytes naive HATF ($(python3 -c "print(f'{$bytes/$records:.2f}')") B/record), $zbytes bytes zstd-3"

run() { # name command...
  local name=$1; shift
  local best=999999
  for _ in 1 2 3; do
    local s e
    s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N)
    best=$(python3 -c "print(min($best, $e - $s))")
  done
  echo "$name $best"
}

peer=$(run peer zstd -d -c "$dir/t.hatf.zst" | cut -d' ' -f2)
printf '%-40s %8s %14s %8s\n' command seconds records/s "x zstd"
row() {
  local name=$1 t=$2
  printf '%-40s %8.3f %14.0f %8.2f\n' "$name" "$t" "$(python3 -c "print($records/$t)")" "$(python3 -c "print($t/$peer)")"
}
row "zstd -d (peer)" "$peer"
row "tramp stats t.hatf" "$(run x $tramp stats "$dir/t.hatf" | cut -d' ' -f2)"
row "tramp stats t.hatf.zst" "$(run x $tramp stats "$dir/t.hatf.zst" | cut -d' ' -f2)"
row "tramp dump t.hatf.zst" "$(run x $tramp dump "$dir/t.hatf.zst" | cut -d' ' -f2)"
$tramp dump "$dir/t.hatf" > "$dir/t.txt"
row "tramp convert t.txt t.hatf (text->bin)" "$(run x $tramp convert "$dir/t.txt" "$dir/back.hatf" | cut -d' ' -f2)"
row "tramp convert t.hatf t.hatf.zst" "$(run x $tramp convert "$dir/t.hatf" "$dir/re.hatf.zst" | cut -d' ' -f2)"
cmp "$dir/t.hatf" "$dir/back.hatf" && echo "text -> binary: byte-identical"
