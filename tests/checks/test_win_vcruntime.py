"""TC302: the VC++ runtime copy that wins in the process is too old (torch >= 2.9: 1114) or older than the toolset."""

from __future__ import annotations

import struct

import pytest

from conda_torchcheck.checks import win_vcruntime
from conda_torchcheck.findings import Severity
from tests.loader import windows_layouts as wl

pytestmark = pytest.mark.realdata


def run(ctx):
    return list(win_vcruntime.CHECK.run(ctx))


def with_file_version(src, dst, major: int, minor: int) -> None:
    """A copy of a real runtime DLL whose VS_FIXEDFILEINFO says ``major.minor`` (nothing else changes)."""
    data = bytearray(src.read_bytes())
    sig = data.find(b"\xbd\x04\xef\xfe", data.find("VS_VERSION_INFO".encode("utf-16-le")))
    struct.pack_into("<I", data, sig + 8, (major << 16) | minor)
    dst.parent.mkdir(parents=True, exist_ok=True)
    if dst.exists():
        dst.unlink()
    dst.write_bytes(bytes(data))


def test_old_env_runtime_wins_over_new_system_one(tmp_path):
    b = wl.windows_env(tmp_path)
    wl.install_torch(b, "2.15.0")
    wl.install_runtime(b.prefix, "msvc-runtime-14.34")
    win = wl.fake_windows(tmp_path / "Windows", extra=wl.runtime_dlls("msvc-runtime-14.44").values())
    (f,) = run(wl.context(b.prefix, system_root=win, path=""))
    assert (f.id, f.severity) == ("TC302", Severity.ERROR)
    assert f.evidence["msvcp140_loaded"] == str(b.prefix / "msvcp140.dll")
    assert f.evidence["version"] == "14.34.31931.0"
    assert f.evidence["torch_built_with"] == "14.42"
    assert "c10.dll" in f.explanation.render("en") and "WinError 1114" in f.explanation.render("en")
    kinds = [(fix.kind, fix.needs_admin) for fix in f.fixes]
    assert ("conda", False) in kinds
    assert all(not admin for _kind, admin in kinds)  # a system redistributable would not help this env
    assert any('"torch<2.9"' in c for fix in f.fixes for c in fix.commands)


def test_venv_judged_on_system32_copy(tmp_path):
    base = wl.python_org_base(tmp_path / "Python311")
    venv = wl.venv_on(tmp_path, base)
    wl.install_torch(venv, "2.15.0")
    win = wl.fake_windows(tmp_path / "Windows", extra=wl.runtime_dlls("msvc-runtime-14.34").values())
    (f,) = run(wl.context(venv.prefix, system_root=win, path=""))
    assert f.evidence["msvcp140_loaded"] == str(win / "System32" / "msvcp140.dll")
    redist = next(fix for fix in f.fixes if fix.kind == "system")
    assert redist.needs_admin and redist.commands == ("https://aka.ms/vc14/vc_redist.x64.exe",)


def test_older_than_toolset_is_a_warning(tmp_path):
    b = wl.windows_env(tmp_path)
    wl.install_torch(b, "2.15.0")
    wl.install_runtime(b.prefix, "msvc-runtime-14.42")
    with_file_version(wl.runtime_dlls("msvc-runtime-14.42")["msvcp140.dll"], b.prefix / "msvcp140.dll", 14, 41)
    win = wl.fake_windows(tmp_path / "Windows")
    (f,) = run(wl.context(b.prefix, system_root=win, path=""))
    assert (f.id, f.severity, f.title.key) == ("TC302", Severity.WARNING, "TC302.toolset.title")


@pytest.mark.parametrize(("version", "runtime"), [("2.15.0", "msvc-runtime-14.42"), ("2.3.0", "msvc-runtime-14.34")])
def test_new_enough_runtime_is_silent(tmp_path, version, runtime):
    b = wl.windows_env(tmp_path)
    wl.install_torch(b, version)
    wl.install_runtime(b.prefix, runtime)
    win = wl.fake_windows(tmp_path / "Windows")
    assert run(wl.context(b.prefix, system_root=win, path="")) == []


def test_unknown_system_runtime_is_not_judged(tmp_path):
    b = wl.windows_env(tmp_path)
    wl.install_torch(b, "2.15.0")
    assert run(wl.context(b.prefix)) == []  # TC310 says it depends on System32
