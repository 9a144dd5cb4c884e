#!/usr/bin/env bash
# Replays one recorded trace (CPython, PYTHONMALLOC=malloc, running
# bench/workloads/dict.py) through glibc, jemalloc and mimalloc in one run:
#
#   bench/replay.sh
#
# Needs Debian's libjemalloc2 and libmimalloc2.0 (apt install libjemalloc2 libmimalloc2.0;
# the tests do not need them).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
tramp=$PWD/target/release/tramp
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python=$(command -v pyenv >/dev/null 2>&1 && pyenv which python3 || command -v python3)
PYTHONMALLOC=malloc $tramp record -o "$dir/py.hatf.zst" -- "$python" bench/workloads/dict.py >/dev/null 2>&1
for a in "" /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 /usr/lib/x86_64-linux-gnu/libmimalloc.so.2; do
  if [ -z "$a" ]; then $tramp replay "$dir/py.hatf.zst"; else $tramp replay --allocator "$a" "$dir/py.hatf.zst"; fi
  echo
done
