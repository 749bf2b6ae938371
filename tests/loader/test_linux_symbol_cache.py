"""The symbol check's cache: a second run reads no symbol table, a changed library is read again, and a cache
that cannot be written or read back never changes the verdict."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from conda_torchcheck.loader.linux import symbol_cache
from tests.loader.linux_layouts import MINI, context, minitorch_env, run_ids


@pytest.fixture
def cache_home(monkeypatch, tmp_path):
    monkeypatch.delenv("CONDA_TORCHCHECK_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "conda-torchcheck" / "linux-symbols"


def _no_symbol_reads(monkeypatch):
    def refuse(*_args, **_kwargs):
        raise AssertionError("the symbol tables were read again")

    monkeypatch.setattr(symbol_cache, "check_symbols", refuse)


def _evidence(ctx):
    return [(f.id, f.evidence.get("symbol"), f.evidence.get("expected_provider")) for f in run_ids(ctx, "TC403")]


def test_second_run_answers_from_the_cache(make_env, cache_home, monkeypatch):
    builder = make_env(layout="venv")
    minitorch_env(builder, mkl="2024.1")
    first = _evidence(context(builder.prefix))
    assert first and first[0][1] == "iJIT_NotifyEvent"
    [entry] = list(cache_home.iterdir())
    assert json.loads(entry.read_text())["misses"][0][0] == "iJIT_NotifyEvent"
    _no_symbol_reads(monkeypatch)
    assert _evidence(context(builder.prefix)) == first


def test_a_replaced_library_is_read_again(make_env, cache_home):
    builder = make_env(layout="venv")
    pkg = minitorch_env(builder, mkl="2024.1")
    assert _evidence(context(builder.prefix))
    mkl = pkg / "lib" / "libmkl_rt.so.2"
    os.unlink(mkl)
    shutil.copy(MINI / "mkl-2024.0" / "libmkl_rt.so.2", mkl)  # what `pip install mkl==2024.0` leaves
    assert _evidence(context(builder.prefix)) == []
    assert len(list(cache_home.iterdir())) == 2


def test_opt_out_writes_nothing(make_env, cache_home, monkeypatch):
    monkeypatch.setenv("CONDA_TORCHCHECK_NO_CACHE", "1")
    builder = make_env(layout="venv")
    minitorch_env(builder, mkl="2024.1")
    assert _evidence(context(builder.prefix))
    assert not cache_home.exists()


def test_unwritable_or_damaged_cache_changes_nothing(make_env, cache_home):
    builder = make_env(layout="venv")
    minitorch_env(builder, mkl="2024.1")
    expected = _evidence(context(builder.prefix))
    for entry in cache_home.iterdir():
        entry.write_text('{"key": [], "misses": 5}')  # another key, and not a list of rows
    assert _evidence(context(builder.prefix)) == expected
    for entry in cache_home.iterdir():
        entry.write_text("{not json")
    assert _evidence(context(builder.prefix)) == expected
    shutil.rmtree(cache_home)
    cache_home.parent.mkdir(parents=True, exist_ok=True)
    cache_home.write_text("a file where the folder should be")
    assert _evidence(context(builder.prefix)) == expected


def test_old_entries_are_pruned(tmp_path):
    folder = tmp_path / "linux-symbols"
    folder.mkdir()
    for i in range(symbol_cache.MAX_ENTRIES):
        (folder / f"{i}.json").write_text("{}")
        os.utime(folder / f"{i}.json", ns=(i, i))
    symbol_cache._prune(folder)
    left = sorted(int(p.stem) for p in folder.iterdir())
    assert (
        len(left) == symbol_cache.MAX_ENTRIES - symbol_cache.MAX_ENTRIES // 2
        and left[0] == symbol_cache.MAX_ENTRIES // 2
    )
