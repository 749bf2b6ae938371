"""Frozen facts about a target environment. Pure data: no conda import, no writes, no code execution."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

# HostFacts lives with the code that builds it; it is a plain class so `tree FILE` can use it without this module
from conda_torchcheck.inventory.host import HostFacts as HostFacts
from conda_torchcheck.inventory.layouts import PathFile

OS = Literal["windows", "linux", "darwin"]
#: embedded: python.org's embeddable package (a ._pth beside python.exe); store: the Microsoft Store package
Layout = Literal["conda", "pixi", "venv", "system", "embedded", "store"]


@dataclass(frozen=True)
class PythonInfo:
    """The env's interpreter: where it is, its version and architecture, as the inventory read them."""

    executable: Path | None
    version: str | None  # "3.11.9" when known, else "3.11"
    arch: str | None  # x86_64, x86, arm64 (Windows) / aarch64 (Linux)
    free_threaded: bool = False
    #: where the version came from (conda-meta record, pyvenv.cfg, directory name, dll name ...)
    version_source: str = ""

    @property
    def major_minor(self) -> tuple[int, int] | None:
        if not self.version:
            return None
        parts = self.version.split(".")
        try:
            return int(parts[0]), int(parts[1])
        except (IndexError, ValueError):
            return None

    @property
    def tag(self) -> str | None:
        """``311`` for 3.11 (``313t`` when free-threaded)."""
        mm = self.major_minor
        return f"{mm[0]}{mm[1]}{'t' if self.free_threaded else ''}" if mm else None


@dataclass(frozen=True)
class PathEntry:
    """One file of a conda record's ``paths_data``."""

    path: str  # relative to the prefix, forward slashes, as conda writes it
    sha256: str | None = None
    size: int | None = None
    path_type: str | None = None


class LazyPaths(Sequence[PathEntry]):
    """``paths_data.paths`` of a record, turned into :class:`PathEntry` only when read.

    A CUDA pytorch record lists ~15,000 paths and most checks never look at them; building them all up front
    was two thirds of the inventory's time on a large env. Behaves like a tuple of PathEntry.
    """

    __slots__ = ("_raw", "_cache")

    def __init__(self, raw: list[dict[str, Any]]) -> None:
        self._raw = raw
        self._cache: tuple[PathEntry, ...] | None = None

    def _entries(self) -> tuple[PathEntry, ...]:
        if self._cache is None:
            self._cache = tuple(filter(None, (path_entry(item) for item in self._raw)))
        return self._cache

    def __getitem__(self, index):  # type: ignore[override]
        return self._entries()[index]

    def __len__(self) -> int:
        return len(self._entries())

    def __iter__(self) -> Iterator[PathEntry]:
        return iter(self._entries())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyPaths):
            return self._entries() == other._entries()
        if isinstance(other, tuple):
            return self._entries() == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._entries())

    def __repr__(self) -> str:
        return f"LazyPaths({len(self._raw)} entries)"


def path_entry(item: object) -> PathEntry | None:
    """One ``paths_data.paths`` item as conda writes it; None for a malformed item."""
    if not isinstance(item, dict) or not isinstance(item.get("_path"), str):
        return None
    size = item.get("size_in_bytes")
    # sha256_in_prefix differs from sha256 for files conda rewrote (prefix replacement)
    sha = item.get("sha256_in_prefix") or item.get("sha256")
    kind = item.get("path_type")
    return PathEntry(
        path=item["_path"],
        sha256=sha if isinstance(sha, str) else None,
        size=size if isinstance(size, int) else None,
        path_type=kind if isinstance(kind, str) else None,
    )


@dataclass(frozen=True)
class CondaRecord:
    """One ``conda-meta/*.json`` file, read as raw JSON (never through conda's interop loader)."""

    name: str
    version: str
    build: str
    build_number: int
    channel: str  # canonical: "conda-forge", "pytorch", "nvidia", "defaults", "pypi", or the URL
    channel_url: str
    subdir: str
    fn: str
    depends: tuple[str, ...]
    requested_specs: tuple[str, ...]
    files: tuple[str, ...]
    paths: Sequence[PathEntry]  # a LazyPaths when read from disk
    source: Path  # the conda-meta json file

    @property
    def dist_str(self) -> str:
        return f"{self.channel}::{self.name}-{self.version}-{self.build}"


@dataclass(frozen=True)
class Distribution:
    """A Python distribution found on the env's import path (dist-info or egg-info)."""

    name: str  # PEP 503 normalised
    raw_name: str
    version: str
    metadata_dir: Path
    kind: Literal["dist-info", "egg-info"]
    site: Path  # the sys.path entry it was found in
    site_kind: str  # "env", "user", "pythonpath", "pth"
    installer: str | None  # pip, uv, conda, ...
    requires: tuple[str, ...] = ()
    direct_url: Mapping[str, object] | None = None
    has_record: bool = False
    wheel_tags: tuple[str, ...] = ()

    @property
    def local_version(self) -> str | None:
        """``cpu`` for ``2.3.0+cpu``, ``cu121`` for ``2.3.0+cu121``."""
        return self.version.split("+", 1)[1] if "+" in self.version else None

    @property
    def record_path(self) -> Path:
        return self.metadata_dir / "RECORD"


@dataclass(frozen=True)
class SiteDir:
    """A folder Python imports packages from, and how it gets on the path."""

    path: Path
    kind: str  # "env", "user", "pythonpath", "pth"
    active: bool = True  # the user site of a venv is not active, for example
    note: str = ""


@dataclass(frozen=True)
class Problem:
    """Something in the env that could not be read; turned into a TC9xx finding by the checks."""

    kind: str  # "conda-meta-json", "conda-meta-fields", "dist-metadata", "unreadable", "path-file"
    path: Path
    detail: str


@dataclass(frozen=True)
class Environment:
    """What the inventory read of one env: layout, interpreter, conda records, distributions, site folders."""

    prefix: Path
    os: OS
    #: conda subdir style (win-64, win-arm64, win-32, linux-64, linux-aarch64, osx-arm64 ...) when the env's
    #: files tell it; None when they do not (an unreadable python and no platform-specific conda record)
    platform: str | None
    layout: Layout
    python: PythonInfo
    base_prefix: Path | None  # venv base (pyvenv.cfg home) or the conda base env
    is_base: bool
    name: str | None
    site_dirs: tuple[SiteDir, ...]
    conda_records: tuple[CondaRecord, ...]
    distributions: tuple[Distribution, ...]
    leftovers: tuple[Path, ...]  # ~orch-style directories from interrupted pip uninstalls
    problems: tuple[Problem, ...]
    #: the env is the one active in the live process (CONDA_PREFIX / VIRTUAL_ENV / sys.prefix)
    is_active: bool | None = None
    #: the OS's most common platform, only when ``platform`` is None (a guess, never presented as a fact)
    platform_guess: str | None = None
    #: who made or manages this Python: "uv" (a uv venv or a uv-managed Python), "virtualenv", "pyenv", "pyenv-win"
    manager: str | None = None
    #: an embedded Python's ._pth: the whole import path, and isolated mode (inventory/layouts.py)
    path_file: PathFile | None = None
    #: the Microsoft Store package's family name, for a Store Python
    store_family: str | None = None

    @property
    def isolated(self) -> bool:
        """Python runs in isolated mode here (a ._pth): no PYTHONPATH, no user site, no script folder."""
        return self.path_file is not None

    @property
    def layout_text(self) -> str:
        """The layout for people: ``venv, uv``, ``embedded, python312._pth``, ``system, pyenv``."""
        extra = self.path_file.path.name if self.path_file is not None else self.manager
        return f"{self.layout}, {extra}" if extra else self.layout

    @property
    def platform_text(self) -> str:
        """The platform for people: ``linux-64``, or the guess marked as one (``linux-64?``)."""
        return self.platform or f"{self.platform_guess}?"

    @property
    def is_windows(self) -> bool:
        return self.os == "windows"

    @property
    def env_site(self) -> Path | None:
        for site in self.site_dirs:
            if site.kind == "env":
                return site.path
        return None

    def record(self, name: str) -> CondaRecord | None:
        for rec in self.conda_records:
            if rec.name == name:
                return rec
        return None

    def dists(self, name: str) -> tuple[Distribution, ...]:
        from conda_torchcheck.inventory.names import normalize

        wanted = normalize(name)
        return tuple(d for d in self.distributions if d.name == wanted)

    def dist(self, name: str) -> Distribution | None:
        """The distribution Python would import first (sys.path order), if any."""
        found = self.dists(name)
        return found[0] if found else None
