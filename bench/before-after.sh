#!/usr/bin/env bash
# The commands that read records through the driver, timed for two tramp
# binaries on the same inputs in one run (best of 3 each, alternating):
#
#   bench/before-after.sh OLD_TRAMP NEW_TRAMP [EVENTS]
#
# Build the old one from a worktree, e.g.
#   git worktree add /tmp/before COMMIT
#   (cd /tmp/before && CARGO_TARGET_DIR=/tmp/before-target cargo build --release -p tramp-cli)
# Prints seconds for each and new/old.
set -euo pipefail
old=$1 new=$2 events=${3:-5000000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$new" sample --events "$events" --seed 7 -o "$dir/t.hatf" 2>/dev/null
"$new" workload oo7 --ops all -o "$dir/oo7.ptf" 2>/dev/null
"$new" convert "$dir/oo7.ptf" "$dir/oo7.ptf.txt" 2>/dev/null
time1() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s.%N); python3 -c "print($e - $s)"; }
bench() { # name args...
  local name=$1; shift
  local bo=999 bn=999
  for _ in 1 2 3; do
    bo=$(python3 -c "print(min($bo, $(time1 "$old" "$@")))")
    bn=$(python3 -c "print(min($bn, $(time1 "$new" "$@")))")
  done
  printf '%-34s %8.3f s %8.3f s  %5.2fx\n' "$name" "$bo" "$bn" "$(python3 -c "print($bn / $bo)")"
}
printf '%-34s %10s %10s  %6s\n' command old new new/old
bench "stats (HATF, $events ops)" stats "$dir/t.hatf"
bench "stats --json (HATF)" stats --json "$dir/t.hatf"
bench "dump (HATF → text)" dump "$dir/t.hatf"
bench "convert HATF → HATF text" convert "$dir/t.hatf" "$dir/o.hatf.txt"
bench "convert HATF → Meta-TF" convert "$dir/t.hatf" "$dir/o.mtf" --dtd examples/hatf-splitaddr.dtd
bench "stats (PTF OO7 small, all ops)" stats "$dir/oo7.ptf"
bench "convert PTF → PTF ASCII" convert "$dir/oo7.ptf" "$dir/o.ptf.txt"
bench "convert PTF ASCII → PTF" convert "$dir/oo7.ptf.txt" "$dir/o.ptf"
bench "verify --gc (PTF)" verify --gc "$dir/oo7.ptf"
