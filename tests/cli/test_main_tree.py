"""The ``tree`` verb: text and JSON, exit codes, FILE or torch, and the dispatch to the OS's loader model."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

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
    with pytest.raises(TargetError, match="freebsd"):
        main_tree._loader_for("freebsd")  # macOS has its model since issue 15
    assert main_tree._loader_for("darwin").__name__ == "conda_torchcheck.loader.macos"
    real = importlib.import_module

    def fake(name):
        if name == "conda_torchcheck.loader.linux":
            raise ModuleNotFoundError(name=name)
        return real(name)

    monkeypatch.setattr(importlib, "import_module", fake)
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


# --- an ELF file: loaded as a program, so the env is not read --------------------------------------------------

ELF_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "elf" / "prebuilt"
OUTER = ELF_FIXTURES / "precedence" / "libouter_runpath.so"


def test_elf_file_tree_needs_no_env(capsys):
    rc = main(["tree", str(OUTER), "--json", "--ignore-environment"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 1  # libleaf.so.1: libmid's loader has a RUNPATH, and RUNPATH is for direct dependencies only
    assert doc["target"] == {"prefix": None, "os": "linux", "platform": "linux-64", "platform_guess": None}
    assert doc["graph"]["platform"] == "linux"


def test_elf_file_tree_accepts_any_existing_folder_as_prefix(tmp_path, capsys):
    rc = main(["tree", str(OUTER), "-p", str(tmp_path), "--json", "--ignore-environment"])
    assert rc == 1 and json.loads(capsys.readouterr().out)["target"]["prefix"] == str(tmp_path)


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_elf_file_tree_still_rejects_a_mistyped_prefix(tmp_path, capsys, kind):
    prefix = tmp_path / "nope"
    if kind == "file":
        prefix.write_text("")
    rc, _, err = tree(capsys, OUTER, "-p", prefix)
    assert rc == 2 and ("does not exist" in err if kind == "missing" else "is not a directory" in err)


def test_elf_file_tree_program_step_is_named_after_the_file():
    from conda_torchcheck.loader import linux
    from tests.loader.linux_layouts import file_ctx

    load = linux.load_file(file_ctx(), OUTER)
    assert load.steps[0].label == "libouter_runpath.so (executable and its DT_NEEDED)"


def test_elf_file_tree_start_up_imports_stay_lean():
    """What keeps `tree FILE` near 2x faster than lddtree (benchmarks/linux_tree.py): no dataclasses, typing or
    TOML parser, no inventory or checks. Guarded here by module names, not by timing."""
    code = (
        "import sys, io; from conda_torchcheck.cli.main import main; out = sys.stdout; sys.stdout = io.StringIO(); "
        f"rc = main(['tree', {str(OUTER)!r}, '--ignore-environment']); sys.stdout = out; "
        "print(rc); print(' '.join(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    rc, modules = done.stdout.splitlines()
    loaded = set(modules.split())
    assert rc == "1" and "conda_torchcheck.loader.linux" in loaded
    heavy = {"dataclasses", "typing", "tomllib", "json", "shutil", "conda_torchcheck.inventory.model"}
    assert not heavy & loaded, heavy & loaded
    assert not {m for m in loaded if m.startswith(("conda_torchcheck.checks", "conda_torchcheck.inventory.env"))}
