#!/usr/bin/env bash
# Where a recording's bytes go (issue 47's size target): espresso recorded
# by `tramp record` (stacks, the default) and by heaptrack in the same run,
# the two files' sizes, and the tramp trace's bytes stream by stream (its
# records repacked as `tramp record` packs them, zstd-3 in blocks of 256 Ki
# records, by crates/tpack/examples/streams.rs).
#
#   ESPRESSO=path/to/espresso INPUT=largest.espresso bench/trace-size.sh
#
# espresso is built by hand from mimalloc-bench (docs/benchmarks.md,
# "Recording every event, espresso"); without it the script says "not run".
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z "${ESPRESSO:-}" || -z "${INPUT:-}" ]]; then
  echo "espresso: not run (set ESPRESSO=path/to/espresso INPUT=largest.espresso)"
  exit 0
fi
cargo build --release -q
cargo build --release -q -p tramp-tpack --example streams
tramp=$PWD/target/release/tramp
streams=$PWD/target/release/examples/streams
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$(dirname "$INPUT")"
"$tramp" record -o "$dir/e.tpack" -- "$ESPRESSO" "$INPUT" >/dev/null 2>&1
heaptrack -o "$dir/h" "$ESPRESSO" "$INPUT" >/dev/null 2>&1
t=$(stat -c %s "$dir/e.tpack")
h=$(stat -c %s "$dir"/h.*)
printf 'tramp record: %12d bytes\nheaptrack:    %12d bytes\nratio:        %12.2f\n' "$t" "$h" "$(python3 -c "print($t / $h)")"
"$tramp" convert --to hatf "$dir/e.tpack" - 2>/dev/null | "$streams" /dev/stdin zstd-3,block=256K
