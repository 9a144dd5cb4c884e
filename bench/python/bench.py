#!/usr/bin/env python3
"""The Python package's targets (issue 52), peers in the same run:
libcachesim 0.3.5's binding for caches, the tramp CLI for statistics,
one process for the Dask sweep. Prints one markdown table.

usage: bench.py TWITTER.csv TRAMP_BIN [RECORDING.tpack]
"""
import json
import statistics
import struct
import subprocess
import sys
import time

import libcachesim as lcs

import tramp

rows = []


def main():
    csv, tramp_bin = sys.argv[1], sys.argv[2]
    recording = sys.argv[3] if len(sys.argv) > 3 else None


    def best(f, n=3):
        times = []
        for _ in range(n):
            s = time.perf_counter()
            f()
            times.append(time.perf_counter() - s)
        return min(times)


    def row(what, ours, peer, peer_name, unit="s"):
        ratio = f"{ours / peer:.2f}× {peer_name}" if peer else "—"
        rows.append(f"| {what} | {ours:.3f} {unit} | {peer:.3f} {unit} | {ratio} |" if peer
                    else f"| {what} | {ours:.3f} {unit} | — | {ratio} |")


    oracle = csv + ".oracleGeneral"
    with open(csv) as f, open(oracle, "wb") as o:
        for line in f:
            if not line.startswith("#"):
                t, obj, size, nxt = (int(x) for x in line.split(","))
                o.write(struct.pack("<IQIq", t, obj, size, nxt))


    def reader():
        return lcs.TraceReader(oracle, lcs.TraceType.ORACLE_GENERAL_TRACE,
                               lcs.ReaderInitParam(ignore_obj_size=True))


    # Cache.process against process_trace, LRU and S3-FIFO at 5000 objects.
    for name, peer in (("lru", lcs.LRU), ("s3fifo", lcs.S3FIFO)):
        ours = best(lambda: tramp.Cache(name, 5000).process(oracle))
        theirs = best(lambda: peer(5000).process_trace(reader()))
        row(f"Cache.process, {name}, 1 M requests", ours, theirs, "libcachesim")

    # Cache.get from a Python loop against libcachesim's get.
    ids = []
    with open(csv) as f:
        for line in f:
            if not line.startswith("#"):
                ids.append(int(line.split(",")[1]))
            if len(ids) == 300_000:
                break


    def ours_get():
        c = tramp.Cache("lru", 5000)
        g = c.get
        for i in ids:
            g(i)


    def peer_get():
        c = lcs.LRU(5000)
        r = lcs.Request()
        g = c.get
        for i in ids:
            r.obj_id = i
            g(r)


    row("Cache.get loop, 300 k requests", best(ours_get), best(peer_get), "libcachesim")

    # The sweep: 2 traces × 6 policies × 8 sizes, a Dask LocalCluster of 2
    # worker processes against one thread.
    from dask.distributed import Client, LocalCluster

    POL = ["lru", "fifo", "arc", "s3fifo", "sieve", "lirs"]
    SIZES = [100, 300, 1000, 3000, 10000, 30000, 60000, 100000]
    one = best(lambda: tramp.sweep([csv, oracle], POL, SIZES, threads=1), 1)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cl, Client(cl) as client:
        tramp.sweep([oracle], ["lru"], [100], client=client)  # workers warm
        dist = best(lambda: tramp.sweep([csv, oracle], POL, SIZES, client=client), 3)
    row("sweep 2×6×8, Dask 2 workers", dist, one, "threads=1")

    if recording:
        t = tramp.open(recording)
        cli = best(lambda: subprocess.run([tramp_bin, "stats", "--json", recording],
                                          capture_output=True, check=True), 3)
        py = best(lambda: t.stats(), 3)
        row("Trace.stats()", py, cli, "tramp stats --json")
        n = json.loads(subprocess.run([tramp_bin, "stats", "--json", recording],
                                      capture_output=True, text=True).stdout)["records"]
        s = time.perf_counter()
        df = t.events().to_pandas()
        a = time.perf_counter() - s
        rows.append(f"| events().to_pandas(), {len(df):,} rows | {a:.2f} s | "
                    f"{len(df) / a / 1e6:.1f} M rows/s | goal 20 M rows/s |")
        del df
        s = time.perf_counter()
        k = sum(b.num_rows for b in t.events().reader())
        a = time.perf_counter() - s
        rows.append(f"| events().reader() streamed | {a:.2f} s | {k / a / 1e6:.1f} M rows/s | — |")
        s = time.perf_counter()
        k = sum(b.num_rows for b in t.events(columns=["kind"]).reader())
        a = time.perf_counter() - s
        rows.append(f"| events(columns=['kind']) streamed | {a:.2f} s | "
                    f"{k / a / 1e6:.1f} M rows/s | — |")
    else:
        rows.append("| events, stats of espresso × 20 | not run (REC=espresso×20.tpack) | | |")

    print("| what | tramp | peer | ratio |")
    print("|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":  # Dask starts its workers by spawning
    main()
