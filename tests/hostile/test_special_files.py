"""Items 1 and 3 of the hostile-input issue: a FIFO, a link to an endless device, a sparse 4 GB file or a folder
in place of any file the inventory reads ends in a finding or a clean run, never a hang, a traceback or a
MemoryError; `check`, `tree` and `spec` alike."""

from __future__ import annotations

import os
import sys

import pytest

from tests.hostile.envs import SPOILERS, build, readers, spoil
from tests.hostile.harness import run_cli

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev are POSIX")


@pytest.mark.parametrize("layout", ["conda", "venv"])
@pytest.mark.parametrize("how", SPOILERS)
def test_every_reader_spoiled_at_once(tmp_path, layout, how):
    b = build(tmp_path / "env", layout)
    for path in readers(b).values():
        spoil(path, how)
    out = run_cli("check", "-p", str(b.prefix), "--json", target=b.prefix)
    assert out.code in (0, 1)
    assert "TC990" not in out.ids()
    tc902 = {f["evidence"]["file"] for f in out.findings("TC902")}
    if how != "folder":  # a folder named METADATA is reported too, but as "no Name/Version"
        assert str(readers(b)["METADATA"]) in tc902


@pytest.mark.parametrize("layout", ["conda", "venv"])
@pytest.mark.parametrize(
    "reader",
    [
        "METADATA",
        "RECORD",
        "INSTALLER",
        "WHEEL",
        "direct_url.json",
        ".pth",
        "torch/version.py",
        "torch/__init__.py",
        "python",
        "pyvenv.cfg",
        "conda-meta record",
    ],
)
def test_a_fifo_in_place_of_each_file(tmp_path, layout, reader):
    b = build(tmp_path / "env", layout)
    paths = readers(b)
    if reader not in paths:
        pytest.skip(f"a {layout} env has no {reader}")
    spoil(paths[reader], "fifo")
    out = run_cli("check", "-p", str(b.prefix), "--json", target=b.prefix)
    assert "TC990" not in out.ids()
    reported = {str(f["evidence"].get("file")) for f in out.doc["findings"] if f["id"] in ("TC901", "TC902")}
    if reader in (
        "METADATA",
        "INSTALLER",
        "WHEEL",
        "direct_url.json",
        "RECORD",
        "conda-meta record",
        ".pth",
        "pyvenv.cfg",
    ):
        assert str(paths[reader]) in reported, out.doc["findings"]


def test_tree_with_fifos(tmp_path):
    b = build(tmp_path / "env", "venv")
    for path in readers(b).values():
        spoil(path, "fifo")
    lib = b.site_packages / "torch" / "lib"
    lib.mkdir()
    os.mkfifo(lib / "libtorch_global_deps.so")
    run_cli("tree", "-p", str(b.prefix), "--json", target=b.prefix)
    run_cli("tree", str(lib / "libtorch_global_deps.so"), "-p", str(b.prefix), target=b.prefix)


@pytest.mark.parametrize("how", ["fifo", "dev-zero", "sparse-4gb"])
@pytest.mark.parametrize("verb", ["check", "fix"])
def test_spec_input_that_is_not_a_file(tmp_path, how, verb):
    spec = tmp_path / "environment.yml"
    spoil(spec, how)
    out = run_cli("spec", verb, str(spec), target=tmp_path)
    assert out.code == 2
    assert str(spec) in out.stderr and "cannot be read" in out.stderr
