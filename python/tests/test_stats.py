"""Trace.stats() is `tramp stats --json`, and damage raises with where."""

import json
import pathlib

import pytest

import tramp

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_stats_equal_the_cli_on_a_recording(recording, cli):
    want = json.loads(cli("stats", "--json", recording).stdout)
    got = tramp.open(recording).stats()
    assert got == want
    assert got["complete"] is True
    # Not a trivially empty report: sort allocates and frees.
    assert got["total_allocs"] > 100 and got["total_frees"] > 10


@pytest.mark.parametrize("fixture", ["heap/twelve.hatf.txt", "ptf/figure3.ptf.txt",
                                     "heph/scalar.bin.log"])
def test_stats_equal_the_cli_on_every_domain(fixture, cli):
    path = ROOT / "tests" / "fixtures" / fixture
    want = json.loads(cli("stats", "--json", path).stdout)
    assert tramp.open(path).stats() == want


def test_a_cut_recording_raises_with_the_offset_and_the_partial_report(recording, tmp_path, cli):
    data = pathlib.Path(recording).read_bytes()
    cut = tmp_path / "cut.tpack"
    cut.write_bytes(data[: len(data) // 2])
    run = cli("stats", "--json", cut, check=False)
    assert run.returncode == 1
    with pytest.raises(tramp.TraceError) as e:
        tramp.open(cut).stats()
    # The CLI's own message, cause and place included.
    assert e.value.message in run.stderr
    assert "byte offset" in e.value.message
    assert e.value.report == json.loads(run.stdout)
    assert e.value.report["complete"] is False


def test_a_missing_file_raises_naming_it(tmp_path):
    with pytest.raises(tramp.TraceError, match="nothing.tpack"):
        tramp.open(tmp_path / "nothing.tpack").stats()


def test_every_public_name_has_a_stub_and_a_docstring():
    import ast
    import inspect

    stub = ast.parse((pathlib.Path(tramp.__file__).parent / "__init__.pyi").read_text())
    stubbed = {n.name for n in stub.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    stubbed |= {t.id for n in stub.body if isinstance(n, ast.AnnAssign) for t in [n.target]}
    for name in tramp.__all__:
        assert name in stubbed, name
        obj = getattr(tramp, name)
        if callable(obj):
            assert inspect.getdoc(obj), name
    for cls in (tramp.Trace, tramp.Cache):
        for name, member in inspect.getmembers(cls):
            if not name.startswith("_") and callable(member):
                assert inspect.getdoc(member), f"{cls.__name__}.{name}"
