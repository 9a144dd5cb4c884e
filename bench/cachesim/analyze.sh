#!/usr/bin/env bash
# `tramp analyze` against libCacheSim 0.3.5's TraceAnalyzer (its Python
# binding, the analysis in C) on the same 10 M requests: the Twitter
# fixture ten times over as oracleGeneral, each copy's objects renamed and
# times moved on, best of 3, in one run. The peer runs twice: with its
# default analyses, and with every analysis tramp computes (ttl,
# popularity decay, lifetime, prob at age, size change on); tramp always
# computes all of them, and the LRU stack distances besides; it is timed
# printing the stat block and printing every series as JSON (55 MB).
#
# usage: bench/cachesim/analyze.sh [COPIES]   (needs: pip install libcachesim==0.3.5)
set -euo pipefail
cd "$(dirname "$0")/../.."
copies=${1:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
zstd -dqc tests/fixtures/cache/twitter_cluster52.csv.zst > "$tmp/tw.csv"
python3 - "$tmp/tw.csv" "$tmp/big.oracleGeneral" "$copies" <<'PY'
import struct, sys
rows = []
with open(sys.argv[1]) as f:
    for line in f:
        if not line.startswith("#"):
            t, o, s, n = (int(x) for x in line.split(","))
            rows.append((t, o, s))
span = rows[-1][0] - rows[0][0] + 1
with open(sys.argv[2], "wb") as out:
    for c in range(int(sys.argv[3])):
        for t, o, s in rows:
            out.write(struct.pack("<IQIq", t + c * span, (o + c * 0x9E3779B97F4A7C15) % 2**64, s, -1))
PY
cargo build --release -q -p tramp-cli
best() {  # best wall time of 3 runs of "$@", in seconds
  local b=""
  for _ in 1 2 3; do
    local s e
    s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N)
    b=$(python3 -c "import sys; t=$e-$s; b='$b'; print(t if not b else min(t, float(b)))")
  done
  echo "$b"
}
peer() {  # $1: all | default
  (cd "$tmp" && python3 - "$tmp/big.oracleGeneral" "$1" <<'PY'
import sys, libcachesim as lcs
r = lcs.TraceReader(sys.argv[1], lcs.TraceType.ORACLE_GENERAL_TRACE,
                    lcs.ReaderInitParam(ignore_obj_size=False))
p = lcs.AnalysisParam()
o = lcs.AnalysisOption()
if sys.argv[2] == "all":
    o = lcs.AnalysisOption(ttl=True, popularity_decay=True, lifetime=True, prob_at_age=True,
                           size_change=True)
lcs.TraceAnalyzer(r, "out", p, o).run()
PY
  )
}
n=$((copies * 1000000))
t_text=$(best target/release/tramp analyze "$tmp/big.oracleGeneral")
t_tramp=$(best target/release/tramp analyze --json "$tmp/big.oracleGeneral")
t_def=$(best peer default)
t_all=$(best peer all)
python3 - "$n" "$t_tramp" "$t_def" "$t_all" "$t_text" <<'PY'
import sys
n, a, d, l, x = int(sys.argv[1]), *map(float, sys.argv[2:])
print(f"{n/1e6:.0f} M requests, best of 3")
print(f"tramp analyze (the stat block printed): {x:6.2f} s  {n/x/1e6:5.2f} M req/s"
      f"  tramp/peer default {x/d:.2f}x")
print(f"tramp analyze --json (everything):      {a:6.2f} s  {n/a/1e6:5.2f} M req/s")
print(f"libCacheSim TraceAnalyzer, default:     {d:6.2f} s  tramp/peer {a/d:.2f}x")
print(f"libCacheSim TraceAnalyzer, every one:   {l:6.2f} s  tramp/peer {a/l:.2f}x")
PY
/usr/bin/time -f "tramp max RSS %M KB" target/release/tramp analyze "$tmp/big.oracleGeneral" >/dev/null
