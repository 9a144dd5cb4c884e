#!/usr/bin/env bash
# Attaching to a running program (issue 47): crates/cli/tests/programs/
# server.c (two threads, two call sites, paced at 100,000 allocations per
# site per second per thread) attached for SECONDS (default 5) by
# `tramp record -p` and by `heaptrack -p`; allocation rates per site over
# each recording's own span of time, their ratio, the attach and detach
# times, and that the program ran on and exited 0.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
tramp=$PWD/target/release/tramp
secs=${SECONDS_ATTACHED:-5}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$dir/server" crates/cli/tests/programs/server.c
start() { # sets pid: a new server, once it is ready
  rm -f "$dir/stop" "$dir/out"
  "$dir/server" "$dir/stop" > "$dir/out" &
  pid=$!
  until grep -q ready "$dir/out" 2>/dev/null; do sleep 0.05; done
}
finish() { # pid: prints its exit status and output
  touch "$dir/stop"
  local rc=0
  wait "$pid" || rc=$?
  echo "  program exit status $rc, output: $(tr '\n' ' ' < "$dir/out")"
}
start
"$tramp" record -p "$pid" --duration "$secs" -o "$dir/t.tpack" 2> "$dir/t.log"
grep -o 'attached to process.*' "$dir/t.log" | sed 's/^/tramp: /'
finish
"$tramp" stats --sites --top 10 --json "$dir/t.tpack" > "$dir/t.json"
# The trace's span: first and last event times (ns).
span=$("$tramp" dump "$dir/t.tpack" | awk -F'time=' 'NF > 1 {split($2, a, " "); t = a[1]; if (first == "") first = t; last = t} END {print (last - first) / 1e9}')
start
hs=$(date +%s.%N)
# heaptrack -p writes heaptrack.PROGRAM.PID.zst in its working directory.
(cd "$dir" && timeout -s INT "$((secs + 2))" heaptrack -p "$pid" > "$dir/h.log" 2>&1) || true
he=$(date +%s.%N)
echo "heaptrack: attached for $(python3 -c "print(round($he - $hs, 2))") s in all (its injection included)"
finish
heaptrack_print "$dir"/heaptrack.server.*.zst > "$dir/h.txt" 2>/dev/null || true
python3 - "$dir" "$span" <<'PY'
import json, re, sys
d, span = sys.argv[1], float(sys.argv[2])
t = json.load(open(f"{d}/t.json"))
rows = {}
for r in t["sites"]["by_count"]:
    f = r["stack"][0].get("function")
    rows[f] = rows.get(f, 0) + r["allocs"]
h = open(f"{d}/h.txt").read()
runtime = float(re.search(r"total runtime: ([0-9.]+)s", h).group(1))
hs = {}
for m in re.finditer(r"^(\d+) calls to allocation functions with .* from\n(\S+)", h, re.M):
    hs[m.group(2)] = hs.get(m.group(2), 0) + int(m.group(1))
for site in ("site_a", "site_b"):
    a, b = rows.get(site, 0) / span, hs.get(site, 0) / runtime
    print(f"{site}: tramp {a:,.0f}/s over {span:.2f} s, heaptrack {b:,.0f}/s over {runtime:.2f} s: ratio {a / b:.3f}")
PY
