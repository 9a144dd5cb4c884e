#!/usr/bin/env bash
# The Python package against its peers in one run (docs/benchmarks.md,
# "Python"): Cache.process and Cache.get against libcachesim 0.3.5's
# binding on the Twitter trace, a Dask LocalCluster sweep against one
# thread, and, given a recording (REC=path/to/espresso-x20.tpack, made with
# `tramp record` from espresso run 20 times), Trace.stats() against the
# CLI and events().to_pandas() in rows per second.
#   bench/python.sh            (after ./setup.sh and `pip install ./python`,
#                               or the test command, which installs it)
#   REC=/tmp/e.tpack bench/python.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
tramp_and_scratch
zstd -dc tests/fixtures/cache/twitter_cluster52.csv.zst > "$W/twitter.csv"
python3 bench/python/bench.py "$W/twitter.csv" "$T" ${REC:+"$REC"}
