"""CUDA knowledge, typed: the NVIDIA driver each CUDA family and toolkit needs (cuda_driver.toml, [NV] NVIDIA's
CUDA Toolkit Release Notes, Table 3, and the minor-version compatibility page), the GPU architectures compiled
into official wheels and the compute capability of common GPUs (cuda_arch.toml, [REL] and [NV])."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from conda_torchcheck.knowledge import load

DRIVER_SOURCE = "[NV] CUDA Toolkit Release Notes, Table 3; docs.nvidia.com/deploy/cuda-compatibility"
ARCH_SOURCE = "[REL] pytorch/pytorch RELEASE.md, PyTorch CUDA Support Matrix"
GPU_SOURCE = "[NV] developer.nvidia.com/cuda-gpus"


@dataclass(frozen=True)
class DriverMinimum:
    """The oldest driver that runs a CUDA family ("12": minor-version compatibility) or toolkit ("12.6")."""

    cuda: str
    linux: str | None
    windows: str | None
    source: str = DRIVER_SOURCE

    def on(self, os_name: str) -> str | None:
        return self.linux if os_name == "linux" else self.windows if os_name == "windows" else None


@dataclass(frozen=True)
class ArchBuild:
    """The compute capabilities one official wheel build has kernels for, and the one shipped as PTX."""

    torch_minor: str
    tag: str
    aarch64: bool
    archs: tuple[str, ...]
    ptx: str | None
    source: str = ARCH_SOURCE


def _minimums(section: str) -> dict[str, DriverMinimum]:
    return {
        cuda: DriverMinimum(cuda=cuda, linux=row.get("linux"), windows=row.get("windows"))
        for cuda, row in load("cuda_driver")[section].items()
    }


@functools.cache
def family_minimums() -> dict[str, DriverMinimum]:
    """CUDA major -> the driver minimum of minor-version compatibility."""
    return _minimums("family_minimum")


@functools.cache
def toolkit_drivers() -> dict[str, DriverMinimum]:
    """CUDA toolkit version -> the driver it shipped with (full support, PTX JIT of its own PTX)."""
    return _minimums("toolkit_driver")


def family_minimum(family: str, os_name: str) -> str | None:
    row = family_minimums().get(family)
    return row.on(os_name) if row else None


def toolkit_driver(version: str, os_name: str) -> str | None:
    row = toolkit_drivers().get(version)
    return row.on(os_name) if row else None


def arch_build(torch_minor: str | None, tag: str, *, aarch64: bool = False) -> ArchBuild | None:
    """The documented architecture list of one build; None where the sources document none."""
    row = load("cuda_arch").get("builds_aarch64" if aarch64 else "builds", {}).get(torch_minor or "", {}).get(tag)
    if row is None:
        return None
    return ArchBuild(torch_minor or "", tag, aarch64, tuple(row["archs"]), row.get("ptx"))


@functools.cache
def gpu_capabilities() -> dict[str, str]:
    """GPU model name -> compute capability ("RTX 4090" -> "8.9")."""
    return dict(load("cuda_arch")["gpus"])


def arch_suggestion(major: str) -> str | None:
    """What to install for a GPU of this compute-capability major that a build lacks."""
    return load("cuda_arch").get("suggest", {}).get(major)
