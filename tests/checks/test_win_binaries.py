"""TC303 (a found DLL lacks an imported function: WinError 127) and TC304 (wrong architecture: WinError 193)."""

from __future__ import annotations

import pytest

from conda_torchcheck.checks import win_binaries
from conda_torchcheck.findings import Severity
from tests.loader import windows_layouts as wl
from tests.loader.test_windows import fake_torch, put


def run(ctx):
    return list(win_binaries.CHECK.run(ctx))


def test_missing_export_in_a_foreign_copy(tmp_path):
    b = wl.windows_env(tmp_path)
    pkg = fake_torch(b, "2.5.1", {"liba.dll": "x64/liba.dll"})
    put(b.prefix / "Library" / "bin", "x64/noexport/libb.dll")
    win = wl.fake_windows(tmp_path / "Windows")
    (f,) = run(wl.context(b.prefix, system_root=win, path=""))
    assert (f.id, f.severity) == ("TC303", Severity.ERROR)
    assert f.evidence["missing_functions"] == ["b_func"]
    assert f.evidence["found"] == str(b.prefix / "Library" / "bin" / "libb.dll")
    assert f.evidence["importer"] == str(pkg / "lib" / "liba.dll")
    assert "WinError 127" in f.evidence["error"]
    assert [fix.kind for fix in f.fixes] == ["file", "env"]


def test_forwarded_export_missing_in_target(tmp_path):
    b = wl.windows_env(tmp_path)
    fake_torch(b, "2.5.1", {"liba_fwd_bad.dll": "x64/liba_fwd_bad.dll"})
    put(b.prefix / "Library" / "bin", "x64/libb.dll")
    put(b.prefix / "Library" / "bin", "x64/libc.dll")
    win = wl.fake_windows(tmp_path / "Windows")
    (f,) = run(wl.context(b.prefix, system_root=win, path=""))
    assert f.id == "TC303"
    assert f.evidence["missing_functions"] == ["c_missing"]
    assert f.evidence["forwarded_by"].endswith("libb.dll")


def test_wrong_architecture_dependency(tmp_path):
    b = wl.windows_env(tmp_path)
    fake_torch(b, "2.5.1", {"liba.dll": "x64/liba.dll"})
    put(b.prefix / "Library" / "bin", "x86/libb.dll")
    win = wl.fake_windows(tmp_path / "Windows")
    (f,) = run(wl.context(b.prefix, system_root=win, path=""))
    assert (f.id, f.title.key) == ("TC304", "TC304.title")
    assert (f.evidence["file_arch"], f.evidence["process"]) == ("x86", "python.exe x86_64")
    assert f.fixes[0].kind == "file"


@pytest.mark.realdata
def test_32_bit_libiomp5md_in_torch_lib(tmp_path):
    b = wl.windows_env(tmp_path)
    wl.install_torch(b, "2.15.0")
    wl.install_runtime(b.prefix, "msvc-runtime-14.44")
    target = b.site_packages / "torch" / "lib" / "libiomp5md.dll"
    wl.replace_file(target, wl.openmp_dll("intel-openmp-2021.4-win32").read_bytes())
    win = wl.fake_windows(tmp_path / "Windows")
    findings = run(wl.context(b.prefix, system_root=win, path=""))
    keys = sorted((f.title.key, f.evidence["file"]) for f in findings)
    # torch preloads it (variant "torch": its own file is x86) and torch_cpu.dll imports it (a dependency)
    assert keys == [("TC304.title", str(target)), ("TC304.torch.title", str(target))]


@pytest.mark.realdata
def test_healthy_real_env_has_neither(tmp_path):
    b = wl.windows_env(tmp_path)
    wl.install_torch(b, "2.15.0")
    wl.install_runtime(b.prefix, "msvc-runtime-14.44")
    win = wl.fake_windows(tmp_path / "Windows")
    assert run(wl.context(b.prefix, system_root=win, path="")) == []


def test_files_of_one_build_are_not_symbol_checked_against_each_other(tmp_path):
    b = wl.windows_env(tmp_path)
    fake_torch(b, "2.5.1", {"liba.dll": "x64/liba.dll", "libb.dll": "x64/noexport/libb.dll"})
    win = wl.fake_windows(tmp_path / "Windows")
    # a DLL the wheel's RECORD does not list is foreign: its exports are checked
    (f,) = run(wl.context(b.prefix, system_root=win, path=""))
    assert f.id == "TC303"
    # both listed in RECORD: a torch-internal edge, built together; a damaged file is the file check's (TC308)
    lib = b.site_packages / "torch" / "lib"
    b.dist(
        "torch",
        "2.5.1",
        files={
            "torch/lib/liba.dll": (lib / "liba.dll").read_bytes(),
            "torch/lib/libb.dll": (lib / "libb.dll").read_bytes(),
        },
    )
    assert run(wl.context(b.prefix, system_root=win, path="")) == []
