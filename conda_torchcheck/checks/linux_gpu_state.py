"""TC506/TC507: the GPU driver is there, but this process cannot use it.

TC506: the NVIDIA kernel module that is loaded (``/proc/driver/nvidia/version``) and the user-space driver that
``libcuda.so.1`` resolves to (``libcuda.so.<version>``) are different releases, as after a driver update without a
reboot or in a container that installed its own driver libraries: CUDA fails with error 803 ("system has
unsupported display driver / cuda driver combination") and nvidia-smi with "Driver/library version mismatch".

TC507: the device files exist but this user cannot open them (``/dev/nvidiactl``, ``/dev/nvidia0`` for NVIDIA;
``/dev/kfd`` and ``/dev/dri/renderD*`` for ROCm, whose users must be in the render and video groups). Only on this
machine: whether another machine's user may open its files cannot be read from a copy."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from conda_torchcheck.checks import Check
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.cuda_driver import DRIVER_VERSION, machine_root
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory import fs
from conda_torchcheck.messages import msg

#: where a distribution's NVIDIA driver puts libcuda.so.1 (the link to libcuda.so.<version>), in search order
_LIBCUDA_DIRS = ("usr/lib/x86_64-linux-gnu", "usr/lib64", "usr/lib/aarch64-linux-gnu", "usr/lib", "lib64")
#: the device files each GPU stack opens (NVIDIA: control and first device; ROCm: the compute driver)
_DEVICES = {"cuda": ("dev/nvidiactl", "dev/nvidia0"), "rocm": ("dev/kfd",)}


def run(ctx: CheckContext) -> Iterator[Finding]:
    variant = ctx.torch.variant
    root = machine_root(ctx)
    if variant not in ("cuda", "rocm") or root is None:
        return
    if variant == "cuda":
        yield from _version_mismatch(root)
    if root == Path("/") and ctx.host.live and ctx.host.system_root is None:
        yield from _device_access(root, variant)


def _version_mismatch(root: Path) -> Iterator[Finding]:
    try:
        text = fs.read_text(root / "proc" / "driver" / "nvidia" / "version", fs.SMALL_LIMIT)
    except OSError:
        return
    m = DRIVER_VERSION.search(text.split("\n", 1)[0])
    if not m:
        return
    module = m.group(1)
    for folder in _LIBCUDA_DIRS:
        link = root / folder / "libcuda.so.1"
        try:
            if not link.exists():
                continue
            target = os.path.basename(os.path.realpath(link))
        except OSError:
            continue
        found = re.fullmatch(r"libcuda\.so\.(\d{3,4}\.\d+(?:\.\d+)?)", target)
        if found is None:
            return  # a libcuda.so.1 that names no version (a copy, WSL's bridge): nothing to compare
        library = found.group(1)
        if library != module:
            yield finding(
                "TC506",
                Severity.ERROR,
                module=module,
                library=library,
                evidence={
                    "kernel_module": f"{module} (/proc/driver/nvidia/version)",
                    "user_space_driver": f"{library} (/{folder}/{target})",
                },
                fixes=[Fix("system", msg("TC506.fix"), needs_admin=True)],
            )
        return


def _device_access(root: Path, variant: str) -> Iterator[Finding]:
    refused = []
    for rel in _DEVICES[variant]:
        path = root / rel
        if path.exists() and not os.access(path, os.R_OK | os.W_OK):
            refused.append("/" + rel)
    if variant == "rocm":
        render = sorted((root / "dev" / "dri").glob("renderD*")) if (root / "dev" / "dri").is_dir() else []
        refused += ["/" + str(p.relative_to(root)) for p in render if not os.access(p, os.R_OK | os.W_OK)]
    if refused:
        key = "TC507.fix_rocm" if variant == "rocm" else "TC507.fix_nvidia"
        yield finding(
            "TC507",
            Severity.ERROR,
            files=", ".join(refused),
            evidence={"cannot_open": refused, "groups": _group_names()},
            fixes=[Fix("system", msg(key), needs_admin=True)],
        )


def _group_names() -> list[str]:
    try:
        import grp

        return sorted({grp.getgrgid(g).gr_name for g in os.getgroups()})
    except (ImportError, KeyError, OSError):
        return []


CHECK = Check.declared(__name__, run)
