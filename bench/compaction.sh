#!/usr/bin/env bash
# tpack beside heaptrack, zstd -19 and xz -9 of HATF, and the HATF paper's
# forms, on recorded real programs, in one run:
#
#   bench/compaction.sh [OUT_DIR]
#
# For each workload (CPython building dicts and lists, Perl building a word
# index, gcc -O2 compiling a generated C file, the C malloc/free benchmark)
# it records the program once with `tramp record` (tpack, the default) and
# once with heaptrack (gcc: its compiler proper, cc1, run directly, since
# heaptrack does not follow the driver's children), and reports bytes per
# event of:
#   heaptrack's own file (zstd-compressed text; no addresses, no per-event
#     times: a timestamp every 10 ms),
#   tpack as recorded and re-packed (`tramp convert --policy zstd-9`:
#     level 9, blocks of 1 Mi records), tpack with xz -9 streams, tpack
#     without the per-event times (what time costs; heaptrack keeps none),
#   the same records as naive HATF, then zstd -19 and xz -9 of that file,
#   and, from `tramp sizes`, the paper's content (type, size, address)
#   as HATF SplitAddr + gzip (the paper's best) and as tpack (+ xz),
# plus tpack's decode rate (records/s, examples/decode reading ahead: items only),
# encode rate (`tramp convert` HATF -> tpack, records/s) and the
# `tramp sizes` wall time (gzip column only).
# Events = allocs + frees + reallocs (realloc calls), as heaptrack counts
# its allocations and frees.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
cargo build --release -q -p tramp-tpack --example decode
tramp=$PWD/target/release/tramp
decode=$PWD/target/release/examples/decode
w=$PWD/bench/workloads
dir=${1:-$(mktemp -d)}
mkdir -p "$dir"
# shellcheck source=bench/lib.sh
. bench/lib.sh
workloads_in "$dir"
export PYTHONMALLOC=malloc
size() { stat -c %s "$1"; }
printf '%-8s %9s | %9s %9s %9s %9s | %9s %9s %9s | %9s %9s %9s | %8s %8s %7s\n' \
  workload events heaptrack tpack tpack-xz tp-notime hatf hatf-zst19 hatf-xz9 paper-SA+gz paper-tp+gz paper-tp-xz dec-M/s enc-M/s sizes-s
run() { # name command...
  local name=$1; shift
  rm -rf "$dir/$name".* "$dir/ht-$name".*
  "$tramp" record -o "$dir/$name.rec.tpack" -- "$@" >/dev/null 2>&1
  heaptrack -o "$dir/ht-$name" "$@" >/dev/null 2>&1
  # Re-packed as `tramp record --help` advises for keeping: zstd level 9
  # in tpack's blocks of 1 Mi records (recording packs faster and 2-8%
  # larger, to keep up with the program).
  local t=$dir/$name.tpack
  "$tramp" convert --policy zstd-9 "$dir/$name.rec.tpack" "$t" 2>/dev/null
  # The started process only (children, if any, have their own files).
  local events
  events=$("$tramp" stats --json "$t" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["malloc_calls"]+r["free_calls"]+r["total_reallocs"])')
  "$tramp" convert --policy naive "$t" "$dir/$name.hatf" 2>/dev/null
  "$tramp" convert --policy xz-9 "$t" "$dir/$name.xz.tpack" 2>/dev/null
  zstd -q -19 -f "$dir/$name.hatf" -o "$dir/$name.hatf.zst"
  xz -9 -k -f "$dir/$name.hatf"
  local ht
  ht=$(ls "$dir/ht-$name".* | head -1)
  # tpack decode and encode rates (records per second, best of 3).
  local rates
  rates=$(python3 - "$tramp" "$decode" "$t" "$dir/$name.hatf" "$dir/$name.re.tpack" <<'PY'
import subprocess, sys, time
tramp, decode, t, h, out = sys.argv[1:]
# "read ahead: N records in S s: R M records/s" (decoding as the commands
# read: the blocks on a second thread).
d = subprocess.run([decode, t, "1"], capture_output=True, text=True, check=True).stdout.split()
n, dec = int(d[2]), float(d[-3])
b = 1e9
for _ in range(3):
    s = time.perf_counter(); subprocess.run([tramp, "convert", h, out], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True); b = min(b, time.perf_counter() - s)
print(f"{dec:.1f} {n/b/1e6:.1f}")
PY
)
  # The paper's content (type, size, addresses) alone, as tpack with xz -9
  # streams, and everything but the times, through HATF text.
  "$tramp" dump "$dir/$name.hatf" | awk 'NR == 1 { print; next } $1 ~ /^(alloc|free|realloc)/ {
      out = $1; for (i = 2; i <= NF; i++) if ($i ~ /^(size|address|old|new)=/) out = out " " $i; print out }' \
    | "$tramp" convert --to tpack --policy xz-9 - "$dir/$name.paper.tpack" 2>/dev/null
  "$tramp" dump "$dir/$name.hatf" | sed 's/ time=[0-9]*//' \
    | "$tramp" convert --to tpack - "$dir/$name.notime.tpack" 2>/dev/null
  local s0 s1
  s0=$(date +%s.%N)
  "$tramp" sizes "$dir/$name.hatf" --json --timing-records 0 --compress gzip > "$dir/$name.sizes.json"
  s1=$(date +%s.%N)
  python3 - "$name" "$events" "$(size "$ht")" "$(size "$t")" "$(size "$dir/$name.xz.tpack")" \
    "$(size "$dir/$name.hatf")" "$(size "$dir/$name.hatf.zst")" "$(size "$dir/$name.hatf.xz")" \
    "$dir/$name.sizes.json" "$rates" "$(python3 -c "print($s1-$s0)")" "$(size "$dir/$name.paper.tpack")" "$(size "$dir/$name.notime.tpack")" <<'PY'
import json, sys
name, ev, ht, tp, tpx, h, hz, hx, sj, rates, secs, ptx, tnt = sys.argv[1:]
ev = int(ev)
r = json.load(open(sj))
rows = {(x["table"], x["name"]): x for x in r["rows"]}
sa = rows[("forms", "HATF SplitAddr")]["compressed"][0] / ev
tpp = rows[("forms", "tpack")]
dec, enc = rates.split()
b = lambda x: int(x) / ev
print(f"{name:<8} {ev:9d} | {b(ht):9.3f} {b(tp):9.3f} {b(tpx):9.3f} {b(tnt):9.3f} | {b(h):9.3f} {b(hz):9.3f} {b(hx):9.3f} | "
      f"{sa:9.3f} {tpp['compressed'][0]/ev:9.3f} {int(ptx)/ev:9.3f} | {dec:>8} {enc:>8} {float(secs):7.1f}")
PY
}
run python "$python" "$w/dict.py"
run perl perl "$w/hash.pl"
run gcc "$(gcc -print-prog-name=cc1)" -quiet -O2 -o "$dir/big.s" "$dir/big.c"
run cbench "$dir/alloc_bench" 2000000
