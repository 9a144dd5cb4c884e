#!/usr/bin/env bash
# The commands that read records through the driver, for two tramp binaries
# on the same inputs in one run: wall time (best of 3, alternating) and
# instructions (valgrind's cachegrind, `--cache-sim=no`: deterministic).
#
#   bench/before-after.sh OLD_TRAMP NEW_TRAMP [EVENTS]
#
# Build the old one from a worktree, e.g.
#   git worktree add /tmp/before COMMIT
#   (cd /tmp/before && CARGO_TARGET_DIR=/tmp/before-target cargo build --release -p tramp-cli)
#
# Inputs (made with NEW): the built-in sample (EVENTS, default 1 M, HATF),
# bench/rds/bst.c recorded as a heap trace with allocation sites (tpack)
# and as a pointer trace (Meta-TF), each about EVENTS records.
#
# Prints one markdown table: command, wall old/new, instructions old/new,
# new/old. Then the site tables' cost: `stats --sites --top 0` (site
# totals, no symbolization) against `stats` on the same recording, and
# what symbolizing the top sites adds (`--top 10` against `--top 0`).
set -euo pipefail
old=$1 new=$2 events=${3:-1000000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$(dirname "$0")/.."
"$new" sample --events "$events" --seed 7 -o "$dir/t.hatf" 2>/dev/null
cc -O1 -g bench/rds/bst.c -o "$dir/bst"
half=$((events / 2))
"$new" record -o "$dir/bst.tpack" -- "$dir/bst" "$half" "$half" >/dev/null 2>&1
"$new" cc -- cc -O0 -g bench/rds/bst.c -o "$dir/bst-hooks" >/dev/null 2>&1
small=$((events / 40))
"$new" record --pointers -o "$dir/bst.mtf.zst" -- "$dir/bst-hooks" "$small" "$small" >/dev/null 2>&1

wall() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s.%N); python3 -c "print($e - $s)"; }
instr() { valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$@" 2>&1 >/dev/null | awk '/I[[:space:]]+refs:/ {gsub(",", "", $NF); print $NF}'; }
records() { "$new" stats --json "$1" 2>/dev/null | python3 -c "import json,sys; print(json.load(sys.stdin)['records'])"; }

echo "inputs: t.hatf $(records "$dir/t.hatf") records, bst.tpack $(records "$dir/bst.tpack"), bst.mtf.zst $(records "$dir/bst.mtf.zst")"
echo
echo "| command | wall old (s) | wall new (s) | instructions old | instructions new | new/old (instr.) |"
echo "|---|---|---|---|---|---|"
bench() { # name args...
  local name=$1; shift
  local bo=999 bn=999
  for _ in 1 2 3; do
    bo=$(python3 -c "print(min($bo, $(wall "$old" "$@")))")
    bn=$(python3 -c "print(min($bn, $(wall "$new" "$@")))")
  done
  local io in
  io=$(instr "$old" "$@")
  in=$(instr "$new" "$@")
  printf '| %s | %.3f | %.3f | %s | %s | %.3f |\n' "$name" "$bo" "$bn" "$io" "$in" "$(python3 -c "print($in / $io)")"
  eval "ir_$(echo "$name" | tr -c 'a-z0-9' _)=$in"
}
bench "stats (sample, HATF)" stats "$dir/t.hatf"
bench "stats (recording, tpack)" stats "$dir/bst.tpack"
bench "stats --sites --top 0 (recording)" stats --sites --top 0 "$dir/bst.tpack"
bench "stats --sites (recording)" stats --sites "$dir/bst.tpack"
bench "rds (pointer trace)" rds "$dir/bst.mtf.zst"
bench "sizes (sample, HATF)" sizes --timing-records 0 --compress zstd "$dir/t.hatf"
bench "convert HATF → tpack" convert "$dir/t.hatf" "$dir/o.tpack"
echo
s=$(instr "$new" stats "$dir/bst.tpack")
t0=$(instr "$new" stats --sites --top 0 "$dir/bst.tpack")
t10=$(instr "$new" stats --sites "$dir/bst.tpack")
python3 - "$s" "$t0" "$t10" <<'PY'
import sys
s, t0, t10 = map(int, sys.argv[1:])
print(f"site tables (new, instructions): stats {s:,}; + site totals {t0 - s:+,} ({(t0 - s) / s:+.1%} of stats); "
      f"+ symbolizing the top sites {t10 - t0:+,}; stats --sites = stats + symbolization {'+' if t0 >= s else ''}{(t0 - s) / s:.1%}")
PY
