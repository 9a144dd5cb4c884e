#!/usr/bin/env bash
# Pointer capture cost beside valgrind's lackey (addresses only, no values):
# bst.c built plain, with `tramp cc` (gcc: ThreadSanitizer hooks; clang:
# sanitizer-coverage hooks, if clang is installed), run alone, under the
# capture library alone (raw logs, no conversion), under `tramp record
# --pointers` in all, and under `valgrind --tool=lackey --trace-mem=yes`.
# Then `tramp rds` over the trace. Usage: bench/rds/run.sh [N M]
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-100000}; M=${2:-100000}
cargo build --release -q
T=$PWD/target/release/tramp
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cc -O1 -g bench/rds/bst.c -o "$W/plain"
"$T" cc -- cc -O1 -g bench/rds/bst.c -o "$W/gcc"
CLANG=$(command -v clang || command -v clang-14 || true)
[ -n "$CLANG" ] && "$T" cc -- "$CLANG" -O1 -g bench/rds/bst.c -o "$W/clang"
"$T" record -o "$W/warm.tpack" -- ls / >/dev/null 2>&1   # installs the capture library (a run that records something)
LIB=$(ls -t ~/.cache/tramp/libtramp_capture-*.so | head -1)
mkdir -p "$W/logs"
cmds=(
  "$W/plain $N $M"
  "$W/gcc $N $M"
  "env LD_PRELOAD=$LIB TRAMP_CAPTURE_DIR=$W/logs TRAMP_CAPTURE_POINTERS=1 $W/gcc $N $M"
  "$T record --pointers -o $W/t.mtf.zst -- $W/gcc $N $M"
)
names=(plain "gcc hooks alone" "gcc hooks + capture library (raw log)" "tramp record --pointers (gcc)")
if [ -n "$CLANG" ]; then
  cmds+=("$W/clang $N $M" "$T record --pointers -o $W/c.mtf.zst -- $W/clang $N $M")
  names+=("clang hooks alone" "tramp record --pointers (clang)")
fi
cmds+=("valgrind --tool=lackey --trace-mem=yes --log-file=/dev/null $W/plain $N $M")
names+=("valgrind lackey --trace-mem=yes")
args=()
for i in "${!cmds[@]}"; do args+=(-n "${names[$i]}" "${cmds[$i]}"); done
hyperfine -N -w 1 -r 3 --prepare "rm -f $W/logs/*" --export-json "$W/h.json" "${args[@]}" >/dev/null 2>&1
python3 - "$W/h.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
base = r[0]["mean"]
print(f"| run | wall (s) | × plain |\n|---|---|---|")
for x in r:
    print(f"| {x['command']} | {x['mean']:.3f} | {x['mean']/base:.1f} |")
PY
"$T" record --pointers -o "$W/t.mtf.zst" -- "$W/gcc" "$N" "$M" >/dev/null 2>"$W/rec.txt"
grep -o '[0-9]* records.*stores' "$W/rec.txt"
echo "trace: $(stat -c %s "$W/t.mtf.zst") bytes"
/usr/bin/time -f "tramp rds: %e s, %M KiB peak" "$T" rds "$W/t.mtf.zst" > "$W/rds.txt"
head -12 "$W/rds.txt"
