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


def _driver_key(version: str) -> tuple[int, ...]:
    from conda_torchcheck.knowledge.version import release_key

    return release_key(version)


def driver_runs_cuda(driver: str, cuda: str, os_name: str | None = None) -> bool | None:
    """Does NVIDIA driver ``driver`` (410.104) run a build for CUDA ``cuda`` (10.2)? Before CUDA 11 each toolkit
    needs its own driver (Table 3); from 11 on the family minimum runs every minor of the family (minor-version
    compatibility), and a driver at or past the toolkit's own runs it fully. None when the tables do not decide:
    between the family minimum and the toolkit's driver (PTX JIT and some features need the newer one), an
    unknown release, or an OS not given on which the Linux and Windows numbers disagree."""
    parts = cuda.split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        return None
    minor = ".".join(parts[:2])
    have = _driver_key(driver)
    if not have:
        return None
    answers = set()
    for os_try in (os_name,) if os_name in ("linux", "windows") else ("linux", "windows"):
        own = toolkit_driver(minor, os_try)
        if int(parts[0]) >= 11:
            family = family_minimum(parts[0], os_try)
            if family is not None and have < _driver_key(family):
                answers.add(False)
            elif own is not None and have >= _driver_key(own):
                answers.add(True)
            else:
                answers.add(None)
        else:
            answers.add(None if own is None else have >= _driver_key(own))
    return answers.pop() if len(answers) == 1 else None
