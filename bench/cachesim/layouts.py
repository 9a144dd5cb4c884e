#!/usr/bin/env python3
"""Golden miss counts from libCacheSim 0.3.5's own readers of its vscsi
(v1, v2), twr and lcs (v1, v3) layouts, for crates/cli/tests/layouts.rs,
and a check that libCacheSim reads the lcs tramp writes
(`tramp cachesim --lcs`).

The files are made here from the Twitter fixture's csv by the transform
the Rust test repeats (each request i of the csv: time t, object o, size s):
  vscsi v1  {u32 sn=i, u32 len=s, u32 nSG=1, u16 cmd=0x28, u16 ver=0x0100, u64 lbn=o, u64 ts=t*1e6}
  vscsi v2  {u16 cmd=0x28, u16 ver=0x0200, u32 sn=i, u32 len=s, u32 nSG=1, u64 lbn=o, u64 ts=t*1e6, u64 rt=0}
  twr       {u32 t, u64 o, u32 (min(s,10)<<22 | s-min(s,10)), u32 (op<<24 | 0)}, op 3 (set) every 7th, else 1 (get)
  lcs v1    header(version 1, n_req) + {u32 t, u64 o, u32 s, i64 next}
  lcs v3    header(version 3, n_req) + {u32 t, u64 o, i64 s, u32 op|tenant<<8, u32 ttl=0, i64 next}

usage: layouts.py TRACE.csv TRAMP   (the decompressed tests/fixtures/cache csv,
                                     the tramp binary)
"""
import os
import struct
import subprocess
import sys
import tempfile

import libcachesim as lcs

SIZES = [1000, 10000]
BYTE_SIZES = [1000000, 10000000]
POLICIES = {"lru": lcs.LRU, "fifo": lcs.FIFO, "s3fifo": lcs.S3FIFO}
MAGIC = 0x123456789ABCDEF0


def requests(path):
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            t, o, s, n = (int(x) for x in line.split(","))
            yield t, o, s, n


def header(version, n_req):
    h = bytearray(8192)
    struct.pack_into("<QQ", h, 0, MAGIC, version)
    struct.pack_into("<qq", h, 16, 1, n_req)
    struct.pack_into("<Q", h, 8184, MAGIC)
    return bytes(h)


def write(csv, d):
    reqs = list(requests(csv))
    files = {}
    with open(f"{d}/t.v1.vscsi", "wb") as f:
        for i, (t, o, s, _) in enumerate(reqs):
            f.write(struct.pack("<IIIHHQQ", i, s, 1, 0x28, 0x0100, o, t * 1000000))
    files["vscsi1"] = (f"{d}/t.v1.vscsi", lcs.TraceType.VSCSI_TRACE)
    with open(f"{d}/t.v2.vscsi", "wb") as f:
        for i, (t, o, s, _) in enumerate(reqs):
            f.write(struct.pack("<HHIIIQQQ", 0x28, 0x0200, i, s, 1, o, t * 1000000, 0))
    files["vscsi2"] = (f"{d}/t.v2.vscsi", lcs.TraceType.VSCSI_TRACE)
    with open(f"{d}/t.twr", "wb") as f:
        for i, (t, o, s, _) in enumerate(reqs):
            k = min(s, 10)
            op = 3 if i % 7 == 0 else 1
            f.write(struct.pack("<IQII", t, o, (k << 22) | (s - k), op << 24))
    files["twr"] = (f"{d}/t.twr", lcs.TraceType.TWR_TRACE)
    with open(f"{d}/t.v1.lcs", "wb") as f:
        f.write(header(1, len(reqs)))
        for t, o, s, n in reqs:
            f.write(struct.pack("<IQIq", t, o, s, n))
    files["lcs1"] = (f"{d}/t.v1.lcs", lcs.TraceType.LCS_TRACE)
    with open(f"{d}/t.v3.lcs", "wb") as f:
        f.write(header(3, len(reqs)))
        for i, (t, o, s, n) in enumerate(reqs):
            op = 3 if i % 7 == 0 else 1
            f.write(struct.pack("<IQqIIq", t, o, s, op | (5 << 8), 0, n))
    files["lcs3"] = (f"{d}/t.v3.lcs", lcs.TraceType.LCS_TRACE)
    return files


def main():
    csv, tramp = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as d:
        files = write(csv, d)
        # tramp's own lcs, written from the csv.
        subprocess.run([tramp, "cachesim", "-s", "1", csv, "--lcs", f"{d}/tramp.lcs"],
                       check=True, stdout=subprocess.DEVNULL)
        files["tramp-lcs"] = (f"{d}/tramp.lcs", lcs.TraceType.LCS_TRACE)
        print("// layout, policy, size (objects), misses")
        for name, (path, kind) in files.items():
            for pol, make in POLICIES.items():
                for n in SIZES:
                    r = lcs.TraceReader(path, kind, lcs.ReaderInitParam(ignore_obj_size=True))
                    mr = make(n).process_trace(r)[0]
                    print(f'("{name}", "{pol}", {n}, {round(mr * r.get_num_of_req())}),  // of {r.get_num_of_req()}')
        print("// layout, policy, size (bytes), misses, byte miss ratio")
        for name, (path, kind) in files.items():
            for n in BYTE_SIZES:
                r = lcs.TraceReader(path, kind, lcs.ReaderInitParam(ignore_obj_size=False))
                mr, bmr = lcs.LRU(n).process_trace(r)
                print(f'("{name}", "lru", {n}, {round(mr * r.get_num_of_req())}, {bmr:.6f}),')


main()
