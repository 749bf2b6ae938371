"""TC314: torch's DLLs import functions an old Windows lacks (Windows 7: CreateFile2 in torch >= 2.4's
torch_cpu.dll). Real torch wheels; kernel32.dll stand-ins with the FileVersion of Windows 7 SP1 / 10."""

from __future__ import annotations

import shutil

import pytest

from conda_torchcheck.checks import win_oldos
from conda_torchcheck.findings import Severity
from tests.loader import windows_layouts as wl

pytestmark = pytest.mark.realdata


def env_on(tmp_path, torch: str, kernel32: str):
    b = wl.torch_env(tmp_path, torch, "msvc-runtime-14.44")
    win = wl.fake_windows(tmp_path / "Windows")
    (win / "System32" / "kernel32.dll").unlink()
    shutil.copy(wl.fixture(f"versioned/{kernel32}/kernel32.dll"), win / "System32" / "kernel32.dll")
    return b, win


def test_windows_7_with_torch_2_15(tmp_path):
    b, win = env_on(tmp_path, "2.15.0", "win7")
    (f,) = win_oldos.CHECK.run(wl.context(b.prefix, system_root=win, path=""))
    assert (f.id, f.severity) == ("TC314", Severity.ERROR)
    assert f.evidence["windows"] == "Windows 7 6.1.7601"
    lacks = f.evidence["imports_it_lacks"]["torch_cpu.dll"]
    assert any("CreateFile2" in x for x in lacks) and any("CreateFileMappingFromApp" in x for x in lacks)
    text = f.explanation.render("en")
    assert "WinError 127" in text and "torch_cpu.dll" in text
    assert "Windows 7" in f.title.render("zh_CN")


@pytest.mark.parametrize(("torch", "kernel32"), [("2.3.0", "win7"), ("2.15.0", "win10")])
def test_silent_when_the_os_has_every_function(tmp_path, torch, kernel32):
    b, win = env_on(tmp_path, torch, kernel32)
    assert list(win_oldos.CHECK.run(wl.context(b.prefix, system_root=win, path=""))) == []


def test_unknown_os_version_is_not_judged(tmp_path):
    b = wl.torch_env(tmp_path, "2.15.0")
    assert list(win_oldos.CHECK.run(wl.context(b.prefix, path=""))) == []
