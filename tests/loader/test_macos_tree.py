"""``tree`` on a macOS env examined from Linux (the dylib chain, how each was found, misses with every place
tried) and on a bare Mach-O FILE."""

from __future__ import annotations

import json

import pytest

from conda_torchcheck.cli.main import main
from tests.loader.macos_layouts import install_real_torch, mac_env

pytestmark = pytest.mark.realdata


def tree(capsys, *args):
    rc = main(["tree", *map(str, args), "--ignore-environment"])
    out, err = capsys.readouterr()
    return rc, out, err


def test_tree_of_a_healthy_macos_env(tmp_path, capsys):
    b = mac_env(tmp_path / "env")
    pkg = install_real_torch(b)
    rc, out, _ = tree(capsys, "-p", b.prefix)
    assert rc == 0
    assert (
        "@rpath/libtorch_python.dylib  [LC_RPATH (@loader_path/lib of _C.cpython-311-darwin.so)] "
        f"{pkg}/lib/libtorch_python.dylib" in out
    )
    assert f"@rpath/libomp.dylib  [LC_RPATH (@loader_path of libtorch_cpu.dylib)] {pkg}/lib/libomp.dylib" in out
    assert "/usr/lib/libc++.1.dylib" not in out  # shared-cache system dylibs are hidden unless -v
    rc, out, _ = tree(capsys, "-p", b.prefix, "-v")
    assert "/usr/lib/libc++.1.dylib  [dyld-shared-cache (macOS 11+: no file on disk), assumed]" in out
    rc, out, _ = tree(capsys, "-p", b.prefix, "--format", "json")
    doc = json.loads(out)
    assert doc["graph"]["platform"] == "darwin" and doc["failed"] is False
    weak = [d for m in doc["graph"]["modules"] for d in m["dependencies"] if d["kind"] == "weak"]
    assert weak and all(d["resolution"]["found_by"]["step"] == "dyld-shared-cache" for d in weak)


def test_tree_miss_lists_every_place_tried(tmp_path, capsys):
    b = mac_env(tmp_path / "env")
    pkg = install_real_torch(b)
    (pkg / "lib" / "libc10.dylib").unlink()
    rc, out, _ = tree(capsys, "-p", b.prefix)
    assert rc == 1
    assert "@rpath/libc10.dylib  not found" in out
    assert f"1. LC_RPATH: {pkg}/lib/libc10.dylib (no such file; @loader_path of libtorch_python.dylib)" in out
    assert "/Users/runner/work/_temp/anaconda/envs/wheel_py311/lib/libc10.dylib (not examined" in out


def test_tree_of_a_macho_file_without_a_macos_env(tmp_path, capsys):
    from tests.loader.macos_layouts import torch_root

    lib = torch_root() / "torch" / "lib" / "libtorch_cpu.dylib"
    rc, out, _ = tree(capsys, lib)
    assert rc == 0, out
    assert f"@rpath/libc10.dylib  [LC_RPATH (@loader_path of libtorch_cpu.dylib)] {lib.parent}/libc10.dylib" in out
