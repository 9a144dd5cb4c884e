#!/usr/bin/env bash
# Cache-simulation throughput, side by side in one run: tramp's policies
# and LRU curve, the `lru` and `schnellru` crates (requests in memory), and
# libCacheSim 0.3.5's Python binding (process_trace, reading the file in C)
# against tramp reading the same file. Twitter cluster 52, 1 M requests, by
# object count.
#
# usage: bench/cachesim/run.sh   (needs: pip install libcachesim==0.3.5)
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
zstd -dqc tests/fixtures/cache/twitter_cluster52.csv.zst > "$tmp/tw.csv"
python3 - "$tmp/tw.csv" "$tmp/tw.oracleGeneral" <<'PY'
import struct, sys
with open(sys.argv[1]) as f, open(sys.argv[2], "wb") as out:
    for line in f:
        if not line.startswith("#"):
            t, o, s, n = (int(x) for x in line.split(","))
            out.write(struct.pack("<IQIq", t, o, s, n))
PY
cargo build --release -q -p tramp-cachesim --example throughput
ex=target/release/examples/throughput
echo "== requests in memory (best of 5; tramp, lru crate, schnellru crate)"
"$ex" "$tmp/tw.csv" 1000 20000 | tee "$tmp/mem.txt"
for layout in csv oracleGeneral; do
  f="$tmp/tw.$layout"
  echo "== from the $layout file, LRU 1000 objects (best of 3)"
  python3 bench/cachesim/libcachesim_speed.py "$f" 1000 lru 2>/dev/null | tee "$tmp/lcs.txt"
  "$ex" "$f" 1000 | grep "read file" | tee "$tmp/tramp.txt"
  python3 - "$tmp/lcs.txt" "$tmp/tramp.txt" <<'PY'
import sys
rate = lambda p: float(open(p).read().split("Mreq/s")[0].split()[-1])
print(f"   tramp / libCacheSim: {rate(sys.argv[2]) / rate(sys.argv[1]):.2f}x")
PY
done
echo "== tramp cachesim end to end (9 policies x 3 sizes + exact LRU curve, from the .zst csv)"
cargo build --release -q -p tramp-cli
/usr/bin/time -f "   %e s, %M KB max RSS" target/release/tramp cachesim \
  tests/fixtures/cache/twitter_cluster52.csv.zst \
  -p lru,fifo,clock,sieve,s3fifo,arc,2q,lfu,opt -s 1000,20000,80000 --mrc > /dev/null
echo "== policies added by issue 38, from the oracleGeneral file, 1000 objects (LFUDA 20000: libCacheSim's slows with the cache's age): libCacheSim against tramp cachesim (one thread, reading included)"
for p in slru size mq gdsf lfuda lruk lruprob flashprob random hyperbolic beladysize clock2qplus lirs wtinylfu lecar lhd clockpro cacheus; do
  n=1000; [ "$p" = lfuda ] && n=20000
  python3 bench/cachesim/libcachesim_speed.py "$tmp/tw.oracleGeneral" "$n" "$p" 2>/dev/null
  s=$( { /usr/bin/time -f "%e" target/release/tramp cachesim "$tmp/tw.oracleGeneral" -p "$p" -s "$n" --threads 1 >/dev/null; } 2>&1 | tail -1)
  python3 -c "print(f'tramp       $p {$n:>12} {1e6 / max($s, 0.01) / 1e6:8.2f} Mreq/s (whole run, {$s} s; /usr/bin/time resolution 0.01 s)')"
done
echo "== curves of any policy by miniature simulation at 1 % against full simulation of the same 20 points (issue 38)"
/usr/bin/time -f "   miniature only: %e s" target/release/tramp cachesim "$tmp/tw.oracleGeneral" \
  --mrc=s3fifo,2q,sieve,arc,wtinylfu,lecar,lru+bloom > /dev/null
/usr/bin/time -f "   with full simulation beside (--mrc-check): %e s" target/release/tramp cachesim "$tmp/tw.oracleGeneral" \
  --mrc=s3fifo,2q,sieve,arc,wtinylfu,lecar,lru+bloom --mrc-check | grep -E "^[a-z0-9+]+:$|mean absolute" | paste - - | sed 's/^/   /'
echo "== sweep on every core (issue 38): 9 policies x 8 sizes (0.1-50 % of the working set), 10 M requests"
echo "   (the fixture ten times over, ids changed per copy, oracleGeneral), one thread against all cores"
python3 - "$tmp/tw.csv" "$tmp/tw10.oracleGeneral" <<'PY'
import struct, sys
rows = []
for line in open(sys.argv[1]):
    if not line.startswith("#"):
        rows.append(tuple(int(x) for x in line.split(",")))
n = len(rows)
with open(sys.argv[2], "wb") as out:
    for c in range(10):
        key = (c * 0x9E3779B97F4A7C15) % 2**64
        out.write(b"".join(struct.pack("<IQIq", t, o ^ key, s, x + c * n if 0 <= x < 2**62 else x)
                           for t, o, s, x in rows))
PY
ws=$(( 143542 * 10 ))
sizes=$(python3 -c "print(','.join(str(int($ws * f)) for f in (0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5)))")
for th in 1 "$(nproc)"; do
  /usr/bin/time -f "   threads $th: %e s, %M KB max RSS" target/release/tramp cachesim "$tmp/tw10.oracleGeneral" \
    -p lru,fifo,clock,sieve,s3fifo,arc,2q,lfu,opt -s "$sizes" --threads "$th" > "$tmp/sweep$th.txt"
done
cmp -s "$tmp/sweep1.txt" "$tmp/sweep$(nproc).txt" && echo "   same results"
