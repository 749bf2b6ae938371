"""Linux library knowledge, typed (linux_libraries.toml; its header explains the sources): which GCC release
first provides a GLIBCXX/CXXABI symbol version, which conda, apt and NVIDIA pip package provides a soname, and
the OpenMP runtimes by family."""

from __future__ import annotations

import fnmatch
import functools

from conda_torchcheck.knowledge import load

SOURCE = "knowledge/linux_libraries.toml"


def gcc_for_symbol_version(version: str) -> str | None:
    """``GLIBCXX_3.4.30`` -> ``12.1.0``: the GCC release whose libstdc++ first defines it."""
    return load("linux_libraries")["glibcxx_to_gcc"].get(version)


def conda_package_for(soname: str) -> str | None:
    """The conda package that ships a library (``libstdc++.so.6`` -> libstdcxx-ng; ``libcudnn*`` patterns)."""
    for pattern, package in load("linux_libraries")["conda_package"].items():
        if soname == pattern or ("*" in pattern and fnmatch.fnmatchcase(soname, pattern)):
            return package
    return None


def apt_package_for(soname: str) -> str | None:
    return load("linux_libraries")["apt_package"].get(soname)


@functools.cache
def _nvidia_by_longest_prefix() -> tuple[tuple[str, tuple[str, str]], ...]:
    rows = load("linux_libraries")["nvidia"].items()
    return tuple((prefix, (base, folder)) for prefix, (base, folder) in sorted(rows, key=lambda kv: -len(kv[0])))


def nvidia_base_for(soname: str) -> tuple[str, str] | None:
    """``libnccl.so.2`` -> (``nvidia-nccl``, ``nccl``): the pip package base name and nvidia/<folder>."""
    for prefix, found in _nvidia_by_longest_prefix():
        if soname.startswith(prefix):
            return found
    return None


@functools.cache
def openmp_families() -> dict[str, tuple[str, ...]]:
    """OpenMP runtime family (gnu, intel, llvm) -> the library name prefixes of its runtimes."""
    return {family: tuple(prefixes) for family, prefixes in load("linux_libraries")["openmp"].items()}


class WslLayout:
    """Where WSL keeps the Windows driver's CUDA bridge, and where a Linux driver's libcuda would be (paths
    relative to the machine's root) [WSL]."""

    __slots__ = ("bridge", "kernel_release_file", "libcuda", "linux_driver_dirs")

    def __init__(self, bridge: str, libcuda: str, linux_driver_dirs: tuple[str, ...], kernel_release_file: str):
        self.bridge = bridge
        self.libcuda = libcuda
        self.linux_driver_dirs = linux_driver_dirs
        self.kernel_release_file = kernel_release_file


@functools.cache
def wsl_layout() -> WslLayout:
    row = load("linux_libraries")["wsl"]
    return WslLayout(row["bridge"], row["libcuda"], tuple(row["linux_driver_dirs"]), row["kernel_release_file"])
