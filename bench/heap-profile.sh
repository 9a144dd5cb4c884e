#!/usr/bin/env bash
# The heap profile beside heaptrack, in one run (issue 34): recording wall
# time (untraced, tramp record with its default call stacks of 64 frames,
# tramp record --stack 0 with the caller only, heaptrack with full stacks)
# and analysis wall time (tramp stats --sites and tramp report of tramp's
# recording, heaptrack_print of heaptrack's), best of 3, ratios to
# heaptrack and to the untraced run.
#
#   ESPRESSO=/path/espresso ESPRESSO_INPUT=/path/largest.espresso bench/heap-profile.sh
#
# Programs: bench/rds/bst.c (built here, always), and mimalloc-bench's
# espresso when ESPRESSO gives its path (built by hand from a checkout;
# nothing here builds it) — without it, its rows say "not run".
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
tramp_and_scratch
cc -O2 -g bench/rds/bst.c -o "$W/bst"

row() { # name program args...
  local name=$1
  shift
  local plain td ts ht stats report print
  plain=$(best "$@")
  td=$(best "$T" record --stack 0 -o "$W/d.tpack" -- "$@")
  ts=$(best "$T" record -o "$W/s.tpack" -- "$@")
  rm -f "$W"/ht.*
  ht=$(best heaptrack -o "$W/ht" "$@")
  local file
  file=$(ls "$W"/ht.* | head -1)
  stats=$(best "$T" stats --sites "$W/s.tpack")
  report=$(best "$T" report "$W/s.tpack" -o "$W/r.html")
  print=$(best heaptrack_print "$file")
  local events
  events=$("$T" stats --json "$W/d.tpack" 2>/dev/null | python3 -c "import json,sys; print(json.load(sys.stdin)['records'])")
  python3 - "$name" "$events" "$plain" "$td" "$ts" "$ht" "$stats" "$report" "$print" <<'PY'
import sys
name, events = sys.argv[1], int(sys.argv[2])
plain, td, ts, ht, st, rp, pr = map(float, sys.argv[3:])
print(f"| {name} | {events:,} | {plain:.2f} | {ts:.2f} ({ts/ht:.2f}× heaptrack, {ts/plain:.2f}× untraced) | "
      f"{td:.2f} ({td/ht:.2f}×, {td/plain:.2f}×) | {ht:.2f} | "
      f"{(ts-plain)/events*1e9:.0f} / {(ht-plain)/events*1e9:.0f} | {st:.2f} ({st/pr:.2f}×) | {rp:.2f} ({rp/pr:.2f}×) | {pr:.2f} |")
PY
}

echo "| program | records | untraced (s) | tramp record, 64-frame stacks (default) | tramp record --stack 0 | heaptrack (s) | ns/event, tramp stacks / heaptrack | tramp stats --sites (× heaptrack_print) | tramp report (× heaptrack_print) | heaptrack_print (s) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
row "bst 200000 200000" "$W/bst" 200000 200000
if [ -n "${ESPRESSO:-}" ]; then
  row "espresso $(basename "${ESPRESSO_INPUT:-}")" "$ESPRESSO" "${ESPRESSO_INPUT:?ESPRESSO_INPUT names the input}"
else
  echo "| espresso | not run (ESPRESSO=path/to/espresso ESPRESSO_INPUT=largest.espresso) | | | | | | | | |"
fi
