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
