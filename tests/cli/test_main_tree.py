"""The ``tree`` verb: text and JSON, exit codes, FILE or torch, and the dispatch to the OS's loader model."""

from __future__ import annotations

import json

import pytest

from conda_torchcheck.cli import main_tree
from conda_torchcheck.cli.main import main
from conda_torchcheck.errors import TargetError
from tests.loader import windows_layouts as wl
from tests.loader.test_windows import put


@pytest.fixture
def setup(tmp_path):
    b = wl.windows_env(tmp_path)
    win = wl.fake_windows(tmp_path / "Windows")
    return b, win


def tree(capsys, *args):
    rc = main(["tree", *map(str, args), "--ignore-environment"])
    out, err = capsys.readouterr()
    return rc, out, err


def test_file_tree_resolves_and_exits_0(setup, tmp_path, capsys):
    b, win = setup
    a = put(tmp_path / "app", "x64/liba.dll")
    put(tmp_path / "app", "x64/libb.dll")
    rc, out, _ = tree(capsys, a, "-p", b.prefix, "--system-root", win)
    assert rc == 0
    assert f"libb.dll  [the DLL's own folder] {tmp_path / 'app' / 'libb.dll'}" in out
    assert "libmissing.dll (delay-import)  not found" in out  # shown, but a delay-load miss is not a failure


def test_file_tree_miss_lists_places_and_exits_1(setup, tmp_path, capsys):
    b, win = setup
    a = put(tmp_path / "app", "x64/liba.dll")
    rc, out, _ = tree(capsys, a, "-p", b.prefix, "--system-root", win)
    assert rc == 1
    assert "libb.dll  not found" in out
    assert "searched, in order:" in out
    assert f"1. the DLL's own folder: {tmp_path / 'app'}" in out
    assert "[file 1: fails: WinError 126" in out


def test_system_dependencies_are_hidden_unless_verbose(setup, tmp_path, capsys):
    b, win = setup
    a = put(tmp_path / "app", "mingw/mingw_a.dll")
    put(tmp_path / "app", "x64/libb.dll")
    _, quiet, _ = tree(capsys, a, "-p", b.prefix, "--system-root", win)
    assert "KERNEL32.dll" not in quiet and "1 system dependencies hidden" in quiet
    _, verbose, _ = tree(capsys, a, "-p", b.prefix, "--system-root", win, "-v")
    assert "KERNEL32.dll  [KnownDLLs]" in verbose


def test_json(setup, tmp_path, capsys):
    b, win = setup
    a = put(tmp_path / "app", "x64/liba.dll")
    put(tmp_path / "app", "x64/noexport/libb.dll")
    rc, out, _ = tree(capsys, a, "-p", b.prefix, "--system-root", win, "--json")
    assert rc == 1
    doc = json.loads(out)
    assert doc["schema"] == 1 and doc["failed"] is True
    assert doc["graph"]["platform"] == "windows"
    assert doc["graph"]["outcomes"][0]["error"] == 127
    assert doc["graph"]["issues"][0]["detail"] == ["b_func"]
    modules = {m["path"]: m for m in doc["graph"]["modules"]}
    (dep,) = [d for d in modules[str(a)]["dependencies"] if d["name"] == "libb.dll"]
    assert dep["resolution"]["found_by"]["step"] == "dll-load-dir"


def test_chinese(setup, tmp_path, capsys):
    b, win = setup
    a = put(tmp_path / "app", "x64/liba.dll")
    _, out, _ = tree(capsys, a, "-p", b.prefix, "--system-root", win, "--lang", "zh_CN")
    assert "未找到" in out and "按顺序搜索过" in out


def test_missing_file_is_a_usage_error(setup, tmp_path, capsys):
    b, _ = setup
    rc, _, err = tree(capsys, tmp_path / "nope.dll", "-p", b.prefix)
    assert rc == 2 and "does not exist" in err


def test_torch_not_installed(setup, capsys):
    b, _ = setup
    rc, _, err = tree(capsys, "-p", b.prefix)
    assert rc == 2 and "torch is not installed" in err


def test_unsupported_or_missing_loader(monkeypatch):
    with pytest.raises(TargetError, match="darwin"):
        main_tree._loader_for("darwin")
    real = main_tree.importlib.import_module

    def fake(name):
        if name == "conda_torchcheck.loader.linux":
            raise ModuleNotFoundError(name=name)
        return real(name)

    monkeypatch.setattr(main_tree.importlib, "import_module", fake)
    with pytest.raises(TargetError, match="linux loader model is not available"):
        main_tree._loader_for("linux")


@pytest.mark.realdata
def test_torch_tree_names_the_blamed_dll_and_the_missing_file(tmp_path, capsys):
    b = wl.torch_env(tmp_path, "2.3.0")
    win = wl.fake_windows(tmp_path / "Windows")
    rc, out, _ = tree(capsys, "torch", "-p", b.prefix, "--system-root", win, "--path", "")
    assert rc == 1
    assert "shm.dll  [preload 6: fails: WinError 126 - this is the file the error message names]" in out
    assert "mkl_intel_thread.1.dll  not found" in out
    assert "torch's PATH fallback: also not found" in out
    assert "_C.cp311-win_amd64.pyd  [extension 12: fails: WinError 126]" in out
