#!/usr/bin/env python3
"""Requests per second of libCacheSim's Python binding (process_trace, which
reads and simulates in C) on a csv or oracleGeneral trace, by object count.

usage: libcachesim_speed.py TRACE SIZE [POLICY...]"""
import sys
import time
import libcachesim as lcs


def reader(path):
    if "oracleGeneral" in path:
        return lcs.TraceReader(path, lcs.TraceType.ORACLE_GENERAL_TRACE,
                               lcs.ReaderInitParam(ignore_obj_size=True))
    p = lcs.ReaderInitParam(has_header=True, delimiter=",", ignore_obj_size=True)
    p.time_field, p.obj_id_field, p.obj_size_field = 1, 2, 3
    return lcs.TraceReader(path, lcs.TraceType.CSV_TRACE, p)


MAKE = {"lru": lcs.LRU, "fifo": lcs.FIFO, "s3fifo": lcs.S3FIFO, "sieve": lcs.Sieve,
        "arc": lcs.ARC, "2q": lcs.TwoQ, "lfu": lcs.LFU, "clock": lcs.Clock,
        "slru": lcs.SLRU, "size": lcs.Size, "mq": lcs.MQ, "gdsf": lcs.GDSF,
        "lfuda": lcs.LFUDA, "lruk": lcs.LRUK, "lruprob": lcs.LRUProb,
        "flashprob": lcs.FlashProb, "random": lcs.Random, "hyperbolic": lcs.Hyperbolic,
        "beladysize": lcs.BeladySize, "clock2qplus": lcs.Clock2QPlus, "lirs": lcs.LIRS,
        "wtinylfu": lcs.WTinyLFU, "lecar": lcs.LeCaR, "lhd": lcs.LHD, "clockpro": lcs.ClockPro, "cacheus": lcs.Cacheus}
# libCacheSim's LFUDA slows as the cache ages; one run is enough to compare.
REPS = {"lfuda": 1}

path, size = sys.argv[1], int(sys.argv[2])
for name in sys.argv[3:] or ["lru"]:
    best, n, ratio = 1e9, 0, 0
    for _ in range(REPS.get(name, 3)):
        t = time.perf_counter()
        r = reader(path)
        ratio, _ = MAKE[name](size).process_trace(r)
        best = min(best, time.perf_counter() - t)
        n = r.n_read_req if hasattr(r, "n_read_req") else 1000000
    n = 1000000
    print(f"libCacheSim {name:<16} {size:>7} {n / best / 1e6:8.2f} Mreq/s  miss ratio {ratio:.6f}")
