#!/usr/bin/env bash
# TRAMP command language throughput, in one run: Figure 8's LRU script over
# a 10 M-record binary trace beside the same LRU in awk (mawk and gawk) over
# the trace's text form and beside a hand-written Rust loop over the raw
# bytes with the same buffer (the floor: tramp-cachesim's LRU alone), and
# Figure 4's counting script beside hand-written Rust loops over the same
# records (as the description reader gives them to the script) and over the
# raw bytes.
#
# usage: bench/tramp/run.sh [RECORDS]   (needs hyperfine, mawk, gawk)
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-10000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cargo build --release -q -p tramp-cli
cargo build --release -q -p tramp-script --example bench_trace
ex=target/release/examples/bench_trace
tramp=target/release/tramp
s=crates/script/tests/scripts
"$ex" gen "$n" "$tmp/t.bin" "$tmp/t.txt"
ls -l "$tmp/t.bin" "$tmp/t.txt" | awk '{print "  " $5 " bytes  " $9}'
echo "== answers (must agree)"
"$tramp" run "$s/fig8.tramp" -f "$s/fs.desc" "$tmp/t.bin" | head -1
mawk -f bench/tramp/lru.awk "$tmp/t.txt"
"$ex" lru "$tmp/t.bin"
"$tramp" run "$s/fig4.tramp" -f "$s/fs.desc" "$tmp/t.bin"
"$ex" count "$tmp/t.bin"
"$ex" count-records "$s/fs.desc" "$tmp/t.bin"
echo "== Figure 8 (LRU, 2048 buffers)"
hyperfine -N -w 1 -r 3 --export-markdown "$tmp/lru.md" \
  -n "tramp run fig8 (binary)" "$tramp run $s/fig8.tramp -f $s/fs.desc $tmp/t.bin" \
  -n "hand-written Rust loop, raw bytes, same buffer" "$ex lru $tmp/t.bin" \
  -n "mawk lru.awk (text)" "mawk -f bench/tramp/lru.awk $tmp/t.txt" \
  -n "gawk lru.awk (text)" "gawk -f bench/tramp/lru.awk $tmp/t.txt"
cat "$tmp/lru.md"
echo "== Figure 4 (count reads and writes)"
hyperfine -N -w 1 -r 5 --export-markdown "$tmp/count.md" \
  -n "tramp run fig4" "$tramp run $s/fig4.tramp -f $s/fs.desc $tmp/t.bin" \
  -n "tramp run fig5 (Lisp)" "$tramp run $s/fig5.lisp -f $s/fs.desc $tmp/t.bin" \
  -n "hand-written Rust loop over the same records" "$ex count-records $s/fs.desc $tmp/t.bin" \
  -n "hand-written Rust loop over the raw bytes" "$ex count $tmp/t.bin"
cat "$tmp/count.md"
