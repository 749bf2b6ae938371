"""TC504: a server-ARM (SBSA) CUDA build of torch on an NVIDIA Jetson.

PyPI's and download.pytorch.org's aarch64 CUDA wheels (``+cu12x``, with the ``nvidia-*`` runtime wheels) are
built for SBSA machines (Grace, server ARM) and the standard CUDA toolkit. A Jetson before Thor (Xavier, Orin:
L4T R32-R36, JetPack 4-6) runs the L4T CUDA stack instead: such a torch imports, but its CUDA kernels fail
("named symbol not found", "no kernel image", "CUDA driver version is insufficient"); NVIDIA's JetPack wheels
are the builds for it. Jetson Thor (L4T R38, JetPack 7) is SBSA-compliant and runs the standard wheels.

The machine is a Jetson when ``/etc/nv_tegra_release`` or ``/proc/device-tree/model`` says so, read on the
machine the env runs on: this one (live) or the root given as ``--system-root``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from conda_torchcheck.checks import Check
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.cuda_driver import machine_root
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.lazy_re import LazyPattern
from conda_torchcheck.messages import msg
from conda_torchcheck.records import Record

#: the first L4T release whose CUDA stack is SBSA (Jetson Thor, JetPack 7)
SBSA_L4T = 38
_RELEASE = LazyPattern(r"#\s*R(\d+)\s*\(release\),\s*REVISION:\s*([\d.]+)")


class Jetson(Record):
    __slots__ = ("model", "l4t", "source")

    def __init__(self, model: str | None, l4t: str | None, source: str) -> None:
        self.model = model
        #: "36.4.0"
        self.l4t = l4t
        self.source = source

    @property
    def sbsa(self) -> bool:
        if self.l4t is not None:
            return int(self.l4t.split(".")[0]) >= SBSA_L4T
        return bool(self.model and "thor" in self.model.lower())


def read_jetson(root: Path) -> Jetson | None:
    model = None
    try:
        model = (root / "proc" / "device-tree" / "model").read_bytes().decode("utf-8", "replace").strip("\0 \n")
    except OSError:
        pass
    try:
        text = (root / "etc" / "nv_tegra_release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = None
    if text is not None:
        m = _RELEASE.search(text)
        l4t = f"{m.group(1)}.{m.group(2)}" if m else None
        return Jetson(model if model and "jetson" in model.lower() else None, l4t, "/etc/nv_tegra_release")
    if model and "jetson" in model.lower():
        return Jetson(model, None, "/proc/device-tree/model")
    return None


def is_sbsa_cuda_wheel(ctx: CheckContext) -> bool:
    """A pip CUDA torch from PyPI or download.pytorch.org (``+cu12x`` or none); NVIDIA's JetPack wheels carry
    their own local versions (``2.5.0a0+872d972e41.nv24.08``)."""
    t = ctx.torch
    if t.source not in ("pip", "pip-over-conda") or t.variant != "cuda" or t.dist is None:
        return False
    local = t.dist.local_version
    return local is None or re.fullmatch(r"cu\d+", local) is not None


def run(ctx: CheckContext) -> Iterator[Finding]:
    root = machine_root(ctx)
    if root is None or ctx.env.python.arch != "aarch64" or not is_sbsa_cuda_wheel(ctx):
        return
    jetson = ctx.memo("jetson", lambda: read_jetson(root))
    if jetson is None or jetson.sbsa:
        return
    t = ctx.torch
    nvidia = [f"{d.raw_name} {d.version}" for d in ctx.env.distributions if d.name.startswith("nvidia-")]
    model = jetson.model or "NVIDIA Jetson"
    yield finding(
        "TC504",
        Severity.WARNING,
        torch=t.version or "?",
        model=model,
        l4t=jetson.l4t or "?",
        evidence={
            "machine": model,
            "l4t": jetson.l4t,
            "read_from": jetson.source,
            "torch": f"{t.version} ({t.source}, CUDA {t.cuda_version})",
            "sbsa_cuda_wheels": nvidia,
        },
        fixes=[Fix("pip", msg("TC504.fix.jetpack"))],
    )


CHECK = Check.declared(__name__, run)
