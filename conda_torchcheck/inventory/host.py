"""Host facts: the variables and directories of the machine the env runs on."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from conda_torchcheck.inventory import fs
from conda_torchcheck.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from conda_torchcheck.inventory.model import OS

RUNNING_OS: OS = "windows" if os.name == "nt" else ("darwin" if sys.platform == "darwin" else "linux")


class HostFacts(Record):
    """The machine the env runs on: variables, working directory, Windows system directory.

    ``live`` facts come from this process; otherwise from options, for an env examined from elsewhere
    (a Windows env read from Linux/WSL, a copied env).
    """

    __slots__ = ("live", "environ", "cwd", "system_root", "system_root_source", "home")

    def __init__(
        self,
        live: bool,
        environ: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        system_root: Path | None = None,
        system_root_source: str = "unknown",
        home: Path | None = None,
    ) -> None:
        self.live = live
        self.environ: Mapping[str, str] = {} if environ is None else environ
        self.cwd = cwd
        #: the Windows directory (holding System32) when known
        self.system_root = system_root
        self.system_root_source = system_root_source  # live, option, wsl-auto, unknown
        self.home = home

    def get(self, name: str, default: str | None = None) -> str | None:
        # Windows variable names are case-insensitive
        if name in self.environ:
            return self.environ[name]
        upper = name.upper()
        for key, value in self.environ.items():
            if key.upper() == upper:
                return value
        return default

    def path_list(self, name: str, separator: str) -> tuple[str, ...]:
        value = self.get(name)
        if not value:
            return ()
        return tuple(p for p in value.split(separator) if p)

    @property
    def system32(self) -> Path | None:
        if self.system_root is None:
            return None
        for name in ("System32", "system32", "SYSTEM32"):
            candidate = self.system_root / name
            if fs.is_dir(candidate):
                return candidate
        return self.system_root / "System32"


# variables that matter to loading torch; the rest of the live environment is not copied into reports
RELEVANT_VARIABLES = (
    "PATH",
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONNOUSERSITE",
    "PYTHONUSERBASE",
    "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV",
    "CONDA_SHLVL",
    "CONDA_EXE",
    "CONDA_ROOT",
    "VIRTUAL_ENV",
    "CUDA_PATH",
    "CUDA_HOME",
    "NVTOOLSEXT_PATH",
    "KMP_DUPLICATE_LIB_OK",
    "APPDATA",
    "LOCALAPPDATA",
    "USERPROFILE",
    "HOME",
    "SystemRoot",
    "windir",
    "ProgramFiles",
    "CONDA_DLL_SEARCH_MODIFICATION_ENABLE",
    "CONDA_DLL_SEARCH_MODIFICATION_DEBUG",
    "CONDA_DLL_SEARCH_MODIFICATION_NEVER_ADD_WINDOWS_DIRECTORY",
    "CONDA_DLL_SEARCH_MODIFICATION_NEVER_ADD_CWD",
    "TORCH_USE_RTLD_GLOBAL",
    # dyld (macOS): searched before/after the install names; SIP purges them for protected binaries
    "DYLD_LIBRARY_PATH",
    "DYLD_FALLBACK_LIBRARY_PATH",
    "DYLD_FRAMEWORK_PATH",
    "DYLD_INSERT_LIBRARIES",
    "CUDA_VISIBLE_DEVICES",
)


def _relevant(environ: Mapping[str, str]) -> dict[str, str]:
    out = {}
    for key, value in environ.items():
        if key in RELEVANT_VARIABLES or key.upper() in {v.upper() for v in RELEVANT_VARIABLES}:
            out[key] = value
        elif key.upper().startswith(("CUDA_PATH_V", "CONDA_PLUGINS_TORCHCHECK")):
            out[key] = value
    return out


def wsl_system_root(prefix: Path) -> Path | None:
    """``/mnt/c/...`` prefix seen from WSL → ``/mnt/c/Windows`` when it exists."""
    parts = prefix.parts
    if len(parts) >= 3 and parts[0] == "/" and parts[1] == "mnt" and len(parts[2]) == 1:
        for name in ("Windows", "WINDOWS", "windows"):
            candidate = Path("/", "mnt", parts[2], name)
            if fs.is_dir(candidate):
                return candidate
    return None


def make_host_facts(
    target_os: OS,
    prefix: Path,
    *,
    use_live: bool = True,
    overrides: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    system_root: Path | None = None,
) -> HostFacts:
    """Facts from this process when the env belongs to this machine, else only what the user gave.

    ``overrides`` (from --path, --ld-library-path, --env) always win over live values.
    """
    live = use_live and target_os == RUNNING_OS
    environ: dict[str, str] = _relevant(os.environ) if live else {}
    if overrides:
        environ.update(overrides)
    root_source = "unknown"
    root = None
    if system_root is not None:
        root, root_source = system_root, "option"
    elif target_os == "windows":
        if live and environ.get("SystemRoot"):
            root, root_source = Path(environ["SystemRoot"]), "live"
        else:
            auto = wsl_system_root(prefix)
            if auto is not None:
                root, root_source = auto, "wsl-auto"
    if cwd is None and live:
        try:
            cwd = Path.cwd()
        except OSError:
            cwd = None
    home = None
    if live:
        home = Path.home()
    elif environ.get("USERPROFILE"):
        home = Path(environ["USERPROFILE"])
    elif environ.get("HOME"):
        home = Path(environ["HOME"])
    return HostFacts(
        live=live,
        environ=environ,
        cwd=cwd,
        system_root=root,
        system_root_source=root_source,
        home=home,
    )
