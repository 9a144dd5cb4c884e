#!/usr/bin/env bash
# heaptrack's files in and out (issue 35), in one run: `tramp stats` of
# heaptrack's own file beside `heaptrack_print` of it, and `tramp convert
# --lossy REC.tpack REC.heaptrack.zst` beside `tramp convert REC.tpack
# REC.hatf` (the exporter's speed against tramp's own writer), and the
# same for Android's record_allocs text, to a file and into a pipe; best of 3.
#
#   ESPRESSO=/path/espresso ESPRESSO_INPUT=/path/largest.espresso bench/heaptrack-files.sh
#
# Programs: bench/rds/bst.c (built here, always), and mimalloc-bench's
# espresso when ESPRESSO gives its path (built by hand; nothing here builds
# it) — without it, its row says "not run".
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
tramp_and_scratch
cc -O2 -g bench/rds/bst.c -o "$W/bst"

row() { # name program args...
  local name=$1
  shift
  rm -f "$W"/ht.*
  heaptrack -o "$W/ht" "$@" >/dev/null 2>&1
  local file
  file=$(ls "$W"/ht.* | head -1)
  "$T" record -o "$W/r.tpack" -- "$@" >/dev/null 2>&1
  local stats print hatf heap android hatf_pipe android_pipe
  stats=$(best "$T" stats "$file")
  print=$(best heaptrack_print "$file")
  hatf=$(best "$T" convert "$W/r.tpack" "$W/r.hatf")
  heap=$(best "$T" convert --lossy "$W/r.tpack" "$W/r.heaptrack.zst")
  android=$(best "$T" convert --lossy "$W/r.tpack" "$W/r.android")
  rm -f "$W/r.hatf" "$W/r.android"
  # The same two writers into a pipe to /dev/null: the writer's own speed,
  # apart from the disk's (Android's text is 2.2× HATF's bytes).
  hatf_pipe=$(best sh -c "\"$T\" convert --to hatf \"$W/r.tpack\" - >/dev/null")
  android_pipe=$(best sh -c "\"$T\" convert --lossy --to android \"$W/r.tpack\" - >/dev/null 2>&1")
  python3 - "$name" "$stats" "$print" "$hatf" "$heap" "$android" "$hatf_pipe" "$android_pipe" <<'PY'
import sys
name = sys.argv[1]
st, pr, hatf, heap, android, hp, ap = map(float, sys.argv[2:])
print(f"| {name} | {st:.2f} | {pr:.2f} | {st/pr:.2f}× | {hatf:.2f} | {heap:.2f} | {hatf/heap:.2f}× "
      f"| {android:.2f} | {hatf/android:.2f}× | {hp:.2f} / {ap:.2f} | {hp/ap:.2f}× |")
PY
}

echo "| program | tramp stats of heaptrack's file (s) | heaptrack_print (s) | ratio (target ≤ 1) | convert to HATF (s) | convert --lossy to heaptrack (s) | heaptrack speed ÷ HATF's (target ≥ 0.7) | to Android (s) | Android ÷ HATF | into a pipe: HATF / Android (s) | Android ÷ HATF, piped |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
row "bst 200000 200000" "$W/bst" 200000 200000
if [ -n "${ESPRESSO:-}" ]; then
  row "espresso largest.espresso (× 20)" "$ESPRESSO" "${ESPRESSO_INPUT:?ESPRESSO_INPUT names largest.espresso}"
else
  echo "| espresso | not run (set ESPRESSO and ESPRESSO_INPUT) | | | | | | | | | |"
fi
