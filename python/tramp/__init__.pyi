"""Type stubs of the public API of ``tramp`` (docs/python.md)."""

from collections.abc import Sequence
from os import PathLike
from typing import Any

import pandas
import pyarrow

_Path = str | PathLike[str]
_Size = int | float | str

KINDS: tuple[str, ...]

class TraceError(Exception):
    """A trace could not be read whole, or a job was refused."""

    message: str
    report: dict[str, Any] | None
    def __init__(self, message: str, report: str | None = None) -> None: ...

class Events:
    """A heap trace's events as Arrow data, read when a consumer asks."""

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...
    def reader(self) -> pyarrow.RecordBatchReader: ...
    def to_arrow(self) -> pyarrow.Table: ...
    def to_pandas(self) -> pandas.DataFrame: ...
    def to_polars(self) -> Any: ...

class Trace:
    """A trace file; every method reads it afresh."""

    path: str
    format: str | None
    exit_code: int
    notes: list[str]
    def __init__(self, path: _Path, format: str | None = None) -> None: ...
    def stats(self, strict: bool = True) -> dict[str, Any]: ...
    def sites(self, top: int | None = None, strict: bool = True) -> pandas.DataFrame: ...
    def processes(self) -> pandas.DataFrame: ...
    def timeline(self, strict: bool = True) -> pandas.DataFrame: ...
    def events(
        self,
        columns: Sequence[str] | None = None,
        pid: int | None = None,
        time: str | None = None,
        kinds: Sequence[str] = ("alloc", "free", "realloc"),
    ) -> Events: ...
    def report(self, path: _Path) -> str: ...
    def _repr_html_(self) -> str: ...

class Cache:
    """One cache, driven request by request as in libcachesim."""

    def __init__(self, policy: str, size: int, bytes: bool = False) -> None: ...
    def get(self, obj_id: int, size: int = 1) -> bool: ...
    def process(self, path: Trace | _Path, format: str | None = None) -> tuple[float, float]: ...
    def stats(self) -> dict[str, float]: ...
    def __len__(self) -> int: ...

def open(path: _Path, format: str | None = None) -> Trace: ...
def record(
    argv: Sequence[str | PathLike[str]] | str,
    output: _Path | None = None,
    stack: int = 64,
    sample: int | None = None,
) -> Trace: ...
def cachesim(
    trace: Trace | _Path,
    policies: Sequence[str] | str = ("lru",),
    sizes: Sequence[_Size] | _Size = (),
    bytes: bool = False,
    warmup: _Size | None = None,
    threads: int | None = None,
) -> pandas.DataFrame: ...
def analyze(trace: Trace | _Path, window: int = 60) -> dict[str, Any]: ...
def mrc(
    trace: Trace | _Path,
    policy: str = "lru",
    method: str = "exact",
    rate: float | None = None,
    sizes: Sequence[_Size] = (),
    bytes: bool = False,
) -> pandas.DataFrame: ...
def replay(
    trace: Trace | _Path, allocators: Sequence[str] | str = ("glibc",), repeat: int = 1
) -> pandas.DataFrame: ...
def sweep(
    traces: Sequence[_Path] | _Path,
    policies: Sequence[str] | str,
    sizes: Sequence[_Size] | _Size,
    client: Any | None = None,
    threads: int | None = None,
    bytes: bool = False,
    warmup: _Size | None = None,
) -> pandas.DataFrame: ...
