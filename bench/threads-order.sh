#!/usr/bin/env bash
# Order per address under threads (issue 47): records the tests' threaded
# programs RUNS times each (default 20) and counts, per recording, what a
# correct program must never show: double frees, allocations of live
# addresses, frees of unknown addresses, events written late, and frees
# the replay plan has to move after their allocation.
#
#   bench/threads-order.sh            # on an idle machine
#   LOAD=1 bench/threads-order.sh     # with every core kept busy, so that
#                                     # threads are preempted inside
#                                     # allocator calls
#
# Programs: crates/cli/tests/programs/handoff.c (four threads passing
# blocks, consumers resizing some) and slots.c (eight threads sharing slots
# under locks: malloc, realloc to grow and shrink, free). Any non-zero
# column is a defect; the last line sums them.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
tramp=$PWD/target/release/tramp
runs=${RUNS:-20}
dir=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT
for p in handoff slots; do
  gcc -O2 -pthread -o "$dir/$p" "crates/cli/tests/programs/$p.c"
done
if [ -n "${LOAD:-}" ]; then
  for _ in $(seq "$(nproc)"); do
    (while :; do :; done) &
    pids+=($!)
  done
fi
printf '%-8s %4s %12s %14s %14s %6s %10s\n' program run double_frees allocs_of_live frees_unknown late replay_moved
total=0
for p in handoff slots; do
  for i in $(seq "$runs"); do
    "$tramp" record -o "$dir/t.tpack" -- "$dir/$p" >/dev/null 2>"$dir/err"
    late=$(grep -o '[0-9]* events written late' "$dir/err" | grep -o '^[0-9]*' || echo 0)
    read -r df al fu < <("$tramp" stats --json "$dir/t.tpack" | python3 -c '
import json, sys
r = json.load(sys.stdin)
print(r["double_frees"], r["allocs_of_live_addresses"], r["frees_of_unknown_addresses"])')
    moved=$("$tramp" replay --json "$dir/t.tpack" 2>/dev/null | python3 -c '
import json, sys
p = json.load(sys.stdin)["plan"]
print(p["frees_reordered"] + p["frees_before_alloc"])')
    printf '%-8s %4d %12d %14d %14d %6d %10d\n' "$p" "$i" "$df" "$al" "$fu" "$late" "$moved"
    total=$((total + df + al + fu + late + moved))
  done
done
echo "sum of every column over $((2 * runs)) recordings: $total (0 is the target)"
