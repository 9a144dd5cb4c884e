"""tramp.record, tramp.replay and tramp.sweep (on a Dask LocalCluster of
worker processes) against the CLI and the one-process result."""

import json
import pathlib

import pytest

import tramp

JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"


def test_record_gives_the_clis_statistics(tmp_path, cli):
    data = tmp_path / "in.txt"
    data.write_text("".join(f"{(i * 31) % 997}\n" for i in range(3000)))
    ours = tramp.record(["sort", "-n", str(data)], output=tmp_path / "py.tpack")
    assert ours.exit_code == 0
    assert any("records" in n for n in ours.notes)
    cli("record", "-o", tmp_path / "cli.tpack", "--", "sort", "-n", data)
    a, b = ours.stats(), json.loads(cli("stats", "--json", tmp_path / "cli.tpack").stdout)
    for k in ("total_allocs", "total_frees", "total_reallocs", "max_live_bytes",
              "bytes_allocated", "live_bytes_at_end"):
        assert a[k] == b[k], k
    assert a["processes"][0]["command"] == ["sort", "-n", str(data)]


def test_record_passes_the_programs_status_and_refuses_no_command(tmp_path):
    t = tramp.record("sh -c 'exit 3'", output=tmp_path / "sh.tpack")
    assert t.exit_code == 3
    with pytest.raises(tramp.TraceError, match="no command"):
        tramp.record([], output=tmp_path / "none.tpack")


def test_replay_runs_each_allocator_through_the_trace(recording, cli):
    df = tramp.replay(recording, ["glibc", JEMALLOC])
    assert list(df["allocator"]) == ["glibc", "jemalloc"]
    assert (df["wall_seconds"] > 0).all()
    assert (df["footprint_kib"] > 0).all()
    want = json.loads(cli("replay", "--json", "--allocator", f"glibc,{JEMALLOC}",
                          recording).stdout)
    assert [a["name"] for a in want["allocators"]] == list(df["allocator"])
    assert want["trace"]["malloc_calls"] == tramp.open(recording).stats()["malloc_calls"]


POLICIES = ["lru", "fifo", "arc", "s3fifo", "sieve", "lirs"]
SIZES = [100, 300, 1000, 3000, 10000, 30000, 60000, 100000]


@pytest.fixture(scope="module")
def two_traces(twitter_csv, twitter_oracle):
    return [twitter_csv, twitter_oracle]


def test_a_sweep_on_a_dask_cluster_equals_the_one_process_result(two_traces):
    from dask.distributed import Client, LocalCluster

    local = tramp.sweep(two_traces, POLICIES, SIZES, threads=1)
    assert len(local) == 2 * len(POLICIES) * len(SIZES)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        distributed = tramp.sweep(two_traces, POLICIES, SIZES, client=client)
        # The tasks ran in the workers' processes, not here.
        assert len(client.scheduler_info()["workers"]) == 2
    assert distributed.equals(local)
    one = tramp.cachesim(two_traces[0], POLICIES, SIZES)
    assert list(local["misses"][: len(one)]) == list(one["misses"])


def test_events_feed_dask_dataframes(recording, tmp_path, cli):
    import dask.dataframe as dd

    cli("export", "--parquet", tmp_path, recording)
    df = dd.read_parquet(str(tmp_path / "events" / "*.parquet"))
    stats = tramp.open(recording).stats()
    assert int((df["kind"] == "alloc").sum().compute()) == stats["total_allocs"]
    ev = dd.from_pandas(tramp.open(recording).events().to_pandas(), npartitions=2)
    assert int((ev["kind"] == "free").sum().compute()) == stats["total_frees"]
    assert pathlib.Path(recording).exists()
