"""Trace.events() against the Parquet export read by DuckDB (a consumer
independent of tramp's Arrow code), and the views against the CLI."""

import json

import duckdb
import pyarrow as pa
import pytest

import tramp


@pytest.fixture(scope="module")
def exported(recording, cli, tmp_path_factory):
    """The recording's Parquet export, as `tramp export --parquet` writes it."""
    d = tmp_path_factory.mktemp("parquet")
    cli("export", "--parquet", d, recording)
    return d


def test_events_equal_the_parquet_export_row_for_row(recording, exported):
    ours = tramp.open(recording).events(kinds=tramp.KINDS).to_arrow()
    want = duckdb.sql(f"SELECT * FROM '{exported}/events/*.parquet'").arrow()
    if isinstance(want, pa.RecordBatchReader):
        want = want.read_all()
    assert ours.num_rows == want.num_rows > 100
    assert ours.column_names == want.column_names
    for name in ours.column_names:
        a = ours.column(name).to_pylist()
        b = want.column(name).to_pylist()
        assert a == b, name


def test_default_kinds_and_columns_and_pandas_and_polars(recording, cli):
    stats = json.loads(cli("stats", "--json", recording).stdout)
    ev = tramp.open(recording).events(columns=["kind", "size", "lifetime"])
    df = ev.to_pandas()
    assert list(df.columns) == ["kind", "size", "lifetime"]
    counts = df["kind"].value_counts()
    assert counts["alloc"] == stats["total_allocs"]
    assert counts["free"] == stats["total_frees"]
    assert counts.get("realloc", 0) == stats["total_reallocs"]
    # Every free of a live object has its lifetime (a correct program frees
    # nothing unknown).
    assert stats["frees_of_unknown_addresses"] == 0
    assert df["lifetime"][df["kind"] == "free"].notna().all()
    pl_df = ev.to_polars()
    assert pl_df.shape == df.shape
    # Any Arrow consumer takes it through the C stream interface.
    assert pa.table(ev).num_rows == len(df)
    frees = tramp.open(recording).events(kinds=["free"], columns=["lifetime"]).to_pandas()
    assert len(frees) == stats["total_frees"]


def test_events_of_a_cut_trace_raise_with_the_offset(recording, tmp_path):
    data = open(recording, "rb").read()
    cut = tmp_path / "cut.tpack"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(tramp.TraceError, match="byte offset"):
        tramp.open(cut).events().to_pandas()
    with pytest.raises(ValueError, match="no column"):
        tramp.open(recording).events(columns=["nope"]).to_arrow()


def test_sites_timeline_and_report_equal_the_cli(recording, cli, tmp_path):
    t = tramp.open(recording)
    want = json.loads(cli("stats", "--sites", "--top", "1000000", "--json", recording).stdout)
    sites = t.sites()
    rows = want["sites"]["by_bytes"]
    assert len(sites) == len(rows) == want["sites"]["sites"]
    assert list(sites["bytes"]) == [r["bytes"] for r in rows]
    assert list(sites["allocs"]) == [r["allocs"] for r in rows]
    # Every allocation is at one site (bytes differ: the statistics' bytes
    # also count what reallocs grew by).
    assert sites["allocs"].sum() == want["total_allocs"]
    assert len(t.sites(top=3)) == 3
    timeline = json.loads(cli("stats", "--timeline", "--json", recording).stdout)
    tl = t.timeline()
    assert list(tl["allocations"]) == [s["allocations"] for s in timeline["slices"]]
    ours, theirs = tmp_path / "ours.html", tmp_path / "cli.html"
    t.report(ours)
    cli("report", recording, "-o", theirs)
    assert ours.read_bytes() == theirs.read_bytes()
    procs = t.processes()
    assert list(procs["pid"]) == [p["pid"] for p in t.stats()["processes"]]
    assert "allocations" in t._repr_html_()
