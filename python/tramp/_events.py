"""A heap trace's events as Arrow data: the Parquet export's ``events``
columns, streamed through Arrow's C stream interface."""

from __future__ import annotations

from . import _tramp
from ._errors import TraceError

KINDS = ("alloc", "free", "displaced", "realloc", "heap_create", "heap_destroy",
         "thread_create", "thread_destroy")
COLUMNS = ("kind", "time", "thread", "heap", "size", "address", "old_address", "object",
           "stack", "lifetime")


class Events:
    """The events of one trace, read when a consumer asks: any Arrow
    consumer through ``__arrow_c_stream__`` (``pyarrow.table(events)``,
    ``polars.from_arrow``, DuckDB), or ``reader()``, ``to_arrow()``,
    ``to_pandas()``, ``to_polars()``. Each read runs tramp's heap view
    afresh, a batch at a time (memory holds a few batches)."""

    def __init__(self, path, fmt, columns, kinds, pid, time):
        self._args = (path, fmt, None if columns is None else list(columns),
                      list(kinds), pid, time)

    def __arrow_c_stream__(self, requested_schema=None):
        """Arrow's PyCapsule stream (``arrow_array_stream``); the schema is
        tramp's (``requested_schema`` is not applied). Errors found before
        the first row (no such file, not a heap trace, several processes
        and no ``pid``) raise TraceError here."""
        return _tramp.events_stream(*self._args)

    def reader(self):
        """A ``pyarrow.RecordBatchReader`` over the events."""
        import pyarrow as pa

        return pa.RecordBatchReader.from_stream(self)

    def to_arrow(self):
        """The events as one ``pyarrow.Table``; damage raises TraceError
        with tramp's message (where it stopped)."""
        import pyarrow as pa

        try:
            return self.reader().read_all()
        except pa.ArrowException as e:
            raise TraceError(_tramp_message(e)) from e

    def to_pandas(self):
        """The events as a pandas DataFrame (``kind`` a category; the
        integer columns Arrow-backed, ``int64[pyarrow]``, nulls as NA)."""
        import pandas as pd

        return self.to_arrow().to_pandas(types_mapper=_nullable(pd))

    def to_polars(self):
        """The events as a polars DataFrame (polars must be installed)."""
        import polars as pl

        return pl.from_arrow(self.to_arrow())


def _tramp_message(e) -> str:
    """tramp's message out of the Arrow error that carried it."""
    text = str(e)
    for prefix in ("External error: ", "External: "):
        if prefix in text:
            text = text.split(prefix, 1)[1]
    return text


def _nullable(pd):
    """Arrow integers as pandas columns backed by the Arrow arrays
    themselves (``pd.ArrowDtype``: no copy, a null stays NA rather than
    turning the column into floats); ``kind`` stays a category."""
    import pyarrow as pa

    table = {t: pd.ArrowDtype(t) for t in (pa.int64(), pa.uint64(), pa.int32())}
    return table.get
