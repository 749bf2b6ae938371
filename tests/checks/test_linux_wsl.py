"""TC505 and the driver on WSL, read from a fake machine root: WSL 2's Windows driver is found through
/usr/lib/wsl/lib (no "no driver" note), WSL 1 and a WSL 2 without the bridge are named, and a Linux driver
installed inside WSL 2 is named with the dpkg packages that own it (issue 24's WSL2 layout)."""

from __future__ import annotations

import pytest

from conda_torchcheck.checks import linux_wsl
from conda_torchcheck.loader.ldcache import LdCache
from tests.loader.linux_layouts import context, minitorch_env, run_ids

WSL2 = "5.15.167.4-microsoft-standard-WSL2\n"
WSL1 = "4.4.0-19041-Microsoft\n"


def machine(root, release, *, bridge=True, linux_driver=False, owner="libnvidia-compute-550"):
    p = root / "proc" / "sys" / "kernel" / "osrelease"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(release)
    if bridge:
        lib = root / "usr" / "lib" / "wsl" / "lib"
        lib.mkdir(parents=True)
        (lib / "libcuda.so.1.1").write_bytes(b"\x7fELF")
        (lib / "libcuda.so.1").symlink_to("libcuda.so.1.1")
        (lib / "libnvidia-ml.so.1").write_bytes(b"\x7fELF")
    if linux_driver:
        lib = root / "usr" / "lib" / "x86_64-linux-gnu"
        lib.mkdir(parents=True, exist_ok=True)
        (lib / "libcuda.so.550.120").write_bytes(b"\x7fELF")
        (lib / "libcuda.so.1").symlink_to("libcuda.so.550.120")
        info = root / "var" / "lib" / "dpkg" / "info"
        info.mkdir(parents=True, exist_ok=True)
        (info / f"{owner}:amd64.list").write_text(
            "/.\n/usr\n/usr/lib/x86_64-linux-gnu/libcuda.so.1\n/usr/lib/x86_64-linux-gnu/libcuda.so.550.120\n"
        )
        (info / "zlib1g:amd64.list").write_text("/usr/lib/x86_64-linux-gnu/libcuda.so.1\n")  # never read


@pytest.fixture
def cuda_env(make_env):
    builder = make_env(layout="venv")
    minitorch_env(builder, cuda="12.6")
    return builder


def test_wsl2_with_the_windows_driver_is_clean(root, cuda_env):
    machine(root, WSL2)
    assert run_ids(context(cuda_env.prefix), "TC501", "TC502", "TC503", "TC505") == []


def test_native_linux_without_a_driver_still_gets_tc502(root, cuda_env):
    assert [f.id for f in run_ids(context(cuda_env.prefix), "TC502", "TC505")] == ["TC502"]


def test_wsl1_has_no_gpu(root, cuda_env):
    machine(root, WSL1, bridge=False)
    [f] = run_ids(context(cuda_env.prefix), "TC502", "TC505")
    assert (f.id, f.severity.value) == ("TC505", "warning") and "WSL 1" in f.title.render()
    assert "wsl --set-version" in f.fixes[0].summary.render()


def test_wsl2_without_the_bridge_names_the_windows_driver(root, cuda_env):
    machine(root, WSL2, bridge=False)
    [f] = run_ids(context(cuda_env.prefix), "TC502", "TC505")
    assert f.id == "TC505" and f.evidence["missing"] == "/usr/lib/wsl/lib/libcuda.so.1"
    assert "on Windows (not inside WSL)" in f.fixes[0].summary.render()


def test_a_linux_driver_inside_wsl2_is_named_with_its_packages(root, cuda_env):
    machine(root, WSL2, linux_driver=True)
    [f] = run_ids(context(cuda_env.prefix), "TC505")
    assert f.severity.value == "warning"  # which copy ld.so finds first was not read (not this machine)
    assert f.evidence["linux_driver_copies"] == ["/usr/lib/x86_64-linux-gnu/libcuda.so.1"]
    assert f.evidence["installed_by"] == ["libnvidia-compute-550"]
    assert f.fixes[0].commands == ("sudo apt-get remove --purge libnvidia-compute-550", "sudo ldconfig")
    assert f.fixes[0].needs_admin


def test_the_linux_copy_first_in_ld_so_cache_is_an_error(root, cuda_env, monkeypatch):
    machine(root, WSL2, linux_driver=True)
    monkeypatch.setattr(linux_wsl, "_cache_winner", lambda ctx, root: "/usr/lib/x86_64-linux-gnu/libcuda.so.1")
    [f] = run_ids(context(cuda_env.prefix), "TC505")
    assert f.severity.value == "error" and f.evidence["found_first"].startswith("/usr/lib/x86_64-linux-gnu/")


def test_a_link_into_the_bridge_is_not_a_linux_driver(root, cuda_env):
    machine(root, WSL2)
    lib = root / "usr" / "lib" / "x86_64-linux-gnu"
    lib.mkdir(parents=True)
    (lib / "libcuda.so.1").symlink_to(root / "usr" / "lib" / "wsl" / "lib" / "libcuda.so.1")
    assert run_ids(context(cuda_env.prefix), "TC505") == []


def test_the_cache_winner_is_read_from_the_simulated_imports_cache(monkeypatch):
    from pathlib import Path
    from types import SimpleNamespace

    cache = LdCache("/etc/ld.so.cache", {"libcuda.so.1": "/usr/lib/wsl/lib/libcuda.so.1"})
    load = SimpleNamespace(search=SimpleNamespace(cache=cache))
    monkeypatch.setattr("conda_torchcheck.loader.linux.torch_load", lambda ctx: load)
    ctx = SimpleNamespace(host=SimpleNamespace(live=True, system_root=None))
    assert linux_wsl._cache_winner(ctx, Path("/")) == "/usr/lib/wsl/lib/libcuda.so.1"
    assert linux_wsl._cache_winner(ctx, Path("/mnt/other-root")) is None
