#!/usr/bin/env bash
# What the content of each recorded trace carries whatever the coder
# (empirical entropies; docs/benchmarks.md, "What the unmet targets would
# take"): runs the tpack example `floors` on the HATF files that
# bench/compaction.sh left in its OUT_DIR, and prints bytes per event
# beside heaptrack's file of the same run.
#   bench/floors.sh OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: bench/floors.sh OUT_DIR (of bench/compaction.sh)}
cargo build --release -q -p tramp-tpack --example floors
floors=$PWD/target/release/examples/floors
printf '%-8s %10s | %9s | %9s %9s %9s | %9s %9s\n' \
  workload events heaptrack time-o0 time-ctx time-byte cross-blk size+rank
for name in python perl gcc cbench; do
  [ -f "$dir/$name.hatf" ] || continue
  ht=$(ls "$dir/ht-$name".* | head -1)
  "$floors" "$dir/$name.hatf" | python3 -c '
import re, sys
name, ht = sys.argv[1], int(sys.argv[2])
t = sys.stdin.read()
ev = int(re.search(r"(\d+) events", t).group(1))
b = lambda pat: float(re.search(pat, t).group(1))
o0 = b(r"order 0 [\d.]+ bits \(([\d.]+) B/event\); given")
ctx = b(r"bit length [\d.]+ bits \(([\d.]+) B/event\)")
byte = b(r"4 contexts [\d.]+ bits \(([\d.]+) B/event\)")
cross = b(r"bits each \(([\d.]+) B/event\)")
sr = b(r"together ([\d.]+) B/event")
# heaptrack counts the started process only; per event here is per this
# trace'"'"'s events (every process of the recording).
print(f"{name:<8} {ev:10d} | {ht/ev:9.3f} | {o0:9.3f} {ctx:9.3f} {byte:9.3f} | {cross:9.3f} {sr:9.3f}")
' "$name" "$(stat -c %s "$ht")"
done
