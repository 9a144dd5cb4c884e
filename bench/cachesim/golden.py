#!/usr/bin/env python3
"""Miss counts from libCacheSim 0.3.5 (pip install libcachesim==0.3.5) on the
Twitter cluster-52 trace, by object count (every object size 1) and by
bytes, for the golden values in crates/cachesim/tests/libcachesim.rs.

usage: golden.py TRACE.csv   (the decompressed tests/fixtures/cache csv)
"""
import sys
import struct
import libcachesim as lcs

SIZES = [100, 1000, 5000, 20000, 80000]
BYTE_SIZES = [100000, 1000000, 10000000]
POLICIES = {
    "lru": lambda n: lcs.LRU(n),
    "fifo": lambda n: lcs.FIFO(n),
    "clock": lambda n: lcs.Clock(n),
    "sieve": lambda n: lcs.Sieve(n),
    "s3fifo": lambda n: lcs.S3FIFO(n),
    "arc": lambda n: lcs.ARC(n),
    "2q": lambda n: lcs.TwoQ(n),
    "lfu": lambda n: lcs.LFU(n),
    "opt": lambda n: lcs.Belady(n),
    "slru": lambda n: lcs.SLRU(n),
    "size": lambda n: lcs.Size(n),
    "mq": lambda n: lcs.MQ(n),
}
# Only these when named on the command line (golden.py TRACE.csv slru size).
if len(sys.argv) > 2:
    POLICIES = {k: v for k, v in POLICIES.items() if k in sys.argv[2:]}


def csv_reader(path):
    p = lcs.ReaderInitParam(has_header=True, delimiter=",", ignore_obj_size=True)
    p.time_field = 1
    p.obj_id_field = 2
    p.obj_size_field = 3
    return lcs.TraceReader(path, lcs.TraceType.CSV_TRACE, p)


def oracle_reader(path):
    p = lcs.ReaderInitParam(ignore_obj_size=True)
    return lcs.TraceReader(path, lcs.TraceType.ORACLE_GENERAL_TRACE, p)


def to_oracle(csv_path, out_path):
    """libCacheSim's csv reader does not read next-access times (every
    request comes back with -2), so Belady runs on the same requests written
    in its oracleGeneral layout: u32 time, u64 id, u32 size, i64 next access,
    little-endian, next access as in the csv (1-based request number)."""
    with open(csv_path) as f, open(out_path, "wb") as out:
        for line in f:
            if line.startswith("#"):
                continue
            t, obj, size, nxt = (int(x) for x in line.split(","))
            out.write(struct.pack("<IQIq", t, obj, size, nxt))


def main():
    path = sys.argv[1]
    oracle = path + ".oracleGeneral"
    to_oracle(path, oracle)
    print("// policy, size, misses (of 1000000 requests)")
    for name, make in POLICIES.items():
        for n in SIZES:
            ratios = []
            for reader in (csv_reader(path), oracle_reader(oracle)):
                ratios.append(make(n).process_trace(reader)[0])
            # Belady needs next-access times: only the oracleGeneral run counts.
            miss_ratio = ratios[1]
            if name != "opt":
                assert ratios[0] == ratios[1], (name, n, ratios)
            misses = round(miss_ratio * 1000000)
            print(f'("{name}", {n}, {misses}),  // miss ratio {miss_ratio:.6f}')
    print("// by bytes: policy, size in bytes, misses, byte miss ratio")
    for name, make in POLICIES.items():
        for n in BYTE_SIZES:
            reader = lcs.TraceReader(oracle, lcs.TraceType.ORACLE_GENERAL_TRACE,
                                     lcs.ReaderInitParam(ignore_obj_size=False))
            miss_ratio, byte_miss_ratio = make(n).process_trace(reader)
            print(f'("{name}", {n}, {round(miss_ratio * 1000000)}, {byte_miss_ratio:.6f}),')


main()
