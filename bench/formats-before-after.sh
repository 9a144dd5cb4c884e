#!/usr/bin/env bash
# The four format benchmarks (HATF, Heph, PTF, Meta-TF) on an older tree
# and on this one, back to back in one run:
#
#   bench/formats-before-after.sh OLD_TREE
#
# OLD_TREE is a checkout of the older commit, e.g.
#   git worktree add /tmp/before COMMIT
# Each script builds its own tree (`cargo build --release`) and runs there.
set -u
old=$(cd "$1" && pwd)
new=$(cd "$(dirname "$0")/.." && pwd)
for b in hatf-cli heph ptf metatf; do
  for tree in "$old" "$new"; do
    echo "=== $b in $tree"
    (cd "$tree" && bash "bench/$b.sh" 2>&1)
  done
done
