"""What the activation scripts must know about the env, computed once when they are installed.

Names only (DLL file names, shared-library sonames, folders relative to the prefix), each validated against a
conservative character set: the scripts embed them as literal words, so nothing here may need quoting.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from conda_torchcheck.hooks.records import is_torch_related
from conda_torchcheck.inventory.model import Environment
from conda_torchcheck.inventory.torch import TorchInfo

SAFE_DLL = re.compile(r"^[A-Za-z0-9_.+-]+\.dll$", re.IGNORECASE)
# CUDA, cuDNN, NCCL, nvJitLink, NVRTC ... and torch's own core libraries; soname form only (lib*.so or lib*.so.N)
SHADOWABLE_SO = re.compile(r"^lib(cu[a-zA-Z]|cudnn|nccl|nv|torch|c10|shm|caffe2)[A-Za-z0-9_+.-]*\.so(\.[0-9]+)?$")
SAFE_REL_DIR = re.compile(r"^[A-Za-z0-9_.+/-]+$")
MAX_NAMES = 400


@dataclass(frozen=True)
class ActivationFacts:
    os: str  # windows, linux, darwin
    torch: str  # "2.5.1 (conda, cuda)" or "none": for the header comment
    python_version: str
    #: how this env's Python treats CONDA_DLL_SEARCH_MODIFICATION_ENABLE: "ignored" or "active"
    dll_search_mode: str
    #: Windows: DLL names torch and its conda dependencies load, minus those in the prefix root (searched first)
    dll_names: tuple[str, ...] = ()
    #: Linux: sonames LD_LIBRARY_PATH could shadow (empty when torch's libraries use DT_RPATH)
    sonames: tuple[str, ...] = ()
    #: folders (relative to the prefix, POSIX) torch takes those libraries from: not reported when on LD_LIBRARY_PATH
    own_lib_dirs: tuple[str, ...] = ()

    def fingerprint(self) -> str:
        data = json.dumps(asdict(self), sort_keys=True).encode()
        return hashlib.sha256(data).hexdigest()[:16]


def _listdir(path: Path | None) -> list[str]:
    if path is None:
        return []
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def elf_search_tags(path: Path) -> tuple[bool, bool] | None:
    """(has DT_RPATH, has DT_RUNPATH); None when the file is not a readable ELF.

    The ELF reader maps the file and reads only the header, program headers and dynamic section.
    """
    from conda_torchcheck.binaries.elf import ElfFile, read_elf

    elf = read_elf(path)
    if not isinstance(elf, ElfFile):
        return None
    return bool(elf.rpath), bool(elf.runpath)


def _rel(path: Path, prefix: Path) -> str | None:
    try:
        rel = path.relative_to(prefix).as_posix()
    except ValueError:
        return None
    return rel if SAFE_REL_DIR.match(rel) else None


def _dll_search_mode(env: Environment) -> str:
    rec = env.record("python")
    mm = env.python.major_minor
    if rec is not None and rec.channel == "conda-forge" and mm is not None and mm >= (3, 11):
        return "ignored"
    return "active"


def windows_dll_names(env: Environment, torch: TorchInfo) -> tuple[str, ...]:
    names: dict[str, str] = {}
    for name in _listdir(torch.lib_dir):
        if name.lower().endswith(".dll"):
            names.setdefault(name.lower(), name)
    for rec in env.conda_records:
        if not is_torch_related(rec.name) or rec.name == "python":
            continue
        for f in rec.files:
            parts = f.replace("\\", "/").split("/")
            if len(parts) == 3 and parts[0].lower() == "library" and parts[1].lower() == "bin":
                if parts[2].lower().endswith(".dll"):
                    names.setdefault(parts[2].lower(), parts[2])
    # the folder of python.exe is searched before the current folder and PATH: its DLLs cannot be shadowed
    in_root = {n.lower() for n in _listdir(env.prefix) if n.lower().endswith(".dll")}
    out = sorted(v for k, v in names.items() if k not in in_root and SAFE_DLL.match(v))
    return tuple(out[:MAX_NAMES])


def _core_library(dirs: list[Path]) -> Path | None:
    for d in dirs:
        for name in ("libtorch_cpu.so", "libtorch.so", "libc10.so", "libtorch_python.so"):
            candidate = d / name
            if candidate.is_file():
                return candidate
    return None


def linux_libraries(env: Environment, torch: TorchInfo) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(sonames, own folders) for the LD_LIBRARY_PATH check; empty when LD_LIBRARY_PATH cannot override."""
    prefix = env.prefix
    found: dict[str, set[str]] = {}  # soname -> own dirs

    def add(directory: Path, names: list[str]) -> None:
        rel = _rel(directory, prefix)
        if rel is None:
            return
        for name in names:
            if SHADOWABLE_SO.match(name):
                found.setdefault(name, set()).add(rel)

    lib_dir = torch.lib_dir
    if lib_dir is not None:
        add(lib_dir, _listdir(lib_dir))
        nvidia = lib_dir.parent.parent / "nvidia"
        for sub in _listdir(nvidia):
            add(nvidia / sub / "lib", _listdir(nvidia / sub / "lib"))
    env_lib = prefix / "lib"
    owned: list[str] = []
    for rec in env.conda_records:
        if not is_torch_related(rec.name) or rec.name == "python":
            continue
        for f in rec.files:
            parts = f.split("/")
            if len(parts) == 2 and parts[0] == "lib":
                owned.append(parts[1])
    add(env_lib, sorted(set(owned)))
    if not found:
        return (), ()
    core = _core_library([d for d in (lib_dir, env_lib) if d is not None])
    if core is not None:
        tags = elf_search_tags(core)
        if tags is not None and tags[0] and not tags[1]:
            # DT_RPATH without DT_RUNPATH: searched before LD_LIBRARY_PATH, which cannot shadow anything
            return (), ()
    sonames = tuple(sorted(found)[:MAX_NAMES])
    own = tuple(sorted({d for name in sonames for d in found[name]}))
    return sonames, own


_UNSAFE_TEXT = re.compile(r"[^A-Za-z0-9_.+ (),-]")


def _plain(text: str) -> str:
    """Header/message values come from files in the env: keep them to one line of harmless characters."""
    return _UNSAFE_TEXT.sub("?", text)[:80]


def facts_for(env: Environment, torch: TorchInfo) -> ActivationFacts:
    if torch.installed:
        desc = _plain(f"{torch.version or '?'} ({torch.source}, {torch.variant})")
    else:
        desc = "none"
    python_version = _plain(env.python.version or "?")
    if env.os == "windows":
        return ActivationFacts(
            os="windows",
            torch=desc,
            python_version=python_version,
            dll_search_mode=_dll_search_mode(env),
            dll_names=windows_dll_names(env, torch) if torch.installed else (),
        )
    sonames, own = linux_libraries(env, torch) if (torch.installed and env.os == "linux") else ((), ())
    return ActivationFacts(
        os=env.os,
        torch=desc,
        python_version=python_version,
        dll_search_mode=_dll_search_mode(env),
        sonames=sonames,
        own_lib_dirs=own,
    )
