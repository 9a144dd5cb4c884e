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
# Policies with parameters and admission filters, as tramp's --policy
# spells them.
SPECS = {
    "s3fifo:small-size-ratio=0.2:move-to-main-threshold=1":
        lambda n: lcs.S3FIFO(n, small_size_ratio=0.2, move_to_main_threshold=1),
    "2q:Ain-size-ratio=0.3:Aout-size-ratio=0.8":
        lambda n: lcs.TwoQ(n, a_in_size_ratio=0.3, a_out_size_ratio=0.8),
    "mq:n-queue=4:lifetime=2000:Qout-size-ratio=2":
        lambda n: lcs.MQ(n, n_queue=4, lifetime=2000, qout_size_ratio=2.0),
    "clock2": lambda n: lcs.Clock(n, n_bit_counter=2),
    "lru+bloom": lambda n: lcs.LRU(n, admissioner=lcs.BloomFilterAdmissioner()),
    "s3fifo+bloom": lambda n: lcs.S3FIFO(n, admissioner=lcs.BloomFilterAdmissioner()),
    "fifo+prob": lambda n: lcs.FIFO(n, admissioner=lcs.ProbAdmissioner(0.5)),
    "lru+prob:prob=0.2": lambda n: lcs.LRU(n, admissioner=lcs.ProbAdmissioner(0.2)),
    "lru+size:size=1000": lambda n: lcs.LRU(n, admissioner=lcs.SizeAdmissioner(1000)),
    "lru+sizeprob:exponent=0.001":
        lambda n: lcs.LRU(n, admissioner=lcs.SizeProbabilisticAdmissioner(0.001)),
    "gdsf": lambda n: lcs.GDSF(n),
    "lruk": lambda n: lcs.LRUK(n),
    "lruk:k=3": lambda n: lcs.LRUK(n, k=3),
    "lfuda": lambda n: lcs.LFUDA(n),
    "lruprob": lambda n: lcs.LRUProb(n),
    "lruprob:prob=0.25": lambda n: lcs.LRUProb(n, prob=0.25),
    "flashprob": lambda n: lcs.FlashProb(n),
    "flashprob:ram-size-ratio=0.1:disk-admit-prob=0.5":
        lambda n: lcs.FlashProb(n, ram_size_ratio=0.1, disk_admit_prob=0.5),
    "random": lambda n: lcs.Random(n),
    "hyperbolic": lambda n: lcs.Hyperbolic(n),
    "beladysize": lambda n: lcs.BeladySize(n),
    "clock2qplus": lambda n: lcs.Clock2QPlus(n),
    "lirs": lambda n: lcs.LIRS(n),
    "wtinylfu": lambda n: lcs.WTinyLFU(n),
    "wtinylfu:window-size=0.1": lambda n: lcs.WTinyLFU(n, window_size=0.1),
    "lecar": lambda n: lcs.LeCaR(n),
    "lhd": lambda n: lcs.LHD(n),
    "clockpro": lambda n: lcs.ClockPro(n),
    "cacheus": lambda n: lcs.Cacheus(n),
    "lru+adaptsize": lambda n: lcs.LRU(n, admissioner=lcs.AdaptSizeAdmissioner()),
    "fifo+adaptsize:reconf-interval=10000":
        lambda n: lcs.FIFO(n, admissioner=lcs.AdaptSizeAdmissioner(reconf_interval=10000)),
    "clockpro:init-ref=1:init-ratio-cold=0.2":
        lambda n: lcs.ClockPro(n, init_ref=1, init_ratio_cold=0.2),
    "lecar:update-weight=0:lru-weight=0.8":
        lambda n: lcs.LeCaR(n, update_weight=False, lru_weight=0.8),
    "clock2qplus:fifo-size-ratio=0.2:move-to-main-threshold=2:corr-window-ratio=0.2":
        lambda n: lcs.Clock2QPlus(n, fifo_size_ratio=0.2, move_to_main_threshold=2,
                                  corr_window_ratio=0.2),
}
# libCacheSim's LFUDA looks for the next frequency by trying each in turn,
# and the frequencies grow with the age: on the whole trace it finishes
# only some sizes in minutes. These (spec, by bytes, requests, size) do.
PREFIXED = [
    ("lfuda", False, 50000, 300), ("lfuda", False, 50000, 1000),
    ("lfuda", False, 200000, 5000), ("lfuda", False, 1000000, 20000),
    ("lfuda", True, 50000, 100000), ("lfuda", True, 200000, 1000000),
    ("lfuda", True, 1000000, 10000000),
]
# Those drawing from libCacheSim's generator, whose state is per thread and
# carries over from one cache to the next: each runs in a process of its
# own, so that it draws from the seed as a fresh process does.
FRESH = {"fifo+prob", "lru+prob:prob=0.2", "lru+sizeprob:exponent=0.001",
         "lruprob", "lruprob:prob=0.25", "flashprob",
         "flashprob:ram-size-ratio=0.1:disk-admit-prob=0.5",
         "random", "hyperbolic", "beladysize", "lecar", "lhd", "cacheus",
         "lru+adaptsize", "fifo+adaptsize:reconf-interval=10000",
         "lecar:update-weight=0:lru-weight=0.8"}
SPEC_SIZES = [1000, 5000, 20000]
# Only these when named on the command line (golden.py TRACE.csv slru size;
# golden.py TRACE.csv specs for the table of SPECS).
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


def one(spec, n, by_bytes, oracle, requests=1000000):
    """One cache's (misses, byte miss ratio) over the first `requests`, in
    this process."""
    reader = lcs.TraceReader(oracle, lcs.TraceType.ORACLE_GENERAL_TRACE,
                             lcs.ReaderInitParam(ignore_obj_size=not by_bytes))
    miss_ratio, byte_miss_ratio = SPECS[spec](n).process_trace(reader, max_req=requests)
    return round(miss_ratio * requests), byte_miss_ratio


def fresh(spec, n, by_bytes, oracle):
    import subprocess
    out = subprocess.run([sys.executable, __file__, "--one", spec, str(n),
                          "bytes" if by_bytes else "objects", oracle],
                         check=True, capture_output=True, text=True).stdout.split()
    return int(out[0]), float(out[1])


def specs(path):
    oracle = path + ".oracleGeneral"
    to_oracle(path, oracle)
    print("// spec, unit, size, misses, byte miss ratio")
    for spec in SPECS:
        if spec in {p[0] for p in PREFIXED}:
            continue
        run = fresh if spec in FRESH else one
        for by_bytes, sizes in ((False, SPEC_SIZES), (True, BYTE_SIZES)):
            for n in sizes:
                misses, bmr = run(spec, n, by_bytes, oracle)
                unit = "Unit::Bytes" if by_bytes else "Unit::Objects"
                print(f'("{spec}", {unit}, {n}, {misses}, {bmr:.6f}),')
    print("// prefixed: spec, unit, requests, size, misses, byte miss ratio")
    for spec, by_bytes, requests, n in PREFIXED:
        misses, bmr = one(spec, n, by_bytes, oracle, requests)
        unit = "Unit::Bytes" if by_bytes else "Unit::Objects"
        print(f'("{spec}", {unit}, {requests}, {n}, {misses}, {bmr:.6f}),')


def main():
    path = sys.argv[1]
    if len(sys.argv) > 2 and sys.argv[2] == "specs":
        return specs(path)
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


if len(sys.argv) > 1 and sys.argv[1] == "--one":
    misses, bmr = one(sys.argv[2], int(sys.argv[3]), sys.argv[4] == "bytes", sys.argv[5])
    print(misses, bmr)
else:
    main()
