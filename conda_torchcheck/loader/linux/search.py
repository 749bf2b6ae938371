"""The machine ld.so runs on, as the model sees it: its search steps, the libraries every Linux provides,
and :func:`search_context` (LD_LIBRARY_PATH, ld.so.cache, the default directories) for one env and host."""

from __future__ import annotations

import os
import re
from pathlib import Path

from conda_torchcheck.binaries.headers import ELF_MACHINES
from conda_torchcheck.loader.ldcache import LdCache, SystemLayout, read_host_cache, read_preload_file, system_layout
from conda_torchcheck.messages import msg
from conda_torchcheck.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


# ld.so's search steps (SearchPlace.step), in the order it tries them (see ``search_order``)
STEP_LOADED = "already-loaded"
STEP_PATH = "path"  # a name with a slash: used as written
STEP_RPATH = "rpath"
STEP_LD_LIBRARY_PATH = "ld_library_path"
STEP_RUNPATH = "runpath"
STEP_CACHE = "ld.so.cache"
STEP_DEFAULT_DIRS = "default-dirs"
STEP_UNKNOWN_SYSTEM = "unknown-system"  # the machine the env runs on was not examined
STEPS = (STEP_LOADED, STEP_PATH, STEP_RPATH, STEP_LD_LIBRARY_PATH, STEP_RUNPATH, STEP_CACHE, STEP_DEFAULT_DIRS,
         STEP_UNKNOWN_SYSTEM)  # fmt: skip

# Libraries every Linux machine provides (glibc, the GCC runtime): when the machine the env runs on is not
# this one, their resolution is assumed and said to be assumed.
SYSTEM_SONAMES = frozenset(
    {
        "libc.so.6",
        "libm.so.6",
        "libpthread.so.0",
        "libdl.so.2",
        "librt.so.1",
        "libutil.so.1",
        "libresolv.so.2",
        "libcrypt.so.1",
        "libnsl.so.1",
        "libanl.so.1",
        "libmvec.so.1",
        "libgcc_s.so.1",
        "libstdc++.so.6",
        "libgomp.so.1",
        "libz.so.1",
        "libexpat.so.1",
        "ld-linux-x86-64.so.2",
        "ld-linux-aarch64.so.1",
        "ld-linux.so.2",
        "ld64.so.2",
        "ld64.so.1",
        "ld-linux-armhf.so.3",
        "ld-linux-riscv64-lp64d.so.1",
    }
)
INTERPRETERS = {
    "x86_64": "/lib64/ld-linux-x86-64.so.2",
    "aarch64": "/lib/ld-linux-aarch64.so.1",
    "ppc64": "/lib64/ld64.so.2",
    "s390x": "/lib/ld64.so.1",
    "x86": "/lib/ld-linux.so.2",
}
_MACHINE_BY_ARCH = {v: k for k, v in ELF_MACHINES.items()}

# Technical labels (ld.so's own vocabulary) used in search steps and as "loaded by" notes; whole sentences
# for people go through the message catalog.
ASSUMED_SYSTEM = "assumed: system library of the machine the env runs on (not examined)"
UNKNOWN_SYSTEM = "system directories of the machine the env runs on (unknown)"
GROUP_PROCESS_SUFFIX = "(executable and its DT_NEEDED)"
GROUP_PROCESS = f"python {GROUP_PROCESS_SUFFIX}"
GROUP_GLOBAL_DEPS = "torch dlopen(libtorch_global_deps.so, RTLD_GLOBAL)"
GROUP_C = "import torch._C dlopen(_C.so, RTLD_LOCAL)"


class LinuxSearch(Record):
    """What ld.so on the machine the env runs on would use, and where each fact came from."""

    __slots__ = (
        "live", "arch", "bits", "cache", "layout", "ld_library_path", "ld_library_path_source", "preload", "cwd",
        "notes",
    )  # fmt: skip

    def __init__(
        self,
        live: bool,
        arch: str,
        bits: int,
        cache: LdCache | None,
        layout: SystemLayout,
        ld_library_path: tuple[str, ...],
        ld_library_path_source: str,
        preload: tuple[str, ...],
        cwd: Path | None,
        notes: tuple[str, ...] = (),
    ) -> None:
        self.live = live
        self.arch = arch
        self.bits = bits
        self.cache = cache  # None: the machine is not this one (or the cache could not be read)
        self.layout = layout
        self.ld_library_path = ld_library_path
        self.ld_library_path_source = ld_library_path_source  # "live", "option", "unset"
        self.preload = preload
        self.cwd = cwd
        self.notes = notes

    @property
    def machine(self) -> int:
        return _MACHINE_BY_ARCH.get(self.arch, 0x3E)

    @property
    def system_known(self) -> bool:
        return self.live and self.cache is not None


def search_context(env: Any, host: Any, *, arch: str | None = None, bits: int = 64) -> LinuxSearch:
    """The ld.so facts for ``env`` as run on ``host`` (HostFacts)."""
    arch = arch or (env.python.arch if env is not None and env.python.arch else None) or "x86_64"
    live = bool(getattr(host, "live", False)) and os.name == "posix"
    notes: list[str] = []
    raw_llp = host.get("LD_LIBRARY_PATH") if host is not None else None
    if raw_llp is None:
        llp: tuple[str, ...] = ()
        source = "unset"
    else:
        # ld.so splits on ':' and ';'; an empty entry means the current directory
        llp = tuple(p if p else "." for p in re.split(r"[:;]", raw_llp))
        if raw_llp == "":
            llp = ()
        source = "live" if live else "option"
    preload_raw = host.get("LD_PRELOAD") if host is not None else None
    preload = tuple(p for p in re.split(r"[:\s]", preload_raw or "") if p)
    cache = None
    if live:
        cache = read_host_cache(arch)
        if cache.problem:
            notes.append(msg("TC4.note.cache_unreadable", problem=cache.problem).render())
            cache = None
        preload = read_preload_file() + preload
    else:
        notes.append(msg("TC4.note.foreign_system").render())
    return LinuxSearch(
        live=live,
        arch=arch,
        bits=bits,
        cache=cache,
        layout=system_layout(arch, bits),
        ld_library_path=llp,
        ld_library_path_source=source,
        preload=preload,
        cwd=getattr(host, "cwd", None),
        notes=tuple(notes),
    )
