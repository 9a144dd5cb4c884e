"""Fixtures of the Python package's tests: the `tramp` binary (the CLI
whose numbers the package's must equal), the Twitter cache trace in the
layouts libcachesim reads, and recordings of real programs made here."""

from __future__ import annotations

import os
import pathlib
import struct
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TWITTER = ROOT / "tests" / "fixtures" / "cache" / "twitter_cluster52.csv.zst"


def _tramp_bin() -> str:
    """The CLI built by the test run (crates/cli/tests/python.rs passes
    it), else the test profile's build."""
    given = os.environ.get("TRAMP_BIN")
    if given:
        return given
    built = ROOT / "target" / "test-release" / "tramp"
    if not built.exists():
        subprocess.run(["cargo", "build", "--profile", "test-release", "-p", "tramp-cli"],
                       cwd=ROOT, check=True)
    return str(built)


@pytest.fixture(scope="session")
def tramp_bin() -> str:
    return _tramp_bin()


@pytest.fixture(scope="session")
def cli(tramp_bin):
    """Runs `tramp ARGS…`; the completed process (stdout as text)."""

    def run(*args, check=True):
        return subprocess.run([tramp_bin, *map(str, args)], capture_output=True, text=True,
                              check=check)

    return run


@pytest.fixture(scope="session")
def twitter_csv(tmp_path_factory) -> str:
    """The 1 M Twitter requests as plain csv (libcachesim reads no zstd)."""
    out = tmp_path_factory.mktemp("cache") / "twitter.csv"
    with open(out, "wb") as f:
        subprocess.run(["zstd", "-dc", str(TWITTER)], stdout=f, check=True)
    return str(out)


@pytest.fixture(scope="session")
def twitter_oracle(twitter_csv) -> str:
    """The same requests in libCacheSim's oracleGeneral layout (u32 time,
    u64 id, u32 size, i64 next access; little-endian), written here from
    the csv, not by tramp."""
    out = twitter_csv + ".oracleGeneral"
    with open(twitter_csv) as f, open(out, "wb") as o:
        for line in f:
            if line.startswith("#"):
                continue
            t, obj, size, nxt = (int(x) for x in line.split(","))
            o.write(struct.pack("<IQIq", t, obj, size, nxt))
    return out


@pytest.fixture(scope="session")
def recording(tmp_path_factory, cli) -> str:
    """A real program recorded through the capture library: `sort` of a
    few thousand lines (allocates, frees, reallocs)."""
    d = tmp_path_factory.mktemp("rec")
    data = d / "lines.txt"
    data.write_text("".join(f"{(i * 7919) % 5003} line {i}\n" for i in range(5000)))
    out = d / "sort.tpack"
    cli("record", "-o", out, "--", "sort", data)
    return str(out)
