"""Tables as pandas DataFrames, imported only when a table is asked for
(pandas is not needed to read a trace's statistics)."""

from __future__ import annotations


def frame(columns: dict):
    """A DataFrame of equal-length columns, in their order."""
    import pandas as pd

    return pd.DataFrame(columns)
