"""Live mode is the same model (issue 14): every offline verdict of TC311-TC314 also comes out when the tool runs on
Windows itself. Where this cannot run Windows, a fake live host drives the live code paths: HostFacts(live=True)
with the System32 and PATH of the machine, and the running Windows' version from sys.getwindowsversion() (the
seam loader.windows.torch_plan.live_windows_version) instead of kernel32.dll's FileVersion."""

from __future__ import annotations

import shutil

import pytest

from conda_torchcheck.checks import run_checks
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.inventory import fs, load_environment
from conda_torchcheck.inventory.host import HostFacts
from conda_torchcheck.knowledge import load
from conda_torchcheck.loader.windows import torch_plan as windows_torch_plan
from tests.loader import windows_layouts as wl

pytestmark = pytest.mark.realdata
IDS = ["TC311", "TC312", "TC313", "TC314"]


def offline(prefix, win):
    return wl.context(prefix, system_root=win, path="")


def live(prefix, win):
    """The same machine seen from inside: live host facts, %SystemRoot% the Windows folder, PATH empty."""
    fs.clear_cache()
    environment, _host = load_environment(prefix, use_live_host=False, system_root=win)
    host = HostFacts(True, {"PATH": "", "SystemRoot": str(win)}, None, win, "live", None)
    return CheckContext(environment, host)


def verdicts(ctx) -> list[tuple[str, str, str]]:
    return sorted((f.id, f.severity.value, f.title.render("en")) for f in run_checks(ctx, only=IDS))


def windows7(win):
    (win / "System32" / "kernel32.dll").unlink()
    shutil.copy(wl.fixture("versioned/win7/kernel32.dll"), win / "System32" / "kernel32.dll")


def test_pyqt5_and_windows_7_offline_and_live(tmp_path, monkeypatch):
    base = wl.python_org_base(tmp_path / "Python311")
    venv = wl.venv_on(tmp_path, base)
    wl.install_torch(venv, "2.15.0")
    wl.install_pyqt5_qt5(venv)
    win = wl.fake_windows(tmp_path / "Windows", extra=wl.runtime_dlls("msvc-runtime-14.44").values())
    windows7(win)
    want = verdicts(offline(venv.prefix, win))
    assert [(v[0], v[1]) for v in want] == [("TC311", "warning"), ("TC314", "error")]
    # live: the OS version comes from the running Windows, not from kernel32.dll
    monkeypatch.setattr(windows_torch_plan, "live_windows_version", lambda: (6, 1, 7601))
    assert verdicts(live(venv.prefix, win)) == want
    monkeypatch.setattr(windows_torch_plan, "live_windows_version", lambda: (10, 0, 19045))
    assert [v[0] for v in verdicts(live(venv.prefix, win))] == ["TC311"]


def test_cuda_build_offline_and_live(tmp_path, monkeypatch):
    b = wl.windows_env(tmp_path)
    pkg = b.torch_package("2.4.0+cu124", cuda="12.4")
    cudart = next(wl.realdata.extract("nvidia-cuda-runtime-cu12-12.4-win", ("*.dll",)).rglob("cudart64_12.dll"))
    cudnn = load("windows_cuda")["cudnn"]["9"]
    for name in ["cudart64_12.dll", cudnn["main"], *cudnn["sublibraries"][1:]]:  # cudnn_graph64_9.dll missing
        wl.link_or_copy(cudart, pkg / "lib" / name)
    win = wl.fake_windows(tmp_path / "Windows")
    shutil.copy(wl.fixture("versioned/driver456/nvcuda.dll"), win / "System32" / "nvcuda.dll")
    want = verdicts(offline(b.prefix, win))
    assert [(v[0], v[1]) for v in want] == [("TC312", "warning"), ("TC313", "error")]
    monkeypatch.setattr(windows_torch_plan, "live_windows_version", lambda: (10, 0, 22631))
    assert verdicts(live(b.prefix, win)) == want
