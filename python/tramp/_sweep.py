"""Sweeps: many caches over many traces, on this machine's cores or on a
Dask cluster, gathered into one DataFrame."""

from __future__ import annotations

import math
import os


def _block_sweep(trace: str, policies: list, sizes: list, bytes: bool,  # noqa: A002
                 warmup, threads):
    """One task: a block of policies at every size over one trace (what a
    Dask worker runs; importable there by name)."""
    from . import cachesim

    df = cachesim(trace, policies=policies, sizes=sizes, bytes=bytes, warmup=warmup,
                  threads=threads)
    df.insert(0, "trace", trace)
    return df


def _blocks(policies: list, n: int) -> list[list]:
    """The policies cut into at most ``n`` blocks of consecutive ones."""
    n = max(1, min(n, len(policies)))
    per = math.ceil(len(policies) / n)
    return [policies[i:i + per] for i in range(0, len(policies), per)]


def sweep(traces, policies, sizes, client=None, threads: int | None = None,
          bytes: bool = False, warmup=None):  # noqa: A002
    """Every (policy, size) cache over every trace, as ``tramp.cachesim``
    computes each (columns ``trace``, ``policy``, ``params``, ``size``,
    ``requests``, ``misses``, ``miss_ratio``, ``byte_miss_ratio``; rows in
    trace, policy, size order whatever ran them).

    With no ``client``, on this machine: each trace in one pass whose
    caches run on ``threads`` threads (every core when None). With a Dask
    distributed ``Client``, one task per (trace, block of policies) on the
    cluster's workers, as many blocks per trace as keep every worker
    thread busy, each task one pass on one thread; the traces' paths must
    be readable where the workers run (a shared file system, or the
    splits of ``tramp convert --split-shards`` copied to them)."""
    import pandas as pd

    if isinstance(traces, (str, os.PathLike)):
        traces = [traces]
    traces = [os.fspath(t) for t in traces]
    policies = [policies] if isinstance(policies, str) else list(policies)
    sizes = list(sizes) if not isinstance(sizes, (int, str)) else [sizes]
    if client is None:
        parts = [_block_sweep(t, policies, sizes, bytes, warmup, threads) for t in traces]
    else:
        workers = client.nthreads()
        slots = sum(workers.values()) or 1
        per_trace = math.ceil(slots / len(traces))
        futures = [client.submit(_block_sweep, t, block, sizes, bytes, warmup, 1, pure=False)
                   for t in traces for block in _blocks(policies, per_trace)]
        parts = client.gather(futures)
    return pd.concat(parts, ignore_index=True)
