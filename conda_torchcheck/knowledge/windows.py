"""Windows knowledge, typed: OS releases and the functions torch's DLLs import that old ones lack
(windows_os.toml), cuDNN's sub-libraries (windows_cuda.toml), DLLs other packages bring into torch's process
(windows_foreign.toml), and the C++ runtime torch needs (windows_vc_runtime.toml). Each row keeps the source
keys its file's header explains."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from conda_torchcheck.knowledge import load
from conda_torchcheck.knowledge.version import parse_version, release_key


@dataclass(frozen=True)
class OsFunction:
    """A function torch's DLLs import that Windows releases before ``since`` lack."""

    dll: str
    name: str
    since: tuple[int, ...]
    source: str


@dataclass(frozen=True)
class CudnnLibraries:
    major: str
    main: str
    sublibraries: tuple[str, ...]
    error: str
    source: str


@dataclass(frozen=True)
class ForeignPackage:
    """A package that loads DLLs of its own into the process (PyQt5's Qt5\\bin ...)."""

    name: str
    import_name: str | None
    adds: str | None
    source: str
    raw: dict


@dataclass(frozen=True)
class RuntimeMinimum:
    """The oldest copy of a C++ runtime DLL a torch release works with."""

    torch: str  # a PEP 440 specifier
    dll: str
    version: str
    error: int | None
    source: str


def os_name(version: tuple[int, ...]) -> str:
    """(6, 1) -> "Windows 7"."""
    names = load("windows_os")["names"]
    return names.get(f"{version[0]}.{version[1]}", f"Windows {version[0]}.{version[1]}")


@functools.cache
def os_functions() -> tuple[OsFunction, ...]:
    return tuple(
        OsFunction(dll=row["dll"], name=row["name"], since=release_key(row["since"]), source=row.get("source", ""))
        for row in load("windows_os")["function"]
    )


def last_torch_without_new_os_functions() -> str:
    """The last torch minor whose DLLs import none of ``os_functions()`` (runs on Windows 7)."""
    return load("windows_os")["last_without"]


@functools.cache
def cudnn_libraries() -> tuple[CudnnLibraries, ...]:
    return tuple(
        CudnnLibraries(major, row["main"], tuple(row["sublibraries"]), row["error"], row.get("source", ""))
        for major, row in load("windows_cuda")["cudnn"].items()
    )


@functools.cache
def foreign_packages() -> dict[str, ForeignPackage]:
    """Normalized distribution name -> how it loads its DLLs."""
    return {
        name: ForeignPackage(name, row.get("import_name"), row.get("adds"), row.get("source", ""), row)
        for name, row in load("windows_foreign")["packages"].items()
    }


@functools.cache
def versioned_dll_prefixes() -> tuple[str, ...]:
    """DLL base names whose copies are told apart by their file version (msvcp140, cudart64_ ...)."""
    return tuple(load("windows_foreign")["versioned_prefixes"])


@functools.cache
def runtime_minimums() -> tuple[RuntimeMinimum, ...]:
    return tuple(
        RuntimeMinimum(row["torch"], row["dll"].lower(), row["version"], row.get("error"), row.get("source", ""))
        for row in load("windows_vc_runtime").get("minimum", [])
    )


def runtime_minimum(dll: str, torch_version: str | None) -> str | None:
    """The oldest ``dll`` (msvcp140.dll) this torch works with, when the table says (torch >= 2.9: 14.40)."""
    have = parse_version((torch_version or "").split("+", 1)[0]) or parse_version("0")
    for row in runtime_minimums():
        try:
            if row.dll == dll.lower() and SpecifierSet(row.torch).contains(have, prereleases=True):
                return row.version
        except InvalidSpecifier:  # pragma: no cover - the shipped table is valid
            continue
    return None


def redist_url(arch: str) -> str:
    """Microsoft's current VC++ redistributable for a Python's architecture (x86_64 when unknown)."""
    urls = load("windows_vc_runtime")["fix"]["redist_url"]
    return urls.get(arch, urls["x86_64"])
