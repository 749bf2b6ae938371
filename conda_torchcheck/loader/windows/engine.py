"""The Windows loader's engine, modelled: the simulation of LoadLibraryExW over the process model (every
import resolved or its places listed, imported symbols checked against the exports found), and its results."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conda_torchcheck.binaries.headers import sniff
from conda_torchcheck.binaries.pe import Exports, ImportedSymbol, PEInfo, Unreadable, read_exports, read_pe
from conda_torchcheck.loader.graph import Dependency, LoadGraph, Module, Resolution, SearchPlace
from conda_torchcheck.loader.windows.search import (
    ERROR_BAD_EXE_FORMAT,
    ERROR_MOD_NOT_FOUND,
    ERROR_PROC_NOT_FOUND,
    STEP_API_SET,
    STEP_APP_DIR,
    STEP_CWD,
    STEP_FULL_PATH,
    STEP_KNOWN_DLL,
    STEP_LOADED,
    STEP_SYSTEM16,
    STEP_SYSTEM32,
    STEP_UNEXAMINED,
    STEP_WINDOWS,
    SYSTEM_STEPS,
    Place,
    ProcessModel,
    _lookup,
    _same,
    dll_kind,
    is_api_set,
    system_tables,
)


@dataclass(frozen=True)
class EdgeIssue:
    """Something wrong with a dependency that was found: what Windows reports and about which files."""

    kind: str  # "arch", "unreadable", "symbols", "forwarder"
    importer: Path
    name: str
    provider: Path | None
    error: int
    detail: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "importer": str(self.importer),
            "name": self.name,
            "provider": str(self.provider) if self.provider else None,
            "error": self.error,
            "detail": list(self.detail),
        }


@dataclass
class RootOutcome:
    """One LoadLibrary call of the import: a preloaded torch DLL, ``_C.pyd``, or the file given to ``tree``."""

    path: Path
    kind: str  # "preload" | "extension" | "file"
    index: int
    error: int | None = None
    first_error: int | None = None  # the 0x1100 attempt, before any fallback
    failing: tuple[Path, str] | None = None  # (importer, dependency name) where the load stopped
    fallback_used: bool = False
    fallback_error: int | None = None
    fallback_failing: tuple[Path, str] | None = None
    chain: list[Path] = field(default_factory=list)  # root .. importer of the failing dependency
    #: the result depends on a place that could not be examined
    uncertain: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "kind": self.kind,
            "index": self.index,
            "error": self.error,
            "first_error": self.first_error,
            "failing": {"importer": str(self.failing[0]), "name": self.failing[1]} if self.failing else None,
            "fallback_used": self.fallback_used,
            "fallback_error": self.fallback_error,
            "chain": [str(p) for p in self.chain],
            "uncertain": self.uncertain,
        }


class WindowsLoadGraph(LoadGraph):
    """The load graph plus what the Windows model knows of the process (a plain class like its base)."""

    __slots__ = (
        "process",
        "outcomes",
        "issues",
        "torch_version",
        "layout",
        "vc_probe",
        "loaded",
        "own_paths",
        "_versions",
    )
    _fields = LoadGraph._fields + __slots__[:-1]

    def __init__(
        self,
        platform: str = "windows",
        *,
        process: ProcessModel | None = None,
        torch_version: str | None = None,
        layout: str = "wheel",
    ) -> None:
        super().__init__(platform)
        self.process = process
        self.outcomes: list[RootOutcome] = []
        self.issues: list[EdgeIssue] = []
        self.torch_version = torch_version
        self.layout = layout  # "wheel" (torch\lib) or "conda" (Library\bin)
        #: what torch's ctypes probe of the VC++ runtime loads: name -> Resolution (None: not found)
        self.vc_probe: dict[str, Resolution | None] = {}
        #: modules loaded by name in the process: lower name -> (path or None, how)
        self.loaded: dict[str, tuple[Path | None, SearchPlace]] = {}
        self.own_paths: frozenset[str] = frozenset()
        self._versions: dict[str, str | None] = {}

    def blamed(self) -> RootOutcome | None:
        """The load that raises first: what the user's error message names."""
        for outcome in self.outcomes:
            if outcome.error is not None:
                return outcome
        return None

    def is_own(self, path: Path | None) -> bool:
        return path is not None and os.path.normcase(os.path.normpath(str(path))) in self.own_paths

    def module_version(self, path: Path | None) -> str | None:
        """FileVersion of ``path`` (read once, also for files that are not modules of the graph)."""
        if path is None:
            return None
        module = self.module(path)
        if module is not None and "file_version" in module.extra:
            return module.extra["file_version"]
        key = str(path)
        if key not in self._versions:
            info = read_pe(path)
            self._versions[key] = info.file_version if isinstance(info, PEInfo) else None
        return self._versions[key]

    def linker_versions(self) -> list[tuple[int, int]]:
        """Linker versions of torch's own modules (the toolset that built torch)."""
        out = []
        for module in self.modules.values():
            if module.extra.get("own") and module.extra.get("linker"):
                major, _, minor = str(module.extra["linker"]).partition(".")
                if major.isdigit() and minor.isdigit():
                    out.append((int(major), int(minor)))
        return out

    def to_dict(self) -> dict[str, Any]:
        doc = super().to_dict()
        doc["torch_version"] = self.torch_version
        doc["layout"] = self.layout
        doc["process"] = self.process.summary() if self.process else None
        doc["outcomes"] = [o.to_dict() for o in self.outcomes]
        doc["issues"] = [i.to_dict() for i in self.issues]
        doc["vc_probe"] = {k: (v.to_dict() if v else None) for k, v in self.vc_probe.items()}
        return doc


@dataclass
class _Found:
    resolution: Resolution | None
    searched: tuple[SearchPlace, ...]
    path: Path | None = None  # a file that has to be mapped (not loaded yet)
    problem: str | None = None  # "arch:<arch>" or "unreadable:<reason>"
    uncertain: bool = False  # a miss, but some place could not be examined


@dataclass
class _Attempt:
    order: list[Place]
    mode: str  # "0x1100" | "classic" | "default-dirs"
    record: bool  # write dependencies into the graph (the first, 0x1100 pass)
    pending: dict[str, Path] = field(default_factory=dict)
    found_how: dict[str, SearchPlace] = field(default_factory=dict)
    error: int | None = None
    failing: tuple[Path, str] | None = None
    chain: list[Path] = field(default_factory=list)
    uncertain: bool = False
    bindings: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)


class _Simulation:
    def __init__(self, model: ProcessModel, graph: WindowsLoadGraph, *, check_all_symbols: bool = False) -> None:
        self.model = model
        self.graph = graph
        self.check_all_symbols = check_all_symbols
        self.loaded: dict[str, tuple[Path | None, SearchPlace]] = graph.loaded
        self.pe_cache: dict[str, PEInfo | Unreadable] = {}
        self.export_cache: dict[str, Exports | Unreadable] = {}
        self.own_names = frozenset(Path(p).name.lower() for p in graph.own_paths)
        self.issue_keys: set[tuple[str, str, str]] = set()

    # ---- file facts
    def info(self, path: Path) -> PEInfo | Unreadable:
        key = str(path)
        if key not in self.pe_cache:
            own = self.graph.is_own(path)

            def wants(name: str) -> bool:
                kind = dll_kind(name)
                if kind in ("api-set", "os"):
                    return False
                return self.check_all_symbols or not (own and name.lower() in self.own_names)

            self.pe_cache[key] = read_pe(path, symbols=wants)
        return self.pe_cache[key]

    def exports(self, path: Path) -> Exports | Unreadable:
        key = str(path)
        if key not in self.export_cache:
            self.export_cache[key] = read_exports(path)
        return self.export_cache[key]

    # ---- name resolution
    def find(self, name: str, attempt: _Attempt) -> _Found:
        key = name.lower()
        if "." not in key:
            key += ".dll"
        tables = system_tables()
        if key.startswith(tables.api_set_prefixes):
            optional = key.startswith(tables.optional_api_set_prefixes)
            note = "optional extension contract" if optional else ""
            return _Found(Resolution(None, SearchPlace(STEP_API_SET, None, note)), ())
        if key in attempt.pending:
            path = attempt.pending[key]
            return _Found(Resolution(path, SearchPlace(STEP_LOADED, str(path.parent), "this-load")), ())
        if key in self.loaded:
            path, how = self.loaded[key]
            # note "<who loaded it>:<how it was found then>", e.g. "preload:full-path", "vc-probe:application-dir"
            note = f"{how.note}:{how.step}" if how.step != STEP_LOADED else how.note
            return _Found(Resolution(path, SearchPlace(STEP_LOADED, how.directory, note), assumed=path is None), ())
        if key in self.model.known_dlls:
            if self.model.system_known:
                hit = _lookup(self.model.system_dir, key)
                if hit is not None:
                    return _Found(Resolution(hit, SearchPlace(STEP_KNOWN_DLL, str(self.model.system_dir))), ())
            else:
                return _Found(Resolution(None, SearchPlace(STEP_KNOWN_DLL, None, "assumed"), assumed=True), ())
        searched: list[SearchPlace] = []
        unexamined = False
        for place in attempt.order:
            if place.step == STEP_SYSTEM32 and not self.model.system_known:
                kind = dll_kind(key)
                if kind == "os":
                    res = Resolution(None, SearchPlace(STEP_SYSTEM32, None, "assumed: part of Windows"), assumed=True)
                    return _Found(res, tuple(searched))
                if kind in ("vc-runtime", "driver"):
                    res = Resolution(None, SearchPlace(STEP_UNEXAMINED, "System32", kind), assumed=True)
                    return _Found(res, tuple(searched), uncertain=True)
                searched.append(place.searched("not examined"))
                unexamined = True
                continue
            if place.directory is None:
                searched.append(place.searched("not examined"))
                unexamined = unexamined or place.step != STEP_CWD  # an unknown CWD is the normal case
                continue
            hit = _lookup(place.directory, key)
            searched.append(place.searched())
            if hit is None:
                continue
            res = Resolution(hit, place.searched())
            if place.step in (STEP_SYSTEM32, STEP_SYSTEM16, STEP_WINDOWS):
                return _Found(res, tuple(searched[:-1]), hit)  # ARM64 Windows keeps ARM64X/EC files there
            header = sniff(hit)
            if header is None or header.format != "pe":
                return _Found(res, tuple(searched[:-1]), hit, problem="unreadable:not a PE image")
            if self.model.arch and header.arch != self.model.arch:
                return _Found(res, tuple(searched[:-1]), hit, problem=f"arch:{header.arch}")
            return _Found(res, tuple(searched[:-1]), hit)
        return _Found(None, tuple(searched), uncertain=unexamined)

    # ---- loading
    def module_for(self, path: Path) -> Module:
        module = self.graph.module(path)
        if module is None:
            module = Module(path=path)
            module.extra["own"] = self.graph.is_own(path)
            self.graph.modules[str(path)] = module
        return module

    def load(self, path: Path, attempt: _Attempt, chain: list[Path]) -> None:
        """Map ``path`` and resolve its imports depth-first, as the loader does; record the first error."""
        module = self.module_for(path)
        info = self.info(path)
        attempt.pending[path.name.lower()] = path
        if isinstance(info, Unreadable):
            module.unreadable = info.reason
            self._fail(attempt, ERROR_BAD_EXE_FORMAT, chain[:-1], chain[-2] if len(chain) > 1 else path, path.name)
            return
        module.arch = info.arch
        module.extra.setdefault("file_version", info.file_version)
        module.extra.setdefault("linker", f"{info.linker_version[0]}.{info.linker_version[1]}")
        # a module's imports are recorded once, by the first attempt that maps it (the 0x1100 one when there is one)
        first_visit = not module.extra.get("resolved")
        if first_visit:
            module.extra["resolved"] = attempt.mode
        deps: list[Dependency] = []
        for imported in info.imports:
            found = self.find(imported.name, attempt)
            problems: list[str] = []
            kind = "delay-import" if imported.delay else "import"
            if found.uncertain and not imported.delay:
                attempt.uncertain = True
            if not attempt.record:
                attempt.bindings[(str(path), imported.name.lower())] = {
                    "resolution": found.resolution,
                    "searched": found.searched,
                }
            if found.resolution is None:
                if not imported.delay:
                    self._fail(attempt, ERROR_MOD_NOT_FOUND, chain, path, imported.name)
            elif found.problem is not None:
                code, _, detail = found.problem.partition(":")
                problems.append(found.problem)
                if not imported.delay:
                    issue_kind = "arch" if code == "arch" else "unreadable"
                    self._issue(issue_kind, path, imported.name, found.path, ERROR_BAD_EXE_FORMAT, (detail,))
                    if found.path is not None and code == "unreadable":
                        self.module_for(found.path).unreadable = detail
                    self._fail(attempt, ERROR_BAD_EXE_FORMAT, chain, path, imported.name)
            elif not imported.delay:
                provider = found.resolution.path
                if found.path is not None and provider is not None:
                    attempt.found_how.setdefault(provider.name.lower(), found.resolution.found_by)
                    if found.resolution.found_by.step in SYSTEM_STEPS:
                        # a DLL of Windows itself: mapped, but its own imports are the OS's business
                        attempt.pending[provider.name.lower()] = provider
                    else:
                        self.load(provider, attempt, [*chain, provider])
                if provider is not None:
                    missing = self._check_symbols(path, imported, provider, attempt, chain)
                    if missing:
                        problems.append(f"missing-symbols:{len(missing)}")
            deps.append(Dependency(imported.name, kind, found.resolution, found.searched, tuple(problems)))
        if first_visit:
            module.dependencies = deps

    def _check_symbols(self, importer: Path, imported, provider: Path, attempt: _Attempt, chain) -> list[str]:
        symbols = imported.symbols
        if symbols is None and imported.name.lower() in self.own_names and not self.graph.is_own(provider):
            # a name of torch's own files found as another copy (a stale one in System32 or on PATH): the
            # import list skipped as torch-internal is read now
            symbols = self._imported_symbols(importer, imported.name)
        if not symbols:
            return []
        if not self.check_all_symbols and self.graph.is_own(importer) and self.graph.is_own(provider):
            return []  # built together and verified by the integrity check; reading torch_cpu's 60k exports costs 0.1 s
        if (
            self.model.system_known
            and self.model.system_dir
            and _same(provider.parent, self.model.system_dir)
            and dll_kind(provider.name) != "other"
        ):
            return []  # the OS's own DLLs are consistent with the OS (a stale torch DLL copied there is not)
        if dll_kind(provider.name) == "python":
            return []  # the interpreter's own DLL: a wrong Python shows as a different DLL name, not a symbol
        exports = self.exports(provider)
        if isinstance(exports, Unreadable):
            return []
        missing = [str(s) for s in symbols if not exports.has(s)]
        if missing:
            self._issue("symbols", importer, imported.name, provider, ERROR_PROC_NOT_FOUND, tuple(missing))
            self._fail(attempt, ERROR_PROC_NOT_FOUND, chain, importer, imported.name)
            return missing
        self._check_forwarders(provider, exports, symbols, attempt, [*chain, provider])
        return []

    def _imported_symbols(self, importer: Path, name: str):
        wanted = name.lower()
        info = read_pe(importer, symbols=lambda n: n.lower() == wanted)
        if not isinstance(info, PEInfo):
            return None
        return next((i.symbols for i in info.imports if i.name.lower() == wanted and not i.delay), None)

    def _check_forwarders(
        self, provider: Path, exports: Exports, symbols: tuple[ImportedSymbol, ...], attempt: _Attempt, chain
    ) -> None:
        if not exports.has_forwarders:
            return
        targets: dict[str, list[str]] = {}
        for symbol in symbols:
            target = exports.forwarder(symbol)
            if target and "." in target:
                dll, _, func = target.rpartition(".")
                targets.setdefault(dll + ".dll" if "." not in dll else dll, []).append(func)
        module = self.module_for(provider)
        for dll, funcs in targets.items():
            if any(d.name.lower() == dll.lower() and d.kind == "forward" for d in module.dependencies):
                continue
            found = self.find(dll, attempt)
            problems: list[str] = []
            if not attempt.record:
                attempt.bindings[(str(provider), dll.lower())] = {
                    "resolution": found.resolution,
                    "searched": found.searched,
                }
            if found.resolution is None:
                self._fail(attempt, ERROR_MOD_NOT_FOUND, chain, provider, dll)
            elif found.resolution.path is not None and found.problem is None:
                target_path = found.resolution.path
                if found.path is not None:
                    self.load(target_path, attempt, [*chain, target_path])
                target_exports = self.exports(target_path)
                if not isinstance(target_exports, Unreadable):
                    wanted = [
                        ImportedSymbol(None, ordinal=int(f[1:]))
                        if f.startswith("#") and f[1:].isdigit()
                        else ImportedSymbol(f)
                        for f in funcs
                    ]
                    missing = [str(s) for s in wanted if not target_exports.has(s)]
                    if missing:
                        problems.append(f"missing-symbols:{len(missing)}")
                        self._issue("forwarder", provider, dll, target_path, ERROR_PROC_NOT_FOUND, tuple(missing))
                        self._fail(attempt, ERROR_PROC_NOT_FOUND, chain, provider, dll)
            module.dependencies.append(Dependency(dll, "forward", found.resolution, found.searched, tuple(problems)))

    def _issue(self, kind, importer, name, provider, error, detail) -> None:
        key = (kind, str(importer), name.lower())
        if key not in self.issue_keys:
            self.issue_keys.add(key)
            self.graph.issues.append(EdgeIssue(kind, importer, name, provider, error, detail))

    @staticmethod
    def _fail(attempt: _Attempt, error: int, chain: list[Path], importer: Path, name: str) -> None:
        if attempt.error is None:
            attempt.error = error
            attempt.failing = (importer, name)
            attempt.chain = list(chain) if chain else [importer]

    def commit(self, attempt: _Attempt, root: Path, who: str) -> None:
        for name, path in attempt.pending.items():
            if name in self.loaded:
                continue
            if path == root:
                self.loaded[name] = (path, SearchPlace(STEP_FULL_PATH, str(path.parent), who))
            else:
                how = attempt.found_how.get(name) or SearchPlace(STEP_FULL_PATH, str(path.parent))
                token = "fallback" if who == "fallback" else "dependency"
                self.loaded[name] = (path, SearchPlace(how.step, how.directory, token))

    # ---- one LoadLibrary call
    def load_root(self, path: Path, kind: str, index: int, *, fallback_prefix: list[Place] | None) -> RootOutcome:
        outcome = RootOutcome(path, kind, index)
        root_module = self.module_for(path)
        root_module.extra["root"] = {"kind": kind, "index": index}
        header = sniff(path)
        if header is not None and header.format == "pe" and self.model.arch and header.arch != self.model.arch:
            root_module.arch = header.arch
            self._issue("arch", path, path.name, path, ERROR_BAD_EXE_FORMAT, (header.arch,))
            outcome.error = outcome.first_error = ERROR_BAD_EXE_FORMAT
            outcome.failing = (path, path.name)
            outcome.chain = [path]
            return outcome
        attempt = _Attempt(self.model.safe_order(path.parent), "0x1100", record=True)
        self.load(path, attempt, [path])
        outcome.first_error = attempt.error
        outcome.uncertain = attempt.uncertain
        if attempt.error is None:
            self.commit(attempt, path, kind)
            return outcome
        outcome.error, outcome.failing, outcome.chain = attempt.error, attempt.failing, attempt.chain
        if attempt.error == ERROR_MOD_NOT_FOUND and fallback_prefix is not None:
            retry = _Attempt(self.model.classic_order(fallback_prefix), "classic", record=False)
            self.load(path, retry, [path])
            outcome.fallback_used = True
            outcome.fallback_error = retry.error
            outcome.fallback_failing = retry.failing
            outcome.uncertain = outcome.uncertain or retry.uncertain
            self._record_fallback(retry)
            if retry.error is None:
                outcome.error = None
                self.commit(retry, path, "fallback")
            else:
                outcome.error, outcome.failing, outcome.chain = retry.error, retry.failing, retry.chain
        return outcome

    def _record_fallback(self, attempt: _Attempt) -> None:
        for (importer, name), binding in attempt.bindings.items():
            module = self.graph.modules.get(importer)
            if module is None:
                continue
            res: Resolution | None = binding["resolution"]
            module.extra.setdefault("fallback", {})[name] = {
                "resolution": res.to_dict() if res else None,
                "searched": [s.to_dict() for s in binding["searched"]],
            }

    # ---- process start and torch's VC++ probe
    def seed_interpreter(self) -> None:
        model = self.model
        names: list[str] = []
        for image in (model.python_exe, model.python_dll):
            if image is None:
                continue
            info = read_pe(image, version=False)
            if isinstance(info, PEInfo):
                names.extend(i.name for i in info.normal_imports)
        if model.python_dll is not None:
            self.loaded[model.python_dll.name.lower()] = (
                model.python_dll,
                SearchPlace(STEP_APP_DIR, str(model.python_dll.parent), "interpreter"),
            )
        elif model.python_tag:
            # the interpreter runs, so its DLL is loaded even where this tool cannot look
            self.loaded[f"python{model.python_tag}.dll"] = (
                None,
                SearchPlace(STEP_UNEXAMINED, model.app_dir_shown, "interpreter"),
            )
        if not names:
            names = ["vcruntime140.dll"]
        attempt = _Attempt(model.classic_order(), "classic", record=False)
        for name in dict.fromkeys(n.lower() for n in names):
            if name in self.loaded or is_api_set(name) or dll_kind(name) == "os":
                continue
            found = self.find(name, attempt)
            if found.resolution is not None and found.problem is None:
                how = found.resolution.found_by
                self.loaded[name] = (
                    found.resolution.path,
                    SearchPlace(how.step, how.directory, "interpreter"),
                )
            else:  # python.exe started, so it found this DLL somewhere this tool cannot see
                self.loaded[name] = (None, SearchPlace(STEP_UNEXAMINED, None, "interpreter"))

    def vc_probe(self, dlls: list[str]) -> dict[str, Resolution | None]:
        out: dict[str, Resolution | None] = {}
        for name in dlls:
            attempt = _Attempt(self.model.default_dirs(), "default-dirs", record=False)
            found = self.find(name, attempt)
            out[name] = found.resolution
            examined = found.resolution is not None and found.resolution.path is not None
            if examined and found.problem is None and name.lower() not in self.loaded:
                how = found.resolution.found_by
                self.loaded[name.lower()] = (
                    found.resolution.path,
                    SearchPlace(how.step, how.directory, "vc-probe"),
                )
        return out


def closure(graph: LoadGraph, root: Path) -> list[Module]:
    seen: dict[str, Module] = {}
    stack = [str(root)]
    while stack:
        key = stack.pop()
        if key in seen:
            continue
        module = graph.modules.get(key)
        if module is None:
            continue
        seen[key] = module
        for dep in module.dependencies:
            if dep.kind != "delay-import" and dep.resolution is not None and dep.resolution.path is not None:
                stack.append(str(dep.resolution.path))
    # depth-first from the root, in import order, is what the loader initialises first: keep insertion order
    return list(seen.values())


def first_missing_chain(graph: WindowsLoadGraph, importer: Path) -> list[Path]:
    """The chain from the DLL Windows would blame to ``importer``."""
    blamed = graph.blamed()
    if blamed is not None and blamed.chain and blamed.chain[-1] == importer:
        return blamed.chain
    for outcome in graph.outcomes:
        if outcome.chain and outcome.chain[-1] == importer:
            return outcome.chain
    return graph.chain_to(importer)


def iter_unreadable(graph: LoadGraph) -> Iterable[Module]:
    return (m for m in graph.modules.values() if m.unreadable)
