#!/usr/bin/env bash
# Issue 36's reading speeds, in one run, best of 3:
#  * a lackey log (bench's walk program under lackey, repeated to ~25 M
#    accesses) through `tramp dump -o /dev/null` (target ≥ 20 M accesses/s);
#  * the Twitter fixture ten times (object ids offset per copy) as
#    oracleGeneral, vscsi v2, twr and lcs v2, each through `tramp cachesim -p
#    lru -s 1000` (target: vscsi and lcs at least oracleGeneral's speed).
#
#   bench/memtrace-layouts.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
tramp_and_scratch

cc -O1 -static -nostdlib -fno-builtin -fno-stack-protector \
  crates/cli/tests/fixtures/memtrace/walk.c -o "$W/walk"
valgrind --tool=lackey --trace-mem=yes --log-file="$W/one.lackey" "$W/walk"
for _ in $(seq 350); do cat "$W/one.lackey"; done >"$W/big.lackey"
n=$(grep -vc '^==' "$W/big.lackey")
t=$(best "$T" dump "$W/big.lackey" -o /dev/null)
python3 -c "print(f'| lackey log, {$n:,} accesses | tramp dump -o /dev/null | {$t:.2f} s | {$n/$t/1e6:.1f} M accesses/s | target 20 |')"

zstd -dcq tests/fixtures/cache/twitter_cluster52.csv.zst >"$W/one.csv"
python3 - "$W" <<'PY'
import struct, sys
d = sys.argv[1]
reqs = []
for line in open(f"{d}/one.csv"):
    if line.startswith("#"):
        continue
    t, o, s, n = (int(x) for x in line.split(","))
    reqs.append((t, o, s))
MAGIC = 0x123456789ABCDEF0
with open(f"{d}/t.oracleGeneral", "wb") as og, open(f"{d}/t.vscsi", "wb") as vs, \
        open(f"{d}/t.twr", "wb") as tw, open(f"{d}/t.lcs", "wb") as lc:
    h = bytearray(8192)
    struct.pack_into("<QQ", h, 0, MAGIC, 2)
    struct.pack_into("<qq", h, 16, 1, 10 * len(reqs))
    struct.pack_into("<Q", h, 8184, MAGIC)
    lc.write(h)
    for copy in range(10):
        off = copy << 56
        og.write(b"".join(struct.pack("<IQIq", t, o ^ off, s, -1) for t, o, s in reqs))
        vs.write(b"".join(struct.pack("<HHIIIQQQ", 0x28, 0x200, 0, s, 1, o ^ off, t, 0) for t, o, s in reqs))
        tw.write(b"".join(struct.pack("<IQII", t, o ^ off, min(s, 10) << 22 | (s - min(s, 10)), 1 << 24) for t, o, s in reqs))
        lc.write(b"".join(struct.pack("<IQIIq", t, o ^ off, s, 1, -1) for t, o, s in reqs))
PY
og=$(best "$T" cachesim -p lru -s 1000 "$W/t.oracleGeneral")
for f in vscsi twr lcs; do
  t=$(best "$T" cachesim -p lru -s 1000 "$W/t.$f")
  python3 -c "print(f'| $f, 10 M requests | tramp cachesim -p lru -s 1000 | {$t:.2f} s | oracleGeneral {$og:.2f} s | {$og/$t:.2f}× its speed |')"
done
