#!/usr/bin/env bash
# How time and memory grow with a recording's length (issue 50, item 7):
# bench/workloads/alloc_bench.c (4,096 live slots, one call stack: live
# objects and distinct stacks stay bounded however long it runs) recorded
# at each length, then `stats`, `stats --sites`, `report`, `cachesim -p
# lru,s3fifo` and `export --parquet` of the recording: wall seconds,
# events/s and peak RSS (/usr/bin/time). Memory must stay flat as events
# grow.
#
#   bench/scale.sh [EVENTS...]     (default 10000000 100000000)
#
# 10^9 events is `bench/scale.sh 1000000000` (about 1.5 GB of recording
# and a quarter of an hour on the 2-core machine).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
tramp_and_scratch
gcc -O2 -o "$W/alloc_bench" bench/workloads/alloc_bench.c
[ $# -gt 0 ] || set -- 10000000 100000000
printf '%-11s %-22s %9s %12s %9s\n' events command seconds events/s "peak MB"
measure() { # events name command...
  local events=$1 name=$2
  shift 2
  local out
  /usr/bin/time -o "$W/time" -f '%e %M' "$@" >/dev/null 2>&1 || echo "$name failed" >&2
  out=$(tail -1 "$W/time")
  python3 - "$events" "$name" "$out" <<'PY'
import sys
events, name, (secs, kb) = int(sys.argv[1]), sys.argv[2], sys.argv[3].split()
secs = float(secs)
print(f"{events:<11} {name:<22} {secs:9.2f} {events / secs / 1e6:10.1f} M {int(kb) / 1024:9.1f}")
PY
}
for events in "$@"; do
  rec="$W/scale.tpack"
  rm -rf "$rec" "$W"/scale.*.tpack "$W/pq" "$W/r.html"
  # Each iteration is a free and a malloc.
  measure "$events" record "$T" record -o "$rec" -- "$W/alloc_bench" $((events / 2))
  measure "$events" stats "$T" stats "$rec"
  measure "$events" "stats --sites" "$T" stats --sites "$rec"
  measure "$events" report "$T" report "$rec" -o "$W/r.html"
  measure "$events" "cachesim lru,s3fifo" "$T" cachesim -p lru,s3fifo -s 1000 "$rec"
  measure "$events" "export --parquet" "$T" export --parquet "$W/pq" "$rec"
  echo "$events events: $(stat -c %s "$rec") bytes of recording"
done
