"""The load graph shared by the Windows and Linux loader models, the checks and the ``tree`` verb.

For every import of every module the graph records either where it was found and by which search step, or
that it was not found and every place that was searched, in order.
"""

from __future__ import annotations

from pathlib import Path

from conda_torchcheck.records import MutableRecord, Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any


class SearchPlace(Record):
    """One step of a loader's search: ``step`` is machine-readable, ``directory`` where it looked."""

    __slots__ = ("step", "directory", "note")

    def __init__(self, step: str, directory: str | None = None, note: str = "") -> None:
        # step: e.g. dll-load-dir, application-dir, add_dll_directory, system32, path, cwd, api-set,
        # known-dll, already-loaded, rpath, ld_library_path, runpath, ld.so.cache, default-dirs
        self.step = step
        self.directory = directory
        self.note = note

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "directory": self.directory, "note": self.note}


class Resolution(Record):
    """Where a dependency was found and by which search step."""

    __slots__ = ("path", "found_by", "assumed")

    def __init__(self, path: Path | None, found_by: SearchPlace, assumed: bool = False) -> None:
        #: None for API sets or a system DLL assumed present (system dir unknown)
        self.path = path
        self.found_by = found_by
        #: True when the tool could not look (no system directory given) and assumed the file is there
        self.assumed = assumed

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path) if self.path else None,
            "found_by": self.found_by.to_dict(),
            "assumed": self.assumed,
        }


class Dependency(Record):
    """One import of a module: found (``resolution``) or not, with every place searched."""

    __slots__ = ("name", "kind", "resolution", "searched", "problems")

    def __init__(
        self,
        name: str,
        kind: str,
        resolution: Resolution | None,
        searched: tuple[SearchPlace, ...] = (),
        problems: tuple[str, ...] = (),
    ) -> None:
        self.name = name  # as written in the import table / DT_NEEDED
        self.kind = kind  # "import", "delay-import", "needed"
        self.resolution = resolution
        self.searched = searched
        #: a problem with the module found (wrong architecture, missing symbols/versions) as message text
        self.problems = problems

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


class Module(MutableRecord):
    """One loaded (or unreadable) module and its imports, in load order."""

    __slots__ = ("path", "arch", "dependencies", "unreadable", "extra")

    def __init__(
        self,
        path: Path,
        arch: str | None = None,
        dependencies: list[Dependency] | None = None,
        unreadable: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.path = path
        self.arch = arch
        self.dependencies: list[Dependency] = [] if dependencies is None else dependencies
        #: why the module could not be read, if it could not
        self.unreadable = unreadable
        self.extra: dict[str, Any] = {} if extra is None else extra

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


class LoadGraph(MutableRecord):
    """Every module a load maps, keyed by path, with the roots the load started from."""

    __slots__ = ("platform", "roots", "modules", "notes", "search_order")

    def __init__(
        self,
        platform: str,
        roots: list[Path] | None = None,
        modules: dict[str, Module] | None = None,
        notes: list[str] | None = None,
        search_order: list[SearchPlace] | None = None,
    ) -> None:
        self.platform = platform  # "windows" | "linux"
        self.roots: list[Path] = [] if roots is None else roots
        self.modules: dict[str, Module] = {} if modules is None else modules  # key: str(path)
        #: facts about how the search was modelled (which dirs torch adds, which conclusions are assumed)
        self.notes: list[str] = [] if notes is None else notes
        #: the ordered search used for the first load attempt (for "places searched")
        self.search_order: list[SearchPlace] = [] if search_order is None else search_order

    def module(self, path: Path) -> Module | None:
        return self.modules.get(str(path))

    def iter_edges(self) -> Iterator[tuple[Module, Dependency]]:
        for module in self.modules.values():
            for dep in module.dependencies:
                yield module, dep

    def missing(self) -> list[tuple[Module, Dependency]]:
        # delay-loaded (Windows) and weak (macOS LC_LOAD_WEAK_DYLIB) imports may be absent without failing the load
        return [(m, d) for m, d in self.iter_edges() if d.missing and d.kind not in ("delay-import", "weak")]

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
