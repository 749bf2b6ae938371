"""TC505: a CUDA build of torch on WSL, where the GPU is the Windows driver's.

On WSL 2 the only NVIDIA driver is the Windows one: its CUDA library appears in the distribution as
``/usr/lib/wsl/lib/libcuda.so.1``. A Linux NVIDIA driver installed inside the distribution anyway (apt's
``nvidia-driver-*``, ``libnvidia-compute-*``, or the ``cuda`` meta-package, which pulls ``cuda-drivers``) puts
another ``libcuda.so.1`` into the system's library folders; when ld.so finds that one first, CUDA fails to
initialise (no device, "CUDA driver version is insufficient"). WSL 1 has no GPU access at all, and WSL 2 without
the bridge has a Windows driver without WSL support (knowledge/linux_libraries.toml [WSL])."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator
from pathlib import Path

from conda_torchcheck.checks import Check
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.cuda_driver import machine_root
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory import fs
from conda_torchcheck.inventory.wsl import bridge_libcuda, wsl_version
from conda_torchcheck.knowledge.linux import wsl_layout
from conda_torchcheck.messages import msg

#: dpkg file lists that may own a Linux driver's libcuda (read only these, not every package's list)
_DRIVER_LISTS = ("libnvidia-compute-*.list", "nvidia-driver-*.list", "libcuda1*.list", "nvidia-*-libs*.list")


def run(ctx: CheckContext) -> Iterator[Finding]:
    torch = ctx.torch
    root = machine_root(ctx)
    if torch.variant != "cuda" or root is None:
        return
    version = wsl_version(root)
    if version is None:
        return
    if version == 1:
        release = _release(root)
        fixes = [Fix("system", msg("TC505.wsl1.fix"))]
        yield finding(
            "TC505", Severity.WARNING, variant="wsl1", kernel=release, evidence={"kernel": release}, fixes=fixes
        )
        return
    bridge = bridge_libcuda(root)
    if bridge is None:
        yield finding(
            "TC505",
            Severity.WARNING,
            variant="no_bridge",
            cuda=torch.cuda_version or "?",
            evidence={"kernel": _release(root), "missing": "/" + wsl_layout().bridge + "/" + wsl_layout().libcuda},
            fixes=[Fix("system", msg("TC505.no_bridge.fix"), needs_admin=True)],
        )
        return
    linux = _linux_driver_copies(root)
    if not linux:
        return
    winner = _cache_winner(ctx, root)
    owners = _dpkg_owners(root, linux)
    linux_first = winner is not None and not winner.startswith("/" + wsl_layout().bridge)
    evidence = {
        "windows_driver": "/" + str(bridge.relative_to(root)),
        "linux_driver_copies": ["/" + str(p.relative_to(root)) for p in linux],
        "found_first": winner or "not determined (the machine's ld.so.cache was not read)",
    }
    if owners:
        evidence["installed_by"] = owners
    commands = (f"sudo apt-get remove --purge {' '.join(owners)}", "sudo ldconfig") if owners else ()
    yield finding(
        "TC505",
        Severity.ERROR if linux_first else Severity.WARNING,
        variant="linux_driver",
        copies=", ".join(evidence["linux_driver_copies"]),
        evidence=evidence,
        fixes=[Fix("system", msg("TC505.linux_driver.fix"), commands=commands, needs_admin=True)],
    )


def _release(root: Path) -> str:
    try:
        return fs.read_text(root / wsl_layout().kernel_release_file, fs.SMALL_LIMIT).strip() or "?"
    except OSError:
        return "not readable"


def _linux_driver_copies(root: Path) -> list[Path]:
    """``libcuda.so.1`` files in the system's library folders that are not links into WSL's bridge."""
    layout = wsl_layout()
    bridge = (root / layout.bridge).resolve()
    found = []
    for folder in layout.linux_driver_dirs:
        path = root / folder / layout.libcuda
        try:
            if not path.exists():
                continue
            target = path.resolve()
        except OSError:
            continue
        if bridge not in target.parents:
            found.append(path)
    return found


def _cache_winner(ctx: CheckContext, root: Path) -> str | None:
    """The libcuda.so.1 ld.so.cache gives first, when the machine is this one (None: another machine's root, or
    the cache could not be read). The cache is the one the simulated import already read."""
    if root != Path("/") or not ctx.host.live or ctx.host.system_root is not None:
        return None
    from conda_torchcheck.loader import linux

    load = linux.torch_load(ctx)
    cache = load.search.cache if load is not None else None
    return cache.lookup(wsl_layout().libcuda) if cache is not None else None


def _dpkg_owners(root: Path, copies: list[Path]) -> list[str]:
    """The Debian/Ubuntu packages whose file lists name the copies (only the driver packages' lists are read)."""
    info = root / "var" / "lib" / "dpkg" / "info"
    try:
        names = sorted(os.listdir(info))
    except OSError:
        return []
    wanted = {"/" + str(p.relative_to(root)) for p in copies}
    owners = []
    for name in names:
        if not any(fnmatch.fnmatchcase(name, pattern) for pattern in _DRIVER_LISTS):
            continue
        try:
            listed = set(fs.read_text(info / name, fs.SMALL_LIMIT).splitlines())
        except OSError:
            continue
        if listed & wanted:
            owners.append(name.removesuffix(".list").split(":", 1)[0])
    return owners


CHECK = Check.declared(__name__, run)
