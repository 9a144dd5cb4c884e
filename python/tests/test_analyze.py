"""`tramp analyze` against libcachesim 0.3.5's TraceAnalyzer on the
Twitter trace (its oracleGeneral form, written by conftest from the
csv), at two windows: the stat block to the peer's printed precision and
the series files equal after parsing."""

import json
import re
import struct
import subprocess

import libcachesim as lcs
import pytest


def peer(oracle, window, out_dir, ttype="ORACLE_GENERAL_TRACE"):
    """The peer's files, every analysis on: it writes its stat block to
    `stat` in the working directory and each series beside `out_dir/out`
    (its TTL analysis prints a line per request: dropped)."""
    code = f"""
import libcachesim as lcs
r = lcs.TraceReader({str(oracle)!r}, lcs.TraceType.{ttype},
                    lcs.ReaderInitParam(ignore_obj_size=False))
p = lcs.AnalysisParam()
p.time_window = {window}
o = lcs.AnalysisOption(ttl=True, popularity_decay=True, lifetime=True, prob_at_age=True,
                       size_change=True)
a = lcs.TraceAnalyzer(r, "out", p, o)
a.run()
"""
    subprocess.run(["python3", "-c", code], cwd=out_dir, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    files = {}
    for f in out_dir.iterdir():
        files[f.name] = f.read_text()
    return files


def pairs(text):
    """`key:value` lines after the comment lines, as a dict per section:
    the first line names the file, every later comment opens a section."""
    sections, cur = [], None
    for i, line in enumerate(text.splitlines()):
        if not line.strip():
            continue
        if line.startswith("#"):
            if i == 0:  # the file's own path
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
    same_further_series(series, files, w)


def lines_after_comments(text):
    return [x for x in text.splitlines() if x.strip() and not x.startswith("#")]


def same_further_series(series, files, w):
    """The analyses libCacheSim leaves off by default, and the access
    pattern, equal to the peer's files."""
    # Access pattern: the peer sorts objects by first request unstably, so
    # the real-time rows compare as a sorted list; the virtual-time rows
    # (first requests unique) in order.
    objs = series["access_pattern"]["objects"]
    assert series["access_pattern"]["sample"] == 10
    peer_vt = [[int(x) for x in ln.strip(",").split(",")]
               for ln in lines_after_comments(files["out.accessVtime"])]
    assert [o["virtual"] for o in objs] == peer_vt
    peer_rt = [[int(x) for x in ln.strip(",").split(",")]
               for ln in lines_after_comments(files["out.accessRtime"])]
    assert sorted(o["real"] for o in objs) == sorted(peer_rt)
    # Popularity decay: a row per whole window.
    assert [trimmed(r) for r in series["popularity_decay"]] == \
        rows(files[f"out.popularityDecay_w{w}_obj"])
    # Requests by age: (since last, since first): requests.
    peer_age = {}
    for ln in lines_after_comments(files[f"out.probAtAge_w{w}"]):
        k, v = ln.split(":")
        a, c = map(int, k.split(","))
        peer_age[(a, c)] = int(v)
    assert {(a, c): n for a, c, n in series["requests_by_age"]} == peer_age
    # Lifetimes: the peer bins real lifetimes by 10 s but labels bin k as
    # 60 k (docs/analyze.md); tramp labels it 10 k.
    real, logical = pairs(files["out.lifetime"])
    assert {k * 6: n for k, n in series["lifetime_real"]} == real
    assert dict(series["lifetime_virtual"]) == logical
    ttl = pairs(files["out.ttl"])
    assert dict(series["ttl"]) == (ttl[0] if ttl else {})


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
    assert names == sorted(f"{n}.svg" for n in [
        "rates", "popularity", "reuse", "size", "stack_distance", "access_pattern",
        "popularity_decay", "age", "lifetime", "ttl", "size_change"])
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
        scaled_sizes = ",".join(str(round(s * rate)) for s in sizes)

        def mae(trace):
            scaled = json.loads(cli("cachesim", trace, "-p", "lru", "-s", scaled_sizes,
                                    "--json").stdout)["table"]["caches"]
            return sum(abs(a["miss_ratio"] - b["miss_ratio"])
                       for a, b in zip(full, scaled)) / len(sizes)
        if rate == 0.1:
            assert mae(out) < 0.01
        # Adjusted (SHARDS' correction written into the trace): within
        # 0.01 at both rates, and the sample's size near rate × requests
        # (the 1 % sample above holds 35,830 where 10,000 are expected;
        # its error is 0.156, docs/analyze.md).
        adj = tmp_path / f"a{rate}.oracleGeneral"
        note = cli("convert", twitter_oracle, adj, "--shards", rate, "--shards-adjust").stderr
        assert "adjusted:" in note
        n = json.loads(cli("analyze", "--json", adj).stdout)["stats"]["requests"]
        assert abs(n - 1_000_000 * rate) < 0.1 * 1_000_000 * rate, n
        assert mae(adj) < 0.01


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


def lcs_v3(csv_path, out, n):
    """The first `n` Twitter requests as lcs v3, written here by hand (not
    by tramp): every 7th a set whose size moves by up to ±100 bytes (or by
    ±5 %, or a doubling), TTLs of 60, 3600 and 86400 s on three requests in
    four."""
    recs, sizes = [], {}
    with open(csv_path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            t, obj, size, _ = (int(x) for x in line.split(","))
            i = len(recs)
            op, ttl = 1, [0, 60, 3600, 86400][i % 4]
            if i % 7 == 0 and obj in sizes:
                op = 3
                size = max(1, sizes[obj] + [(i * 31) % 201 - 100,
                                            sizes[obj] // 20, -(sizes[obj] // 20),
                                            sizes[obj], 0][i % 5])
            sizes[obj] = size
            recs.append((t, obj, size, op, ttl))
            if len(recs) == n:
                break
    stat = [0] * 1000
    stat[0:12] = [1, len(recs), len(sizes), sum(r[2] for r in recs), 0, recs[0][0], recs[-1][0],
                  sum(r[3] == 1 for r in recs), sum(r[3] == 3 for r in recs), 0,
                  min(r[2] for r in recs), max(r[2] for r in recs)]
    head = struct.pack("<QQ", 0x123456789ABCDEF0, 3) + struct.pack("<1000Q", *stat) \
        + b"\0" * (21 * 8) + struct.pack("<Q", 0x123456789ABCDEF0)
    assert len(head) == 8192
    with open(out, "wb") as o:
        o.write(head)
        for t, obj, size, op, ttl in recs:
            o.write(struct.pack("<IQqIIq", t, obj, size, op, ttl, -1))


def test_ttls_and_size_changes_equal_libcachesims(twitter_csv, cli, tmp_path):
    trace = tmp_path / "v3.lcs"
    lcs_v3(twitter_csv, trace, 300_000)
    (tmp_path / "peer").mkdir()
    files = peer(trace, 60, tmp_path / "peer", "LCS_TRACE")
    out = json.loads(cli("analyze", "--json", "--window", 60, trace).stdout)
    s, series = out["stats"], out["series"]
    stat = files["stat"]
    assert s["requests"] == 300_000
    (ttl,) = pairs(files["out.ttl"])
    assert dict(series["ttl"]) == ttl and len(ttl) == 3
    distinct = int(re.search(r"TTL: (\d+) different TTLs", stat).group(1))
    assert s["ttl"]["distinct"] == distinct == 3
    common = dict(re.findall(r"(\d+):(\d+)\([\d.]+\)", stat.split("different TTLs,")[1]
                             .split("\n")[0]))
    assert {c["ttl"]: c["requests"] for c in s["ttl"]["common"]} == \
        {int(k): int(v) for k, v in common.items()}
    # Overwrites: sets of objects seen before.
    w = int(re.search(r"overwrite: (\d+)", stat).group(1))
    assert s["overwrites"] == w > 0
    # Absolute size changes: the same bins; tramp's signed bin k is the
    # peer's label ±2^(k-1) (±16: beyond ±16384).
    line = stat.split("absolute size change: ")[1].split("\n")[0]
    peer_abs = {lab: int(n) for lab, n in re.findall(r"([<>\-\d]+):(\d+)\(", line)}

    def label(k):
        if k == 0:
            return "0"
        if abs(k) == 16:
            return "<-16384" if k < 0 else ">16384"
        return str((1 << (abs(k) - 1)) * (1 if k > 0 else -1))
    assert {label(k): n for k, n in series["size_change_absolute"]} == peer_abs
    # Relative changes: the peer files a growth by k under its label
    # "-x" of bin -k and every shrinking under "0.0001" (docs/analyze.md);
    # tramp keeps the sign.
    line = stat.split("relative size change: ")[1].split("\n")[0]
    peer_rel = {lab: int(n) for lab, n in re.findall(r"([<>\-\d.]+):(\d+)\(", line)}
    labels = ["0.0001", "0.0002", "0.0005", "0.0008", "0.001", "0.002", "0.005", "0.008",
              "0.01", "0.02", "0.05", "0.08", "0.1", "<0.1"]
    rel = dict(series["size_change_relative"])
    shrank = sum(n for k, n in rel.items() if k < 0)
    want = {("-" + labels[k - 1] if k < 14 else "<-0.1"): n for k, n in rel.items() if k > 0}
    if 0 in rel:
        want["0"] = rel[0]
    want["0.0001"] = want.get("0.0001", 0) + shrank
    assert {k: v for k, v in want.items() if v} == peer_rel
    assert shrank > 0 and any(k > 0 for k in rel)
    same_further_series(series, files, 60)


def test_one_html_page_opens_in_chromium_with_every_picture(twitter_oracle, cli, tmp_path):
    """`--html` is one file that Debian's Chromium shows whole: the stat
    block, and every picture drawn at its size, no console message."""
    from playwright.sync_api import sync_playwright

    page_path = tmp_path / "t.html"
    cli("analyze", "--window", 300, "--html", page_path, twitter_oracle)
    run = cli("analyze", "--svg", tmp_path / "d", "--html", page_path, twitter_oracle,
              check=False)
    assert run.returncode == 2 and "cannot be used with" in run.stderr
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                    args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        messages = []
        page.on("console", lambda m: messages.append(m.text))
        page.on("pageerror", lambda e: messages.append(str(e)))
        page.goto("file://" + str(page_path))
        figures = page.eval_on_selector_all(
            "figure", "fs => fs.map(f => [f.id, f.querySelector('svg').getBoundingClientRect().width,"
                      " f.querySelector('svg').getBoundingClientRect().height])")
        text = page.inner_text("pre")
        browser.close()
    assert [f[0] for f in figures] == [
        "rates", "popularity", "reuse", "size", "stack_distance", "access_pattern",
        "popularity_decay", "age", "lifetime", "ttl", "size_change"]
    assert all(w > 500 and h > 300 for _, w, h in figures), figures
    assert "requests: 1000000, objects: 143542" in text
    assert messages == []
