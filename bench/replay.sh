#!/usr/bin/env bash
# Allocator replay, in one run (issue 37's targets; docs/benchmarks.md):
#
#   LARSON=/path/larson ESPRESSO=/path/espresso ESPRESSO_INPUT=/path/largest.espresso \
#   REPS=5 bench/replay.sh
#
# LARSON and ESPRESSO are programs of mimalloc-bench built by hand from a
# checkout (never by this script); without them their rows say "not run"
# and the project's own four-thread program (tests/programs/handoff.c,
# frees across threads) is recorded and replayed instead.
#
# 1. larson (or handoff) recorded with tramp, replayed threaded under
#    glibc, jemalloc and mimalloc (REPS alternated runs each), ranked by
#    time in allocator calls; larson itself run under each allocator REPS
#    times, alternated, ranked by its own relative time.
# 2. The driver's own cost: the espresso recording (or handoff's) replayed
#    with --no-touch through a bump allocator built here: (wall time -
#    time waiting for the decoder - time in calls) / operations.
# 3. espresso itself against its replay's wall time.
#
# Needs Debian's libjemalloc2 and libmimalloc2.0 (setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
tramp=$PWD/target/release/tramp
REPS=${REPS:-5}
lib() { { ldconfig -p 2>/dev/null || /sbin/ldconfig -p; } | awk -v n="$1" '$1 == n {print $NF; exit}'; }
JE=$(lib libjemalloc.so.2)
MI=$(lib libmimalloc.so.2)
[ -n "$JE" ] && [ -n "$MI" ] || { echo "needs libjemalloc2 and libmimalloc2.0 (./setup.sh installs them)" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cc -O2 -fno-builtin -shared -fPIC -o "$dir/libbump.so" crates/cli/tests/programs/bump.c
cc -O2 -pthread -o "$dir/handoff" crates/cli/tests/programs/handoff.c
median() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.3f (%.3f-%.3f)", m, a[1], a[NR]}'; }
field() { python3 -c "import json,sys; v=json.load(sys.stdin); print(eval(sys.argv[1]))" "$1"; }

echo "## 1. ranking: replay threaded vs the program itself ($REPS alternated runs)"
if [ -n "${LARSON:-}" ]; then
  prog=("$LARSON" 5 8 1000 5000 100 4141 2)
  name="larson 5 8 1000 5000 100 4141 2"
else
  prog=("$dir/handoff")
  name="handoff (LARSON not given: larson not run)"
fi
"$tramp" record -o "$dir/p.tpack" -- "${prog[@]}" >/dev/null 2>&1
"$tramp" replay --json --repeat "$REPS" --allocator "glibc,$JE,$MI" "$dir/p.tpack" > "$dir/p.json" || true
echo "program: $name"
echo "| allocator | replay: s in calls, median (min-max) | replay wall s | program itself: relative time s or wall s, median (min-max) |"
echo "|---|---|---|---|"
declare -A own
for r in $(seq "$REPS"); do
  for a in glibc "$JE" "$MI"; do
    pre=""; [ "$a" != glibc ] && pre="$a"
    if [ -n "${LARSON:-}" ]; then
      t=$(LD_PRELOAD=$pre "${prog[@]}" 2>&1 | sed -n 's/.*relative time: \([0-9.]*\)s.*/\1/p')
    else
      t=$( { /usr/bin/time -f "%e" env LD_PRELOAD=$pre "${prog[@]}" >/dev/null; } 2>&1 | tail -1)
    fi
    own[$a]+="$t "
  done
done
i=0
for a in glibc "$JE" "$MI"; do
  calls=$(field "' '.join(str(r['alloc_seconds']) for r in v['runs'][$i]['runs'])" < "$dir/p.json" | tr ' ' '\n' | median)
  wall=$(field "' '.join(str(r['seconds']) for r in v['runs'][$i]['runs'])" < "$dir/p.json" | tr ' ' '\n' | median)
  o=$(echo "${own[$a]}" | tr ' ' '\n' | grep . | median)
  echo "| $(basename "$a") | $calls | $wall | $o |"
  i=$((i+1))
done
field "'fidelity ok: %s; frees moved after their allocation: %s; waits %s' % (v['fidelity']['ok'], v['plan']['frees_reordered'], [a['waits'] for a in v['allocators']])" < "$dir/p.json"

echo
echo "## 2. the driver's own cost (bump allocator, --no-touch)"
if [ -n "${ESPRESSO:-}" ]; then
  "$tramp" record -o "$dir/e.tpack" -- "$ESPRESSO" "${ESPRESSO_INPUT:?ESPRESSO_INPUT names the input}" >/dev/null 2>&1
  trace="$dir/e.tpack"
else
  echo "(ESPRESSO not given: espresso not run; the handoff recording instead)"
  trace="$dir/p.tpack"
fi
for serial in "" --serial; do
  "$tramp" replay --json --no-touch $serial --repeat 3 --allocator "$dir/libbump.so" "$trace" > "$dir/b.json" || true
  field "'%s: %d operations; wall %.3f s, waiting for the decoder %.3f s, in calls %.3f s, decoding %.3f s: driver %.1f ns per operation' % (('serial' if '$serial' else 'threaded'), v['runs'][0]['runs'][1]['mallocs']+v['runs'][0]['runs'][1]['frees']+v['runs'][0]['runs'][1]['reallocs'], v['runs'][0]['runs'][1]['seconds'], v['runs'][0]['runs'][1]['starved_seconds'], v['runs'][0]['runs'][1]['alloc_seconds'], v['runs'][0]['runs'][1]['decode_seconds'], (v['runs'][0]['runs'][1]['seconds']-min(v['runs'][0]['runs'][1]['starved_seconds'], v['runs'][0]['runs'][1]['seconds'])-v['runs'][0]['runs'][1]['alloc_seconds'])*1e9/(v['runs'][0]['runs'][1]['mallocs']+v['runs'][0]['runs'][1]['frees']+v['runs'][0]['runs'][1]['reallocs']))" < "$dir/b.json"
done

echo
echo "## 3. espresso itself vs its replay (glibc, touching pages)"
if [ -n "${ESPRESSO:-}" ]; then
  own=$( { /usr/bin/time -f "%e" "$ESPRESSO" "$ESPRESSO_INPUT" >/dev/null; } 2>&1 | tail -1)
  "$tramp" replay --json --repeat 3 "$dir/e.tpack" > "$dir/e.json"
  field "'replay wall %s s (plan made once in %.2f s) vs espresso $own s' % ([round(r['seconds'],3) for r in v['runs'][0]['runs']], v['plan_seconds'])" < "$dir/e.json"
else
  echo "espresso: not run (ESPRESSO=path/to/espresso ESPRESSO_INPUT=largest.espresso)"
fi
