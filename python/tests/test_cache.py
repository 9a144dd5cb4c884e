"""tramp.cachesim, tramp.Cache and tramp.mrc against libcachesim 0.3.5's
Python binding on the same 1 M Twitter requests, and against the CLI."""

import json

import libcachesim as lcs
import pytest

import tramp

SIZES = [100, 1000, 5000, 20000, 80000]
PEERS = {"lru": lcs.LRU, "fifo": lcs.FIFO, "arc": lcs.ARC, "s3fifo": lcs.S3FIFO,
         "sieve": lcs.Sieve, "lirs": lcs.LIRS}


def oracle_reader(path, by_bytes=False):
    return lcs.TraceReader(path, lcs.TraceType.ORACLE_GENERAL_TRACE,
                           lcs.ReaderInitParam(ignore_obj_size=not by_bytes))


@pytest.fixture(scope="module")
def peer_misses(twitter_oracle):
    """libcachesim's misses per (policy, size), by objects."""
    out = {}
    for name, make in PEERS.items():
        for n in SIZES:
            ratio, _ = make(n).process_trace(oracle_reader(twitter_oracle))
            out[name, n] = round(ratio * 1_000_000)
    return out


@pytest.fixture(scope="module")
def table(twitter_csv):
    return tramp.cachesim(twitter_csv, policies=list(PEERS), sizes=SIZES)


def test_cachesim_gives_libcachesims_misses_exactly(table, peer_misses):
    assert len(table) == len(PEERS) * len(SIZES)
    assert list(table.columns) == ["policy", "params", "size", "requests", "misses",
                                   "miss_ratio", "byte_miss_ratio"]
    got = {(r.policy, r.size): r.misses for r in table.itertuples()}
    assert got == peer_misses
    assert (table.requests == 1_000_000).all()
    assert (table.miss_ratio == table.misses / 1_000_000).all()


def test_cachesim_equals_the_cli(table, twitter_csv, cli):
    out = cli("cachesim", "--json", twitter_csv, "--policy", ",".join(PEERS),
              "--size", ",".join(map(str, SIZES)))
    caches = json.loads(out.stdout)["table"]["caches"]
    want = {(c["policy"], c["capacity"]): (c["miss_ratio"], c["byte_miss_ratio"])
            for c in caches}
    got = {(r.policy, r.size): (r.miss_ratio, r.byte_miss_ratio) for r in table.itertuples()}
    assert got == want


def test_bytes_and_parameters(twitter_oracle):
    sizes = [100_000, 1_000_000]
    df = tramp.cachesim(twitter_oracle, policies=["lru", "s3fifo:small=0.2"], sizes=sizes,
                        bytes=True)
    assert list(df.params) == ["", "", "small-size-ratio=0.2", "small-size-ratio=0.2"]
    assert list(df.policy) == ["lru", "lru", "s3fifo", "s3fifo"]
    for r in df.itertuples():
        make = (lambda n: lcs.LRU(n)) if r.policy == "lru" else \
            (lambda n: lcs.S3FIFO(n, small_size_ratio=0.2))
        ratio, byte_ratio = make(r.size).process_trace(oracle_reader(twitter_oracle, True))
        assert r.misses == round(ratio * 1_000_000), r
        assert r.byte_miss_ratio == pytest.approx(byte_ratio, abs=5e-7), r


@pytest.mark.parametrize("policy", ["lru", "s3fifo", "lirs"])
def test_cache_process_gives_libcachesims_ratios(policy, twitter_oracle):
    got = tramp.Cache(policy, 5000).process(tramp.open(twitter_oracle))
    want = PEERS[policy](5000).process_trace(oracle_reader(twitter_oracle))
    assert round(got[0] * 1_000_000) == round(want[0] * 1_000_000)


def test_cache_get_request_by_request_equals_the_peers_get(twitter_csv):
    ours, peer = tramp.Cache("sieve", 200), lcs.Sieve(200)
    req = lcs.Request()
    hits = mismatches = 0
    with open(twitter_csv) as f:
        for i, line in enumerate(f):
            if line.startswith("#"):
                continue
            if i > 50_000:
                break
            obj = int(line.split(",")[1])
            req.obj_id, req.obj_size = obj, 1
            a, b = ours.get(obj), peer.get(req)
            hits += a
            mismatches += a != b
    assert mismatches == 0
    assert hits > 1000
    assert len(ours) == 200


def test_a_bad_policy_or_size_is_a_value_error():
    with pytest.raises(ValueError, match="nosuch"):
        tramp.Cache("nosuch", 10)
    with pytest.raises(ValueError, match="above 0"):
        tramp.Cache("lru", 0)


def test_exact_mrc_is_lrus_misses(twitter_csv, peer_misses):
    curve = tramp.mrc(twitter_csv, sizes=SIZES)
    assert list(curve["size"]) == SIZES
    for r in curve.itertuples():
        assert round(r.miss_ratio * 1_000_000) == peer_misses["lru", r.size]


def test_shards_and_mini_curves_are_near_the_full_simulation(twitter_csv, table):
    full = {(r.policy, r.size): r.miss_ratio for r in table.itertuples()}
    sizes = [5000, 20000, 80000]
    shards = tramp.mrc(twitter_csv, method="shards", rate=0.1, sizes=sizes)
    for r in shards.itertuples():
        assert abs(r.miss_ratio - full["lru", r.size]) < 0.02
    mini = tramp.mrc(twitter_csv, "s3fifo", method="mini", rate=0.1, sizes=sizes)
    for r in mini.itertuples():
        assert abs(r.miss_ratio - full["s3fifo", r.size]) < 0.03
    with pytest.raises(ValueError, match="mini"):
        tramp.mrc(twitter_csv, "s3fifo")
