#!/usr/bin/env bash
# The heap statistics path on plain HATF (issue 50, item 5): `tramp stats`
# of N alloc/free pairs over 5,000 addresses, no sites (naive HATF, 9-byte
# allocs and 5-byte frees), on one core (taskset -c 0) and on every core,
# best of 3, in records/s; beside `cat` of the same file (the floor of
# reading it). With OLD=/path/to/an/older/tramp, the same for it, and the
# ratio.
#
#   bench/stats-path.sh [PAIRS]        (default 10,000,000: 20 M records)
#   OLD=/tmp/tramp-old bench/stats-path.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
tramp_and_scratch
pairs=${1:-10000000}
python3 - "$W/plain.hatf" "$pairs" <<'PY'
import sys
import numpy as np
path, n = sys.argv[1], int(sys.argv[2])
i = np.arange(n, dtype=np.int64)
addr = lambda k: (0x10000000 + (k % 5000) * 0x400).astype(">u4")
rows = np.zeros(n, dtype=[("t", "u1"), ("s", ">u4"), ("a", ">u4"), ("ft", "u1"), ("fa", ">u4")])
rows["s"] = 16 + (i * 7919) % 1000
rows["a"] = addr(i)
rows["ft"] = 1
rows["fa"][2500:] = addr(i[2500:] - 2500)
# Allocation i, then the free of allocation i - 2,500 (its address comes
# back 2,500 allocations later): 2,500 live objects throughout.
raw = rows.tobytes()
with open(path, "wb") as f:
    f.write(b"".join(raw[k * 14:k * 14 + 9] for k in range(2500)))
    f.write(raw[2500 * 14:])
PY
records=$((2 * pairs - 2500))
rate() { python3 -c "print(f'{$records / $1 / 1e6:.1f}')"; }
printf '%-34s %8s %10s\n' command seconds "M rec/s"
show() { printf '%-34s %8.3f %10s\n' "$1" "$2" "$(rate "$2")"; }
show "cat (floor)" "$(best cat "$W/plain.hatf")"
for t in "$T" ${OLD:+"$OLD"}; do
  name=$([ "$t" = "$T" ] && echo tramp || echo old)
  one=$(best taskset -c 0 "$t" stats "$W/plain.hatf")
  all=$(best "$t" stats "$W/plain.hatf")
  show "$name stats, one core" "$one"
  show "$name stats, $(nproc) cores" "$all"
done
