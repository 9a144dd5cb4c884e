"""`tramp analyze` against libcachesim 0.3.5's TraceAnalyzer on the
Twitter trace (its oracleGeneral form, written by conftest from the
csv), at two windows: the stat block to the peer's printed precision and
the series files equal after parsing."""

import json
import re
import subprocess

import libcachesim as lcs
import pytest


def peer(oracle, window, out_dir):
    """The peer's files: it writes its stat block to `stat` in the working
    directory and each series beside `out_dir/out`."""
    code = f"""
import libcachesim as lcs
r = lcs.TraceReader({oracle!r}, lcs.TraceType.ORACLE_GENERAL_TRACE,
                    lcs.ReaderInitParam(ignore_obj_size=False))
p = lcs.AnalysisParam()
p.time_window = {window}
a = lcs.TraceAnalyzer(r, "out", p, lcs.AnalysisOption())
a.run()
"""
    subprocess.run(["python3", "-c", code], cwd=out_dir, check=True, capture_output=True)
    files = {}
    for f in out_dir.iterdir():
        files[f.name] = f.read_text()
    return files


def pairs(text):
    """`key:value` lines after the comment lines, as a dict per section."""
    sections, cur = [], None
    for line in text.splitlines():
        if line.startswith("#"):
            if ":" not in line:  # the file's own path
                continue
            cur = {}
            sections.append(cur)
            continue
        k, v = line.split(":")
        cur[int(k)] = int(v)
    return sections


def rows(text):
    """The comma-separated rows after the comment lines, trailing zeros
    dropped (the peer pads its per-window vectors)."""
    out = []
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        v = [int(x) for x in line.strip().strip(",").split(",") if x != ""]
        while v and v[-1] == 0:
            v.pop()
        out.append(v)
    return out


def trimmed(v):
    v = list(v)
    while v and v[-1] == 0:
        v.pop()
    return v


@pytest.mark.parametrize("window", [60, 300])
def test_analyze_equals_libcachesims_trace_analyzer(window, twitter_oracle, cli, tmp_path):
    files = peer(twitter_oracle, window, tmp_path)
    ours = json.loads(cli("analyze", "--json", "--window", window, twitter_oracle).stdout)
    s, series = ours["stats"], ours["series"]
    stat = files["stat"]
    num = lambda pat: re.search(pat, stat).groups()  # noqa: E731
    n_req, n_obj = map(int, num(r"number of requests: (\d+), number of objects: (\d+)"))
    assert (s["requests"], s["objects"]) == (n_req, n_obj)
    req_gib, obj_gib = map(float, num(r"number of req GiB: ([\d.]+), number of obj GiB: ([\d.]+)"))
    assert round(s["request_bytes"] / 2**30, 4) == req_gib
    assert round(s["object_bytes"] / 2**30, 4) == obj_gib
    cmr, bcmr = map(float, num(r"compulsory miss ratio \(req/byte\): ([\d.]+)/([\d.]+)"))
    assert (round(s["compulsory_miss_ratio"], 4), round(s["compulsory_byte_miss_ratio"], 4)) \
        == (cmr, bcmr)
    by_req, by_obj = map(int, num(r"object size weighted by req/obj: (\d+)/(\d+)"))
    assert (int(s["mean_size_by_requests"]), int(s["mean_size_by_objects"])) == (by_req, by_obj)
    assert round(s["mean_frequency"], 4) == float(num(r"frequency mean: ([\d.]+)")[0])
    assert s["time_span"] == int(num(r"time span: (\d+)")[0])
    rmin, rmax = map(float, num(r"request rate min ([\d.]+) req/s, max ([\d.]+) req/s"))
    omin, omax = map(float, num(r"object rate min ([\d.]+) obj/s, max ([\d.]+) obj/s"))
    assert [round(x, 4) for x in (s["request_rate"]["min"], s["request_rate"]["max"],
                                  s["object_rate"]["min"], s["object_rate"]["max"])] \
        == [rmin, rmax, omin, omax]
    alpha, r2 = map(float, num(r"Zipf alpha=([\d.]+), R2=([\d.]+)"))
    assert (round(s["zipf"]["alpha"], 4), round(s["zipf"]["r2"], 4)) == (alpha, r2)
    xhit = [int(x) for x in re.findall(r"(\d+)\([\d.]+\)", stat.split("X-hit")[1].split("\n")[0])]
    assert [x["objects"] for x in s["x_hit"]] == xhit
    popular = [int(x) for x in
               re.findall(r"(\d+)\([\d.]+\)", stat.split("most popular obj:")[1].split("\n")[0])]
    assert [p["requests"] for p in s["most_popular"]] == popular
    w = window
    req_rate, byte_rate, obj_rate, first_rate = rows(files[f"out.reqRate_w{w}"])
    assert trimmed(n // w for n in series["request_rate"]) == req_rate
    assert trimmed(n // w for n in series["byte_rate"]) == byte_rate
    assert trimmed(n // w for n in series["object_rate"]) == obj_rate
    assert trimmed(n // w for n in series["first_seen_rate"]) == first_rate
    (pop,) = pairs(files["out.popularity"])
    assert dict(series["popularity"]) == pop
    rt, vt = pairs(files["out.reuse"])
    assert dict(series["reuse_time_real"]) == rt
    assert dict(series["reuse_time_virtual"]) == vt
    sreq, sobj = pairs(files["out.size"])
    assert dict(series["size_by_requests"]) == sreq
    assert dict(series["size_by_objects"]) == sobj
    for name, ours_rows in [(f"out.sizeWindow_w{w}_req", "size_by_requests_per_window"),
                            (f"out.sizeWindow_w{w}_obj", "size_by_objects_per_window"),
                            (f"out.reuseWindow_w{w}_rt", "reuse_time_real_per_window"),
                            (f"out.reuseWindow_w{w}_vt", "reuse_time_virtual_per_window")]:
        assert [trimmed(r) for r in series[ours_rows]] == rows(files[name]), name


def test_stack_distances_are_lrus_misses_not_reuse_time(twitter_oracle, cli):
    """The stack-distance histogram gives LRU's misses at any size (checked
    against libcachesim's LRU); reuse time does not."""
    series = json.loads(cli("analyze", "--json", twitter_oracle).stdout)["series"]
    for size in (1000, 20000):
        misses = series["stack_distance_cold"] + sum(
            n for d, n in series["stack_distance"] if d > size)
        r = lcs.TraceReader(twitter_oracle, lcs.TraceType.ORACLE_GENERAL_TRACE,
                            lcs.ReaderInitParam(ignore_obj_size=True))
        ratio, _ = lcs.LRU(size).process_trace(r)
        assert misses == round(ratio * 1_000_000)


def test_a_cut_trace_prints_what_came_before_and_fails(twitter_oracle, cli, tmp_path):
    data = open(twitter_oracle, "rb").read()
    cut = tmp_path / "cut.oracleGeneral"
    cut.write_bytes(data[: 24 * 1000 + 7])
    run = cli("analyze", "--json", cut, check=False)
    assert run.returncode == 1
    out = json.loads(run.stdout)
    assert out["stats"]["requests"] == 1000 and out["complete"] is False
    assert "byte" in run.stderr or "offset" in run.stderr, run.stderr


def test_pictures_of_every_series_and_an_empty_trace(twitter_oracle, cli, tmp_path):
    d = tmp_path / "svg"
    cli("analyze", "--svg", d, twitter_oracle)
    names = sorted(p.name for p in d.iterdir())
    assert names == ["popularity.svg", "rates.svg", "reuse.svg", "size.svg",
                     "stack_distance.svg"]
    for p in d.iterdir():
        text = p.read_text()
        assert text.startswith("<svg") and "twitter" in text, p
    empty = tmp_path / "empty.oracleGeneral"
    empty.write_bytes(b"")
    out = json.loads(cli("analyze", "--json", "-f", "oracle", "--svg", tmp_path / "e",
                         empty).stdout)
    assert out["stats"]["requests"] == 0 and out["complete"] is True


@pytest.mark.parametrize("alpha", [0.6, 0.8, 1.0])
def test_a_zipf_workload_is_analysed_back_to_its_alpha(alpha, cli, tmp_path):
    out = tmp_path / "z.oracleGeneral"
    cli("workload", "zipf", "--objects", 5000, "--requests", 2_000_000, "--alpha", alpha,
        "--seed", 11, "-o", out)
    zipf = json.loads(cli("analyze", "--json", out).stdout)["stats"]["zipf"]
    assert abs(zipf["alpha"] - alpha) < 0.02, zipf


@pytest.mark.parametrize("kind,extra", [("zipf", ["--alpha", "0.8"]), ("uniform", []),
                                         ("hotspot", ["--hot", "0.1", "--share", "0.9"])])
def test_workloads_read_the_same_in_libcachesim_every_layout(kind, extra, cli, tmp_path):
    """Each layout written is what libcachesim reads: its LRU and (on the
    next-access times tramp filled in) Belady give tramp's misses."""
    base = ["workload", kind, "--objects", 3000, "--requests", 100_000, *extra]
    ratios = {}
    for ext, ttype in [("oracleGeneral", lcs.TraceType.ORACLE_GENERAL_TRACE),
                       ("lcs", lcs.TraceType.LCS_TRACE)]:
        path = tmp_path / f"w.{ext}"
        cli(*base, "-o", path)
        ours = json.loads(cli("cachesim", "-p", "lru,opt", "-s", 300, "--json", path).stdout)
        got = {c["policy"]: c["miss_ratio"] for c in ours["table"]["caches"]}
        for name, make in (("lru", lcs.LRU), ("opt", lcs.Belady)):
            r = lcs.TraceReader(str(path), ttype, lcs.ReaderInitParam(ignore_obj_size=True))
            assert round(make(300).process_trace(r)[0], 6) == round(got[name], 6), (ext, name)
        ratios[ext] = got["lru"]
    csv = tmp_path / "w.csv"
    cli(*base, "-o", csv)
    ours = json.loads(cli("cachesim", "-p", "lru", "-s", 300, "--json", csv).stdout)
    ratios["csv"] = ours["table"]["caches"][0]["miss_ratio"]
    # One seed, one stream, whatever the layout.
    assert len(set(ratios.values())) == 1, ratios
    if kind == "hotspot":
        stats = json.loads(cli("analyze", "--json", tmp_path / "w.lcs").stdout)["stats"]
        top = sum(p["fraction"] for p in stats["most_popular"])
        assert stats["objects"] <= 3000 and top < 0.9


def test_a_workload_is_refused_before_anything_is_written(cli, tmp_path):
    run = cli("workload", "zipf", "--objects", 0, "-o", tmp_path / "z.lcs", check=False)
    assert run.returncode != 0 and "objects" in run.stderr
    run = cli("workload", "zipf", "-o", tmp_path / "z.txt", check=False)
    assert run.returncode != 0 and "oracleGeneral" in run.stderr
    assert not list(tmp_path.iterdir())


def test_emitted_misses_are_the_second_levels_requests(twitter_csv, twitter_oracle, cli,
                                                        tmp_path):
    """An LRU's miss stream, fed back to `cachesim`, is what a second LRU
    behind it sees: checked request by request (with the times) against
    libcachesim's LRU as the first level, and the second level's misses
    against libcachesim's two-level run."""
    out = tmp_path / "misses.csv"
    report = json.loads(cli("cachesim", twitter_oracle, "-p", "lru", "-s", 1000,
                            "--emit-misses", out, "--json").stdout)
    l1, l2, req = lcs.LRU(1000), lcs.LRU(5000), lcs.Request()
    want, l2_misses = [], 0
    with open(twitter_csv) as f:
        for line in f:
            if line.startswith("#"):
                continue
            t, obj, _, _ = line.split(",")
            req.obj_id, req.obj_size = int(obj), 1
            if not l1.get(req):
                want.append((int(t), int(obj)))
                l2_misses += not l2.get(req)
    got = [tuple(int(x) for x in line.split(",")[:2])
           for line in out.read_text().splitlines() if not line.startswith("#")]
    assert got == want
    assert report["written"] == len(want) == report["misses"]
    second = json.loads(cli("cachesim", out, "-p", "lru", "-s", 5000, "--json").stdout)
    assert second["table"]["caches"][0]["reads"] - second["table"]["caches"][0]["read_hits"] \
        == l2_misses
    run = cli("cachesim", twitter_oracle, "-p", "lru,fifo", "-s", 1000,
              "--emit-misses", tmp_path / "two.csv", check=False)
    assert run.returncode != 0 and "one --policy" in run.stderr
    assert not (tmp_path / "two.csv").exists()


def test_a_shards_sample_is_the_objects_cachesim_samples_and_simulates_scaled(
        twitter_oracle, cli, tmp_path):
    sizes = [2000, 5000, 10000, 20000, 40000, 80000]
    full = json.loads(cli("cachesim", twitter_oracle, "-p", "lru", "-s",
                          ",".join(map(str, sizes)), "--json").stdout)["table"]["caches"]
    for rate in (0.01, 0.1):
        out = tmp_path / f"s{rate}.oracleGeneral"
        cli("convert", twitter_oracle, out, "--shards", rate)
        mrc = json.loads(cli("cachesim", twitter_oracle, "--mrc", "--shards", rate,
                             "-s", 1000, "--json").stdout)["mrc"]
        stats = json.loads(cli("analyze", "--json", out).stdout)["stats"]
        # The same objects, every request to them.
        assert (stats["requests"], stats["objects"]) == (mrc["sampled"], mrc["sampled_objects"])
        if rate == 0.1:
            scaled = json.loads(cli("cachesim", out, "-p", "lru", "-s",
                                    ",".join(str(round(s * rate)) for s in sizes),
                                    "--json").stdout)["table"]["caches"]
            mae = sum(abs(a["miss_ratio"] - b["miss_ratio"]) for a, b in zip(full, scaled))
            assert mae / len(sizes) < 0.01


def test_splits_partition_the_requests(twitter_oracle, cli, tmp_path):
    import struct

    def records(path):
        data = path.read_bytes()
        return [struct.unpack_from("<IQ", data, i) for i in range(0, len(data), 24)]

    whole = records(pathlib_of(twitter_oracle))
    cli("convert", twitter_oracle, tmp_path / "sh.oracleGeneral", "--split-shards", 4)
    parts = [records(tmp_path / f"sh.{k}.oracleGeneral") for k in range(4)]
    assert sum(map(len, parts)) == len(whole)
    owners = {}
    for k, p in enumerate(parts):
        for _, obj in p:
            assert owners.setdefault(obj, k) == k  # an object's every request in one
    cli("convert", twitter_oracle, tmp_path / "t.oracleGeneral", "--split-time", 200)
    windows = sorted(tmp_path.glob("t.*.oracleGeneral"), key=lambda p: int(p.name.split(".")[1]))
    joined = [r for w in windows for r in records(w)]
    assert joined == whole  # in order, cut at 200 s from the first request
    start = whole[0][0]
    for k, w in enumerate(windows):
        assert all(k * 200 <= t - start < (k + 1) * 200 for t, _ in records(w))


def pathlib_of(p):
    import pathlib

    return pathlib.Path(p)


def test_the_python_analyze_is_the_clis(twitter_oracle, cli):
    import tramp

    want = json.loads(cli("analyze", "--json", "--window", 300, twitter_oracle).stdout)
    assert tramp.analyze(twitter_oracle, window=300) == want
    with pytest.raises(ValueError, match="window 0"):
        tramp.analyze(twitter_oracle, window=0)
