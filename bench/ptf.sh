#!/usr/bin/env bash
# PTF: sizes of the OO7 traces in each form, and event rates of tramp's
# converters, verifier and statistics beside peers in the same run (mawk
# counting events per type in the ASCII form; zstd decompressing it).
#
#   bench/ptf.sh [CONFIGS] [OPS]      defaults: "small medium", all
set -euo pipefail
cd "$(dirname "$0")/.."
configs=${1:-small medium}
ops=${2:-all}
cargo build --release -q -p tramp-cli
tramp=$PWD/target/release/tramp
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

now() { date +%s.%N; }
# rate NAME EVENTS START END
rate() { awk -v n="$2" -v a="$3" -v b="$4" -v name="$1" 'BEGIN { t = b - a; printf "  %-34s %7.3f s  %6.2f M events/s\n", name, t, n / t / 1e6 }'; }
best() { # best of 3 wall-clock runs of "$@", prints seconds
  local b=999999
  for _ in 1 2 3; do
    local s e
    s=$(now); "$@" >/dev/null 2>&1 || true; e=$(now)
    b=$(awk -v b="$b" -v t="$(awk -v s="$s" -v e="$e" 'BEGIN{print e-s}')" 'BEGIN{print (t<b)?t:b}')
  done
  echo "$b"
}

for cfg in $configs; do
  bin=$dir/$cfg.ptf txt=$dir/$cfg.ptf.txt
  s=$(now)
  $tramp workload oo7 --config "$cfg" --ops "$ops" --seed 1 -o "$bin" 2>"$dir/log"
  e=$(now)
  events=$(grep -o '([0-9]* events' "$dir/log" | tr -dc 0-9)
  echo "OO7 $cfg, ops $ops: $events events"
  rate "generate (binary)" "$events" "$s" "$e"
  $tramp convert "$bin" "$txt"
  zstd -q -19 -T0 -k "$bin" -o "$bin.zst"; zstd -q -19 -T0 -k "$txt" -o "$txt.zst"
  xz -6 -T0 -k -c "$bin" > "$bin.xz"; xz -6 -T0 -k -c "$txt" > "$txt.xz"
  l3=$dir/$cfg.l3.ptf.txt.zst
  zstd -q -3 -k "$txt" -o "$l3"
  for f in "$txt" "$bin" "$l3" "$txt.zst" "$bin.zst" "$txt.xz" "$bin.xz"; do
    sz=$(stat -c %s "$f")
    awk -v s="$sz" -v n="$events" -v f="$(basename "$f")" 'BEGIN { printf "  %-22s %12d bytes  %6.2f bytes/event\n", f, s, s / n }'
  done
  t=$(best $tramp convert "$bin" "$dir/o.ptf.txt");        rate "convert binary -> ASCII" "$events" 0 "$t"
  t=$(best $tramp convert "$txt" "$dir/o.ptf");            rate "convert ASCII -> binary" "$events" 0 "$t"
  t=$(best $tramp verify "$bin");                          rate "verify (binary)" "$events" 0 "$t"
  t=$(best $tramp verify --gc "$bin");                     rate "verify --gc (binary)" "$events" 0 "$t"
  t=$(best $tramp verify "$txt");                          rate "verify (ASCII)" "$events" 0 "$t"
  tb=$(best $tramp stats "$bin");                          rate "stats (binary)" "$events" 0 "$tb"
  tm=$(best mawk '{ n[$1]++ } END { for (k in n) print k, n[k] }' "$txt")
  rate "peer: mawk count per type (ASCII)" "$events" 0 "$tm"
  tz=$(best zstd -q -d -c "$l3")
  rate "peer: zstd -d of the ASCII (-3)" "$events" 0 "$tz"
  ts=$(best $tramp stats "$l3")
  rate "stats (ASCII, zstd -3)" "$events" 0 "$ts"
  awk -v a="$tb" -v b="$ts" -v m="$tm" 'BEGIN { printf "  mawk per-type count / tramp stats: %.2fx (binary), %.2fx (ASCII, zstd)\n", m / a, m / b }'
done
