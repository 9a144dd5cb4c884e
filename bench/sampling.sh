#!/usr/bin/env bash
# The cost of sampled recording (issue 47, `tramp record --sample`):
# instructions (callgrind: repeatable on a shared VM, where wall times of
# the same run vary by 1.6×) and wall times (best of 5) of a program
# untraced, under the capture with nothing sampled (the fast path alone),
# with --sample 4096 (stacks and --stack 0), and recording everything with
# --stack 0, and the traces' sizes.
#
#   bench/sampling.sh                 # churn.c, 1 thread, 2 M (instructions)
#                                     # and 20 M (wall) malloc/free pairs
#   ESPRESSO=path/to/espresso INPUT=largest.espresso bench/sampling.sh
#                                     # espresso too ("not run" without it)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
cargo build --release -q
tramp=$PWD/target/release/tramp
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
gcc -O2 -pthread -o "$dir/churn" crates/cli/tests/programs/churn.c
# The capture library as `tramp record` installs it.
"$tramp" record -o "$dir/x.tpack" -- "$dir/churn" 1 10 >/dev/null 2>&1
lib=$(ls -t ~/.cache/tramp/libtramp_capture-*.so | head -1)
mkdir -p "$dir/cap"
ir() { # env... -> instructions of churn 1 2000000 under them
  rm -rf "$dir/cap"/*
  env "$@" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$dir/churn" 1 2000000 2>&1 |
    awk '/Collected/ {print $4}'
}
base=$(ir X=1)
echo "churn 1 × 2 M pairs, instructions (× untraced):"
printf '  %-34s %14s\n' untraced "$base"
for v in "nothing sampled:TRAMP_CAPTURE_SAMPLE=1000000000000 TRAMP_CAPTURE_STACK=0" \
         "--sample 4096 --stack 0:TRAMP_CAPTURE_SAMPLE=4096 TRAMP_CAPTURE_STACK=0" \
         "--sample 4096 (stacks):TRAMP_CAPTURE_SAMPLE=4096 TRAMP_CAPTURE_STACK=64" \
         "everything, --stack 0:TRAMP_CAPTURE_STACK=0"; do
  name=${v%%:*}
  # shellcheck disable=SC2086
  n=$(ir LD_PRELOAD="$lib" TRAMP_CAPTURE_DIR="$dir/cap" ${v#*:})
  printf '  %-34s %14s  %.2f×\n' "$name" "$n" "$(python3 -c "print($n / $base)")"
done
wall() { # label, program... : best wall time, untraced and recorded
  local label=$1; shift
  local u s0 s64 a
  u=$(best "$@")
  s0=$(best "$tramp" record --sample 4096 --stack 0 -o "$dir/s0.tpack" -- "$@")
  s64=$(best "$tramp" record --sample 4096 -o "$dir/s64.tpack" -- "$@")
  a=$(best "$tramp" record -o "$dir/a.tpack" -- "$@")
  echo "$label, wall seconds (best of 3): untraced $u; --sample 4096 --stack 0 $s0; --sample 4096 $s64; every event with stacks $a"
  python3 -c "print('  ratios: %.2f× / %.2f× / %.2f× untraced' % ($s0/$u, $s64/$u, $a/$u))"
  echo "  trace bytes: sampled $(stat -c %s "$dir/s64.tpack"), every event $(stat -c %s "$dir/a.tpack")"
}
wall "churn 1 × 20 M pairs" "$dir/churn" 1 20000000
if [ -n "${ESPRESSO:-}" ]; then
  wall "espresso $INPUT" "$ESPRESSO" "$INPUT"
else
  echo "espresso: not run (set ESPRESSO=path/to/espresso INPUT=largest.espresso)"
fi
