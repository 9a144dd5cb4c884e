"""tramp from Python: memory-behaviour traces (heap recordings, cache
simulation, miss-ratio curves, allocator replay) through the same library
the ``tramp`` command calls, so every number equals the CLI's."""

from __future__ import annotations

import json as _json

from . import _tramp
from ._errors import TraceError
from ._tramp import Cache
from ._frames import frame as _frame

from ._events import KINDS

__all__ = ["Cache", "KINDS", "Trace", "TraceError", "analyze", "cachesim", "mrc", "open",
           "record", "replay", "sweep"]


class Trace:
    """A trace file, opened lazily: every method reads it afresh."""

    def __init__(self, path: str, format: str | None = None):
        self.path = str(path)
        self.format = format

    def events(self, columns=None, pid: int | None = None, time: str | None = None,
               kinds=("alloc", "free", "realloc")) -> "Events":
        """One row per heap event of one process image (``pid`` picks one
        of a run), in the Parquet export's columns (``kind``, ``time``,
        ``thread``, ``heap``, ``size``, ``address``, ``old_address``,
        ``object``, ``stack``, ``lifetime``; docs/formats/parquet.md), of
        the ``kinds`` asked (also ``displaced``, ``heap_create``,
        ``heap_destroy``, ``thread_create``, ``thread_destroy``), over the
        ``time`` range asked (``"1s..2s"``, ``"10%..50%"``; docs/select.md).
        Nothing is read until a consumer asks (``to_pandas()``, …)."""
        from ._events import Events

        return Events(self.path, self.format, columns, kinds, pid, time)

    def sites(self, top: int | None = None, strict: bool = True):
        """The allocation sites (call stacks) as a DataFrame, the most bytes
        allocated first (``top`` of them; all for None), from the
        recording's profile index when it has one: ``function``, ``file``,
        ``line``, ``module`` of the innermost frame, ``allocs``, ``bytes``,
        ``temporary`` (freed as the very next heap event), ``peak_bytes``
        (live at the heap's peak), ``live_bytes`` and ``live_objects`` (at
        the end: leaked), and ``stack``, every frame innermost first as
        ``function (file:line)``. The numbers of ``tramp stats --sites
        --json``."""
        report = _json.loads(_tramp.sites_json(self.path, self.format, top, strict))
        rows = report["sites"]["by_bytes"]
        inner = [r["stack"][0] if r["stack"] else {} for r in rows]
        return _frame({
            "function": [f.get("function") for f in inner],
            "file": [f.get("file") for f in inner],
            "line": [f.get("line") for f in inner],
            "module": [f.get("module") for f in inner],
            **{k: [r[k] for r in rows] for k in ("allocs", "bytes", "temporary", "peak_bytes",
                                                  "live_bytes", "live_objects")},
            "stack": [[_frame_name(f) for f in r["stack"]] for r in rows],
        })

    def processes(self):
        """The processes of the trace (a run's every image; a process that
        exec'd is one row per program) as a DataFrame: ``pid``,
        ``parent``, ``command`` (its words), when and where it was
        recorded, as ``tramp stats --json``'s ``processes``."""
        procs = self.stats().get("processes") or []
        keys: list = []
        for p in procs:
            keys += [k for k in p if k not in keys]
        return _frame({k: [p.get(k) for p in procs] for k in keys})

    def timeline(self, strict: bool = True):
        """The heap over time as a DataFrame, a row per slice (at most 512):
        ``start``, ``end`` (in the trace's time, ns for recordings),
        ``max_live_bytes``, ``live_bytes`` (at its end), ``allocations``,
        ``bytes_allocated``, ``frees``; as ``tramp stats --timeline
        --json``."""
        report = _json.loads(_tramp.timeline_json(self.path, self.format, strict))
        slices = report["slices"]
        keys = list(slices[0]) if slices else ["start", "end"]
        return _frame({k: [s[k] for s in slices] for k in keys})

    def report(self, path) -> str:
        """Writes the heap profile page (``tramp report``: one
        self-contained HTML file) to ``path`` and returns the path."""
        _tramp.report(self.path, str(path), self.format)
        return str(path)

    def _repr_html_(self) -> str:
        """The trace's summary in Jupyter: its numbers from ``stats()``."""
        from ._summary import html

        return html(self)

    def __repr__(self) -> str:
        return f"tramp.open({self.path!r})"

    def stats(self, strict: bool = True) -> dict:
        """``tramp stats --json`` as a dict. Damage raises TraceError (its
        ``report`` the statistics of the records before it); with
        ``strict=False`` damage the reader skipped over is reported in
        ``complete`` and ``damage`` instead, as the CLI's JSON does (a read
        that stopped still raises)."""
        return _json.loads(_tramp.stats_json(self.path, self.format, strict))


def _frame_name(f: dict) -> str:
    name = f.get("function") or f"{f.get('module')}+{f.get('offset', 0):#x}"
    if f.get("file"):
        return f"{name} ({f['file']}:{f.get('line')})"
    return name


def open(path, format: str | None = None) -> Trace:  # noqa: A001 - the API's name
    """Opens a trace of any format tramp reads (detected unless given)."""
    return Trace(path, format)


def _path(trace) -> tuple[str, str | None]:
    """A Trace's path and format, or a path's (format detected)."""
    if isinstance(trace, Trace):
        return trace.path, trace.format
    return str(trace), None


def _sizes(sizes) -> list[str]:
    """Sizes as tramp parses them: counts, ``64k``, ``1.5G``, fractions of
    the working set (``0.01``, ``"1%"``)."""
    if isinstance(sizes, (int, float, str)):
        sizes = [sizes]
    return [str(s) for s in sizes]


def _simulate(trace, **ask) -> dict:
    path, fmt = _path(trace)
    full = dict(path=path, format=fmt, policies=["lru"], sizes=[], bytes=False,
                warmup=None, threads=None, curves=None, shards=None, mini_rate=None)
    full.update(ask)
    return _json.loads(_tramp.simulate_json(full))


def cachesim(trace, policies=("lru",), sizes=(), bytes: bool = False,  # noqa: A002
             warmup=None, threads: int | None = None):
    """Simulates every (policy, size) cache over the trace's requests, as
    ``tramp cachesim --json`` does, in one pass. A DataFrame with a row
    per cache: ``policy`` (the bare name as given), ``params`` (the
    parameters set, by libCacheSim's names; an admission filter after
    ``+``), ``size`` (resolved, in objects or bytes), ``requests``,
    ``misses``, ``miss_ratio``, ``byte_miss_ratio``."""
    if isinstance(policies, str):
        policies = [policies]
    policies = list(policies)
    report = _simulate(trace, policies=policies, sizes=_sizes(sizes), bytes=bool(bytes),
                       warmup=None if warmup is None else str(warmup), threads=threads)
    caches = report["table"]["caches"]
    rows = {k: [] for k in ("policy", "params", "size", "requests", "misses",
                            "miss_ratio", "byte_miss_ratio")}
    parts = [_tramp.policy_parts(p) for p in policies]
    # The table has a cache per (policy, size), named by the policy's whole
    # name, its sizes in the order given.
    per = len(caches) // len(parts) if parts else 0
    by_name: dict = {}
    for c in caches:
        by_name.setdefault(c["policy"], []).append(c)
    for bare, params, whole in parts:
        group, by_name[whole] = by_name[whole][:per], by_name[whole][per:]
        for c in group:
            requests = c["reads"] + c["writes"]
            rows["policy"].append(bare)
            rows["params"].append(params)
            rows["size"].append(c["capacity"])
            rows["requests"].append(requests)
            rows["misses"].append(requests - c["read_hits"] - c["write_hits"])
            rows["miss_ratio"].append(c["miss_ratio"])
            rows["byte_miss_ratio"].append(c["byte_miss_ratio"])
    return _frame(rows)


def analyze(trace, window: int = 60) -> dict:
    """What a trace of requests is like, as libCacheSim's traceAnalyzer
    says it (``tramp analyze --json``): ``stats`` (requests, objects,
    bytes, compulsory miss ratios, mean sizes and frequency, rates per
    ``window``, the Zipf fit, X-hit counts, the most popular objects,
    TTLs) and ``series`` (rates per window, popularity, reuse time real
    and virtual, sizes, per window, LRU stack distances, the access
    pattern of sampled objects, popularity decay, requests by age,
    lifetimes, TTLs, size changes); docs/analyze.md."""
    path, fmt = _path(trace)
    return _json.loads(_tramp.analyze_json(path, fmt, int(window)))


def mrc(trace, policy: str = "lru", method: str = "exact", rate: float | None = None,
        sizes=(), bytes: bool = False):  # noqa: A002
    """A miss-ratio curve as a DataFrame (``size``, ``miss_ratio``;
    ``reliable`` where the sample holds enough objects): ``exact``, LRU's
    from stack distances; ``shards``, LRU's SHARDS-sampled at ``rate``
    (0.01 by default); ``mini``, any policy's by miniature simulation at
    ``rate``. Without ``sizes``, 20 points from 0.1 % to 100 % of the
    working set (``exact`` and ``shards``: every size the curve has)."""
    if method in ("exact", "shards"):
        if policy != "lru":
            raise ValueError(f"method {method!r} draws LRU's curve; use method='mini' for {policy}")
        shards = (rate or 0.01) if method == "shards" else None
        report = _simulate(trace, policies=[], sizes=_sizes(sizes), bytes=bool(bytes),
                           curves=["lru"], shards=shards)
        points = report["mrc"]["points"]
        return _frame({"size": [p["size"] for p in points],
                       "miss_ratio": [p["miss_ratio"] for p in points],
                       "reliable": [p["reliable"] for p in points]})
    if method == "mini":
        report = _simulate(trace, policies=[], sizes=_sizes(sizes), bytes=bool(bytes),
                           curves=[policy], mini_rate=rate or 0.01)
        points = report["curves"]["curves"][0]["points"]
        return _frame({"size": [p["size"] for p in points],
                       "miss_ratio": [p["miss_ratio"] for p in points],
                       "reliable": [p["reliable"] for p in points]})
    raise ValueError(f"method {method!r}: the methods are exact, shards and mini")


def record(argv, output=None, stack: int = 64, sample: int | None = None) -> Trace:
    """Records a command (a list of words, or one string split as a shell
    would) as ``tramp record`` does: every heap event of every process it
    starts, with ``stack`` frames of call stack, into ``output`` (named
    after the program when None; one file for the whole run), sampling one
    allocation per ``sample`` bytes on average if given. The trace, with
    ``exit_code`` (the program's status; 128 + a signal's number) and
    ``notes`` (what ``tramp record`` prints of the run)."""
    import os
    import shlex
    import warnings

    if isinstance(argv, str):
        argv = shlex.split(argv)
    out = None if output is None else os.fspath(output)
    path, code, notes = _tramp.record([os.fspath(a) for a in argv], out, stack, sample)
    for n in notes:
        if n.startswith("warning: "):
            warnings.warn(n[len("warning: "):], stacklevel=2)
    if not os.path.exists(path):
        raise TraceError(f"nothing was recorded of {argv[0]}: " + "; ".join(notes))
    t = Trace(path)
    t.exit_code = code
    t.notes = notes
    return t


def replay(trace, allocators=("glibc",), repeat: int = 1):
    """Replays a heap trace's calls on real allocators (``glibc``, or a
    shared library's path such as Debian's
    ``/usr/lib/x86_64-linux-gnu/libjemalloc.so.2``), each traced thread
    on a thread of its own, as ``tramp replay`` does. A DataFrame, a row
    per allocator: ``allocator``, ``version``, ``alloc_seconds`` and
    ``wall_seconds`` (medians over ``repeat`` runs), ``malloc_p50_ns``,
    ``malloc_p99_ns``, ``free_p50_ns``, ``free_p99_ns``, ``peak_rss_kib``,
    ``footprint_kib``, ``footprint_over_live``."""
    path, fmt = _path(trace)
    if isinstance(allocators, str):
        allocators = [allocators]
    report = _json.loads(_tramp.replay_json(path, list(allocators), fmt, repeat))
    rows = report["allocators"]
    med = lambda r, k: r[k]["median"] if isinstance(r[k], dict) else r[k]  # noqa: E731
    return _frame({
        "allocator": [r["name"] for r in rows],
        "version": [r.get("version") for r in rows],
        "alloc_seconds": [med(r, "alloc_seconds") for r in rows],
        "wall_seconds": [med(r, "wall_seconds") for r in rows],
        **{k: [r.get(k) for r in rows] for k in ("malloc_p50_ns", "malloc_p99_ns",
                                                  "free_p50_ns", "free_p99_ns")},
        "peak_rss_kib": [med(r, "peak_rss_kib") for r in rows],
        "footprint_kib": [med(r, "footprint_kib") for r in rows],
        "footprint_over_live": [r.get("footprint_over_live") for r in rows],
    })


from ._sweep import sweep  # noqa: E402  (it uses cachesim above)
