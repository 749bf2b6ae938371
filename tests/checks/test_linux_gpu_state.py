"""TC506 (kernel module and user-space driver of different releases) and TC507 (device files this user cannot
open), read from a fake machine root; the healthy twins stay silent."""

from __future__ import annotations

import pytest

from conda_torchcheck.checks import linux_gpu_state
from tests.checks.test_cuda_driver import PROC_VERSION
from tests.loader.linux_layouts import context, minitorch_env, run_ids


@pytest.fixture
def cuda_env(make_env):
    builder = make_env(layout="venv")
    minitorch_env(builder, cuda="12.6")
    return builder


def driver(root, module: str, library: str):
    proc = root / "proc" / "driver" / "nvidia" / "version"
    proc.parent.mkdir(parents=True, exist_ok=True)
    proc.write_text(PROC_VERSION.format(v=module))
    lib = root / "usr" / "lib" / "x86_64-linux-gnu"
    lib.mkdir(parents=True, exist_ok=True)
    (lib / f"libcuda.so.{library}").write_bytes(b"\x7fELF")
    (lib / "libcuda.so.1").symlink_to(f"libcuda.so.{library}")


def test_a_driver_updated_without_a_reboot_is_named(root, cuda_env):
    driver(root, "550.54.14", "550.120")
    [f] = run_ids(context(cuda_env.prefix), "TC506")
    assert f.severity.value == "error"
    assert f.evidence == {
        "kernel_module": "550.54.14 (/proc/driver/nvidia/version)",
        "user_space_driver": "550.120 (/usr/lib/x86_64-linux-gnu/libcuda.so.550.120)",
    }
    assert f.fixes[0].needs_admin and "Reboot" in f.fixes[0].summary.render()


def test_the_same_release_twice_is_silent(root, cuda_env):
    driver(root, "550.120", "550.120")
    assert run_ids(context(cuda_env.prefix), "TC506") == []


def test_a_cpu_build_is_not_asked(root, make_env):
    b = make_env(layout="venv")
    minitorch_env(b, cuda=None)
    driver(root, "550.54.14", "550.120")
    assert run_ids(context(b.prefix), "TC506") == []


@pytest.mark.parametrize(("variant", "files"), [("cuda", ["/dev/nvidiactl", "/dev/nvidia0"]), ("rocm", ["/dev/kfd"])])
def test_device_files_this_user_cannot_open(tmp_path, monkeypatch, variant, files):
    for rel in files:
        (tmp_path / rel.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel.lstrip("/")).write_bytes(b"")
    if variant == "rocm":
        (tmp_path / "dev" / "dri").mkdir()
        (tmp_path / "dev" / "dri" / "renderD128").write_bytes(b"")
        files = [*files, "/dev/dri/renderD128"]
    monkeypatch.setattr(linux_gpu_state.os, "access", lambda path, mode: False)
    [f] = list(linux_gpu_state._device_access(tmp_path, variant))
    assert f.id == "TC507" and f.evidence["cannot_open"] == files
    assert ("render,video" in f.fixes[0].summary.render()) == (variant == "rocm")
    monkeypatch.setattr(linux_gpu_state.os, "access", lambda path, mode: True)
    assert list(linux_gpu_state._device_access(tmp_path, variant)) == []
