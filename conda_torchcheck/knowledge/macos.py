"""macOS knowledge the checks use, typed (macos_dyld.toml; its header explains the sources): MPS's macOS and
torch minimums, the last x86_64 wheels, and the OpenMP runtimes and who bundles them. (The dyld rules in the
same file are the macOS loader's.)"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from conda_torchcheck.knowledge import load
from conda_torchcheck.knowledge.version import parse_version, release_key

SOURCE = "knowledge/macos_dyld.toml"


@dataclass(frozen=True)
class Mps:
    min_macos: str
    #: torch minor -> the macOS its MPS needs from that release on
    min_macos_by_torch: dict[str, str]
    min_torch: str
    arches: tuple[str, ...]
    rosetta_files: tuple[str, ...]
    source: str = SOURCE

    def needed_macos(self, torch_version: str | None) -> str:
        """The oldest macOS whose MPS this torch release can use."""
        needed = self.min_macos
        have = parse_version((torch_version or "").split("+", 1)[0])
        for release, macos_version in sorted(self.min_macos_by_torch.items(), key=lambda kv: release_key(kv[0])):
            if have is not None and have.release[:2] >= release_key(release)[:2]:
                needed = macos_version
        return needed


@functools.cache
def mps() -> Mps:
    row = load("macos_dyld")["mps"]
    return Mps(
        min_macos=row["min_macos"],
        min_macos_by_torch=dict(row.get("min_macos_by_torch", {})),
        min_torch=row["min_torch"],
        arches=tuple(row["arches"]),
        rosetta_files=tuple(row["rosetta_files"]),
    )


def last_x86_64_torch() -> str:
    """The last torch with macOS x86_64 wheels on PyPI."""
    return load("macos_dyld")["wheels"]["last_x86_64_torch"]


@functools.cache
def openmp_runtimes() -> frozenset[str]:
    return frozenset(load("macos_dyld")["openmp"]["runtimes"])


@functools.cache
def openmp_bundled() -> dict[str, str]:
    """Folder (relative to site-packages, or ``lib`` of a conda env) -> who ships the OpenMP runtime in it."""
    return dict(load("macos_dyld")["openmp"]["bundled"])
