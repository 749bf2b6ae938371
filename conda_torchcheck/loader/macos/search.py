"""The machine dyld runs on, as the model sees it: its search steps, the macOS version, SIP, and
:func:`search_context` (DYLD_* variables, the process's architecture) for one env and host."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from conda_torchcheck.inventory import fs
from conda_torchcheck.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


# dyld's own words, used as search steps; whole sentences for people go through the message catalog
STEP_LOADED = "already-loaded"
STEP_DYLD_LIBRARY_PATH = "DYLD_LIBRARY_PATH"
STEP_PATH = "install-name"
STEP_LOADER = "@loader_path"
STEP_EXECUTABLE = "@executable_path"
STEP_RPATH = "LC_RPATH"
STEP_FALLBACK = "DYLD_FALLBACK_LIBRARY_PATH"
STEP_DEFAULT_FALLBACK = "default-fallback"
STEP_CACHE = "dyld-shared-cache"
STEP_DLOPEN = "dlopen"
STEP_FILE_PATH = "path"  # a file dlopened by its path (torch's own ctypes loads)
STEP_UNEXAMINED = "unexamined"
NOT_EXAMINED = "not examined: a folder of the machine the env runs on"
GROUP_PROCESS = "python (main executable and its dylibs)"
GROUP_GLOBAL_DEPS = "torch ctypes.CDLL(libtorch_global_deps.dylib, RTLD_GLOBAL)"
GROUP_C = "import torch._C dlopen(_C.cpython-3XY-darwin.so)"
KIND_BY_REF = {"load": "needed", "weak": "weak", "reexport": "reexport", "lazy": "lazy", "upward": "upward"}


def _table() -> dict:
    from conda_torchcheck.knowledge import load

    return load("macos_dyld")


def version_tuple(text: str | None) -> tuple[int, ...] | None:
    """``"14.2.1"`` → ``(14, 2, 1)``; None for no or an unreadable version."""
    if not text:
        return None
    try:
        return tuple(int(p) for p in text.split(".")[:3])
    except ValueError:
        return None


def read_system_version(root: Path) -> str | None:
    """ProductVersion from ``<root>/System/Library/CoreServices/SystemVersion.plist`` (XML or binary)."""
    import plistlib

    try:
        with fs.open_binary(root / _table()["macos"]["system_version_plist"]) as fh:
            data = plistlib.load(fh)
    except (OSError, ValueError, plistlib.InvalidFileException):
        return None
    version = data.get("ProductVersion") if isinstance(data, dict) else None
    return str(version) if version else None


class MacSearch(Record):
    """What dyld on the machine the env runs on would use, and where each fact came from."""

    __slots__ = (
        "live", "arch", "arch_source", "dyld_library_path", "fallback_library_path", "variables_source",
        "sip_purged", "system_root", "macos", "macos_source", "notes",
    )  # fmt: skip

    def __init__(
        self,
        live: bool,
        arch: str,
        arch_source: str,
        dyld_library_path: tuple[str, ...] = (),
        fallback_library_path: tuple[str, ...] | None = None,
        variables_source: str = "unset",
        sip_purged: bool = False,
        system_root: Path | None = None,
        macos: str | None = None,
        macos_source: str = "unknown",
        notes: tuple[str, ...] = (),
    ) -> None:
        self.live = live
        self.arch = arch  # the process's architecture (arm64, x86_64)
        self.arch_source = arch_source  # python, python-fat-live, python-fat-assumed, torch
        self.dyld_library_path = dyld_library_path
        #: None: unset (dyld then uses its default fallback for older binaries)
        self.fallback_library_path = fallback_library_path
        self.variables_source = variables_source  # live, option, unset
        #: SIP purges the DYLD_* variables because the executable is a protected binary
        self.sip_purged = sip_purged
        self.system_root = system_root  # a folder holding the host's /System and /usr (offline)
        self.macos = macos  # the host's macOS version when known
        self.macos_source = macos_source  # live, system-root, unknown
        self.notes = notes

    @property
    def system_known(self) -> bool:
        """Whether folders outside the env (``/usr/local/lib``, ``/opt/homebrew``) can be looked at."""
        return self.live or self.system_root is not None


def is_protected(executable: Path | str | None) -> bool:
    """Whether the program that starts is SIP-protected: the path itself, or where its symlinks point (a venv's
    bin/python → /usr/bin/python3), read as link text so that it works for a Mac's env examined elsewhere."""
    if executable is None:
        return False
    prefixes = tuple(_table()["dyld"]["protected_prefixes"])
    current = str(executable)
    for _ in range(8):
        if current.startswith(prefixes) and not current.startswith("/usr/local/"):
            return True
        try:
            target = os.readlink(current)
        except OSError:
            return False
        current = target if target.startswith("/") else os.path.join(os.path.dirname(current), target)
    return False


def process_arch(env: Any, host: Any, live: bool) -> tuple[str, str]:
    """The architecture the env's python runs as: a thin python's own; a universal one's native slice."""
    arch = env.python.arch if env is not None and env.python is not None else None
    if arch in ("arm64", "x86_64"):
        return arch, "python"
    if live and sys.platform == "darwin":
        import platform

        machine = platform.machine()
        return ("arm64" if machine == "arm64" else "x86_64"), "python-fat-live"
    return "arm64", "python-fat-assumed"


def search_context(env: Any, host: Any, *, arch: str | None = None) -> MacSearch:
    """The dyld facts for ``env`` as run on ``host`` (HostFacts)."""
    from conda_torchcheck.messages import msg

    live = bool(getattr(host, "live", False)) and sys.platform == "darwin"
    notes: list[str] = []
    if arch is None:
        arch, arch_source = process_arch(env, host, live)
    else:
        arch_source = "file"
    if arch_source == "python-fat-assumed":
        notes.append(msg("TC45.note.fat_python_assumed", arch=arch).render())
    executable = env.python.executable if env is not None and env.python is not None else None
    raw = host.get("DYLD_LIBRARY_PATH") if host is not None else None
    raw_fallback = host.get("DYLD_FALLBACK_LIBRARY_PATH") if host is not None else None
    source = "unset" if raw is None and raw_fallback is None else ("live" if live else "option")
    dlp = tuple(p for p in (raw or "").split(":") if p)
    fallback = tuple(p for p in raw_fallback.split(":") if p) if raw_fallback else None
    sip = False
    if (dlp or fallback is not None) and is_protected(executable):
        # [SIP] dyld variables are purged when a protected binary starts: /usr/bin/python3 never sees them
        sip = True
        notes.append(msg("TC45.note.sip_purged", executable=str(executable)).render())
        dlp, fallback = (), None
    root = getattr(host, "system_root", None)
    macos = None
    macos_source = "unknown"
    if root is not None:
        macos = read_system_version(Path(root))
        macos_source = "system-root" if macos else "unknown"
    elif live:
        import platform

        macos = platform.mac_ver()[0] or read_system_version(Path("/"))
        macos_source = "live" if macos else "unknown"
    if not live and root is None:
        notes.append(msg("TC45.note.foreign_system").render())
    return MacSearch(
        live=live,
        arch=arch,
        arch_source=arch_source,
        dyld_library_path=dlp,
        fallback_library_path=fallback,
        variables_source=source,
        sip_purged=sip,
        system_root=Path(root) if root is not None and not live else None,
        macos=macos,
        macos_source=macos_source,
        notes=tuple(notes),
    )
