"""The load graph shared by the Windows and Linux loader models, the checks and the ``tree`` verb.

For every import of every module the graph records either where it was found and by which search step, or
that it was not found and every place that was searched, in order.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class SearchPlace:
    """One step of a loader's search: ``step`` is machine-readable, ``directory`` where it looked."""

    step: str  # e.g. dll-load-dir, application-dir, add_dll_directory, system32, path, cwd, api-set,
    #            known-dll, already-loaded, rpath, ld_library_path, runpath, ld.so.cache, default-dirs
    directory: str | None = None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "directory": self.directory, "note": self.note}


@dataclass(frozen=True)
class Resolution:
    path: Path | None  # None for API sets or a system DLL assumed present (system dir unknown)
    found_by: SearchPlace
    #: True when the tool could not look (no system directory given) and assumed the file is there
    assumed: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path) if self.path else None,
            "found_by": self.found_by.to_dict(),
            "assumed": self.assumed,
        }


@dataclass(frozen=True)
class Dependency:
    name: str  # as written in the import table / DT_NEEDED
    kind: str  # "import", "delay-import", "needed"
    resolution: Resolution | None
    searched: tuple[SearchPlace, ...] = ()
    #: a problem with the module found (wrong architecture, missing symbols/versions) as message text
    problems: tuple[str, ...] = ()

    @property
    def missing(self) -> bool:
        return self.resolution is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "resolution": self.resolution.to_dict() if self.resolution else None,
            "searched": [s.to_dict() for s in self.searched],
            "problems": list(self.problems),
        }


@dataclass
class Module:
    path: Path
    arch: str | None = None
    dependencies: list[Dependency] = field(default_factory=list)
    #: why the module could not be read, if it could not
    unreadable: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.path.name

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "arch": self.arch,
            "unreadable": self.unreadable,
            "dependencies": [d.to_dict() for d in self.dependencies],
            **({"extra": self.extra} if self.extra else {}),
        }


@dataclass
class LoadGraph:
    platform: str  # "windows" | "linux"
    roots: list[Path] = field(default_factory=list)
    modules: dict[str, Module] = field(default_factory=dict)  # key: str(path)
    #: facts about how the search was modelled (which dirs torch adds, which conclusions are assumed)
    notes: list[str] = field(default_factory=list)
    #: the ordered search used for the first load attempt (for "places searched")
    search_order: list[SearchPlace] = field(default_factory=list)

    def module(self, path: Path) -> Module | None:
        return self.modules.get(str(path))

    def iter_edges(self) -> Iterator[tuple[Module, Dependency]]:
        for module in self.modules.values():
            for dep in module.dependencies:
                yield module, dep

    def missing(self) -> list[tuple[Module, Dependency]]:
        return [(m, d) for m, d in self.iter_edges() if d.missing and d.kind != "delay-import"]

    def chain_to(self, target: Path) -> list[Path]:
        """Shortest chain of modules from a root to ``target`` (inclusive), following resolved edges."""
        from collections import deque

        key = str(target)
        for root in self.roots:
            start = str(root)
            if start == key:
                return [root]
            parents: dict[str, str | None] = {start: None}
            queue = deque([start])
            while queue:
                cur = queue.popleft()
                mod = self.modules.get(cur)
                if mod is None:
                    continue
                for dep in mod.dependencies:
                    if dep.resolution is None or dep.resolution.path is None:
                        continue
                    nxt = str(dep.resolution.path)
                    if nxt in parents:
                        continue
                    parents[nxt] = cur
                    if nxt == key:
                        chain = [nxt]
                        while parents[chain[-1]] is not None:
                            chain.append(parents[chain[-1]])  # type: ignore[arg-type]
                        return [Path(p) for p in reversed(chain)]
                    queue.append(nxt)
        return [target]

    def to_dict(self) -> dict[str, Any]:
        return {
            "platform": self.platform,
            "roots": [str(r) for r in self.roots],
            "search_order": [s.to_dict() for s in self.search_order],
            "notes": list(self.notes),
            "modules": [m.to_dict() for m in self.modules.values()],
        }
