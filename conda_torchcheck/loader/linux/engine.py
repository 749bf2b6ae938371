"""ld.so's engine, modelled (glibc's ``elf/dl-load.c``): the simulated process, its loaded objects and dlopen
steps, and the closure of one ELF file loaded as a program."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from conda_torchcheck.binaries.elf import ElfFile, Symbols, Unreadable, read_elf, read_symbols
from conda_torchcheck.binaries.headers import ELF_MACHINES
from conda_torchcheck.loader.graph import Dependency, LoadGraph, Module, Resolution, SearchPlace
from conda_torchcheck.loader.ldcache import is_system_dir
from conda_torchcheck.loader.linux.search import (
    ASSUMED_SYSTEM,
    GROUP_PROCESS,
    GROUP_PROCESS_SUFFIX,
    INTERPRETERS,
    STEP_CACHE,
    STEP_DEFAULT_DIRS,
    STEP_LD_LIBRARY_PATH,
    STEP_LOADED,
    STEP_PATH,
    STEP_RPATH,
    STEP_RUNPATH,
    STEP_UNKNOWN_SYSTEM,
    SYSTEM_SONAMES,
    UNKNOWN_SYSTEM,
    LinuxSearch,
    search_context,
)
from conda_torchcheck.records import MutableRecord

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from conda_torchcheck.loader.contract import LoaderContext
    from conda_torchcheck.loader.linux.torch_plan import TorchLoadPlan


class LoadedObject:
    """One object in the simulated process (glibc's ``struct link_map``); equal only to itself."""

    __slots__ = ("path", "elf", "module", "names", "loader", "identity", "group", "is_main", "symbols")

    def __init__(
        self,
        path: Path,
        elf: ElfFile | None,
        module: Module,
        names: set[str],
        loader: LoadedObject | None,
        identity: tuple[int, int] | None,
        group: str,
    ) -> None:
        self.path = path  # the path it was opened by (l_name); $ORIGIN is its directory
        self.elf = elf
        self.module = module
        self.names = names
        self.loader = loader
        self.identity = identity
        self.group = group
        self.is_main = False
        self.symbols: Symbols | Unreadable | None = None

    def __repr__(self) -> str:
        return f"LoadedObject({str(self.path)!r}, group={self.group!r})"

    @property
    def origin(self) -> str:
        return str(self.path.parent)


class LoadStep(MutableRecord):
    """One dlopen (or the process start): what it mapped, and the first error ld.so would report."""

    __slots__ = (
        "label", "root", "new_objects", "searchlist", "rtld_global", "fatal", "error", "misses", "version_failures",
    )  # fmt: skip

    def __init__(
        self,
        label: str,
        root: LoadedObject | None,
        *,
        rtld_global: bool = False,
        fatal: bool = True,
        error: str | None = None,
    ) -> None:
        self.label = label
        self.root = root
        self.new_objects: list[LoadedObject] = []
        self.searchlist: list[LoadedObject] = []
        self.rtld_global = rtld_global
        #: False for loads whose failure torch swallows (its proactive CUDA preloading)
        self.fatal = fatal
        self.error = error
        #: (requiring object, dependency) for every unresolved DT_NEEDED, in ld.so's order
        self.misses: list[tuple[LoadedObject | None, Dependency]] = []
        #: (requiring object, dependency name, version) for every unmet version need, in ld.so's order
        self.version_failures: list[tuple[LoadedObject, str, str, LoadedObject]] = []

    @property
    def failed(self) -> bool:
        return self.error is not None


class FileReads:
    """The headers and dynamic symbols read of each file, by path: read once however many processes are modelled."""

    __slots__ = ("elf", "symbols")

    def __init__(self) -> None:
        self.elf: dict[str, ElfFile | Unreadable] = {}
        #: path -> (the ElfFile the symbols were read for, its symbols)
        self.symbols: dict[str, tuple[ElfFile, Symbols | Unreadable]] = {}

    def symbols_of(self, obj: LoadedObject) -> Symbols | Unreadable | None:
        """``obj``'s dynamic symbols, read on first use (and kept on ``obj``)."""
        if obj.symbols is None and obj.elf is not None:
            key = str(obj.path)
            known = self.symbols.get(key)
            if known is None or known[0] is not obj.elf:
                known = self.symbols[key] = (obj.elf, read_symbols(obj.elf))
            obj.symbols = known[1]
        return obj.symbols


class LdSo:
    """A simulated ld.so for one process: map objects, resolve DT_NEEDED, check version needs."""

    def __init__(self, search: LinuxSearch, graph: LoadGraph, files: FileReads | None = None) -> None:
        self.search = search
        self.graph = graph
        #: what was read of each file, shared by the models of one run (a second ``import torch`` for other
        #: packages' extensions reads no header or symbol table again)
        self.files = FileReads() if files is None else files
        self.loaded: list[LoadedObject] = []
        self.global_scope: list[LoadedObject] = []
        self.main: LoadedObject | None = None
        self.steps: list[LoadStep] = []
        #: every object mapped, including those a failed dlopen unmapped again
        self.every_object: list[LoadedObject] = []
        self._stat: dict[str, os.stat_result | None] = {}
        self._dir: dict[str, bool] = {}
        self._elf = self.files.elf
        self._class_ok: dict[str, str | None] = {}

    # -- file system, cached --------------------------------------------------------------------------------
    def _stat_of(self, path: str) -> os.stat_result | None:
        """The file's stat (following symlinks), None when missing or a directory."""
        if path not in self._stat:
            try:
                st = os.stat(path)
                self._stat[path] = None if stat.S_ISDIR(st.st_mode) else st
            except (OSError, ValueError):
                self._stat[path] = None
        return self._stat[path]

    def _is_dir(self, path: str) -> bool:
        if path not in self._dir:
            self._dir[path] = os.path.isdir(path)
        return self._dir[path]

    def elf(self, path: Path | str) -> ElfFile | Unreadable:
        key = str(path)
        if key not in self._elf:
            self._elf[key] = read_elf(path)
        return self._elf[key]

    def _incompatible(self, path: str) -> str | None:
        """Why ld.so would skip this candidate (wrong class or machine), else None."""
        if path not in self._class_ok:
            reason = None
            try:
                with open(path, "rb") as fh:
                    head = fh.read(20)
            except OSError:
                head = b""
            if len(head) >= 20 and head[:4] == b"\x7fELF":
                bits = 64 if head[4] == 2 else 32
                machine = int.from_bytes(head[18:20], "little" if head[5] == 1 else "big")
                if bits != self.search.bits or machine != self.search.machine:
                    reason = f"ELF{bits} {ELF_MACHINES.get(machine, hex(machine))}"
            self._class_ok[path] = reason
        return self._class_ok[path]

    # -- names --------------------------------------------------------------------------------------------
    def expand(self, entry: str, obj: LoadedObject | None) -> str:
        """Expand $ORIGIN, $LIB and $PLATFORM as ld.so does (``${...}`` forms too)."""
        if "$" not in entry:
            return entry
        origin = obj.origin if obj is not None else (str(self.search.cwd) if self.search.cwd else ".")
        value = re.sub(r"\$(\{ORIGIN\}|ORIGIN(?![A-Za-z0-9_]))", lambda _m: origin, entry)
        value = re.sub(r"\$(\{LIB\}|LIB(?![A-Za-z0-9_]))", lambda _m: self.search.layout.lib_token, value)
        value = re.sub(
            r"\$(\{PLATFORM\}|PLATFORM(?![A-Za-z0-9_]))", lambda _m: self.search.layout.platform_token, value
        )
        return value

    def _absolute(self, directory: str) -> str:
        if os.path.isabs(directory) or self.search.cwd is None:
            return directory
        return os.path.join(str(self.search.cwd), directory)

    def find_loaded(self, name: str) -> LoadedObject | None:
        for obj in self.loaded:
            if name in obj.names:
                return obj
        return None

    def _same_file(self, st: os.stat_result) -> LoadedObject | None:
        for obj in self.loaded:
            if obj.identity == (st.st_dev, st.st_ino):
                return obj
        return None

    # -- search -------------------------------------------------------------------------------------------
    def _try_dir(self, directory: str, name: str, step: str, note: str, searched: list[SearchPlace]):
        """Look for ``name`` in ``directory`` (and its glibc-hwcaps subdirectories); returns the path or None."""
        directory = self._absolute(directory)
        candidates = []
        hw = os.path.join(directory, "glibc-hwcaps")
        if self.search.layout.hwcaps and self._is_dir(hw):
            candidates += [os.path.join(hw, sub, name) for sub in self.search.layout.hwcaps]
        candidates.append(os.path.join(directory, name))
        for candidate in candidates:
            if self._stat_of(candidate) is None:
                continue
            wrong = self._incompatible(candidate)
            if wrong is not None:
                searched.append(SearchPlace(step, directory, note=f"skipped: {wrong} (wrong ELF class or machine)"))
                continue
            return candidate
        searched.append(SearchPlace(step, directory, note))
        return None

    def search_needed(
        self, name: str, loader: LoadedObject | None
    ) -> tuple[str | LoadedObject | None, SearchPlace | None, list[SearchPlace], bool]:
        """Resolve a DT_NEEDED ``name`` for ``loader``: (path or loaded object or None, how, searched, assumed)."""
        already = self.find_loaded(name)
        if already is not None:
            how = SearchPlace(STEP_LOADED, str(already.path.parent), note=already.group)
            return already, how, [], False
        return self._search_paths(name, loader)

    def _search_paths(
        self, name: str, loader: LoadedObject | None
    ) -> tuple[str | LoadedObject | None, SearchPlace | None, list[SearchPlace], bool]:
        searched: list[SearchPlace] = []
        if "/" in name:
            path = self._absolute(self.expand(name, loader))
            if self._stat_of(path) is not None:
                return path, SearchPlace(STEP_PATH, os.path.dirname(path)), searched, False
            searched.append(SearchPlace(STEP_PATH, os.path.dirname(path)))
            return None, None, searched, False
        elf = loader.elf if loader is not None else None
        # 2. DT_RPATH of the loader and its loaders (only when the loader has no DT_RUNPATH)
        if elf is None or not elf.runpath:
            seen_main = False
            cur = loader
            while cur is not None:
                if cur.elf is not None and cur.elf.rpath and not cur.elf.runpath:
                    note = f"DT_RPATH of {cur.path.name}"
                    for entry in cur.elf.rpath:
                        found = self._try_dir(self.expand(entry, cur), name, STEP_RPATH, note, searched)
                        if found:
                            return found, SearchPlace(STEP_RPATH, os.path.dirname(found), note), searched, False
                seen_main = seen_main or cur.is_main
                cur = cur.loader
            main = self.main
            if not seen_main and main is not None and main.elf is not None and main.elf.rpath and not main.elf.runpath:
                note = f"DT_RPATH of the executable {main.path.name}"
                for entry in main.elf.rpath:
                    found = self._try_dir(self.expand(entry, main), name, STEP_RPATH, note, searched)
                    if found:
                        return found, SearchPlace(STEP_RPATH, os.path.dirname(found), note), searched, False
        # 3. LD_LIBRARY_PATH
        for entry in self.search.ld_library_path:
            note = "LD_LIBRARY_PATH"
            found = self._try_dir(self.expand(entry, self.main), name, STEP_LD_LIBRARY_PATH, note, searched)
            if found:
                return found, SearchPlace(STEP_LD_LIBRARY_PATH, os.path.dirname(found), note), searched, False
        # 4. DT_RUNPATH of the loader itself
        if elf is not None and elf.runpath and loader is not None:
            note = f"DT_RUNPATH of {loader.path.name}"
            for entry in elf.runpath:
                found = self._try_dir(self.expand(entry, loader), name, STEP_RUNPATH, note, searched)
                if found:
                    return found, SearchPlace(STEP_RUNPATH, os.path.dirname(found), note), searched, False
        nodeflib = elf is not None and elf.nodeflib
        # 5. ld.so.cache
        if not self.search.system_known:
            if name in SYSTEM_SONAMES:
                how = SearchPlace(STEP_CACHE, None, ASSUMED_SYSTEM)
                return None, how, searched, True
            searched.append(SearchPlace(STEP_UNKNOWN_SYSTEM, None, UNKNOWN_SYSTEM))
            return None, None, searched, False
        cache = self.search.cache
        assert cache is not None
        cached = cache.lookup(name)
        if cached is not None and not (nodeflib and is_system_dir(os.path.dirname(cached), self.search.layout)):
            if self._stat_of(cached) is not None and self._incompatible(cached) is None:
                return cached, SearchPlace(STEP_CACHE, os.path.dirname(cached), cache.source), searched, False
            searched.append(SearchPlace(STEP_CACHE, os.path.dirname(cached), f"stale entry {cached} (run ldconfig)"))
        else:
            searched.append(SearchPlace(STEP_CACHE, cache.source, "no entry"))
        # 6. default directories
        if not nodeflib:
            for directory in self.search.layout.default_dirs:
                found = self._try_dir(directory, name, STEP_DEFAULT_DIRS, "", searched)
                if found:
                    return found, SearchPlace(STEP_DEFAULT_DIRS, directory), searched, False
        return None, None, searched, False

    def alternative(self, name: str, loader: LoadedObject) -> tuple[str | None, SearchPlace | None]:
        """Where ``name`` would be found for ``loader`` without LD_LIBRARY_PATH (for shadowing checks)."""
        saved = self.search
        self.search = saved.replace(ld_library_path=())
        try:
            found, how, _searched, _assumed = self._search_paths(name, loader)
        finally:
            self.search = saved
        return (found if isinstance(found, str) else None), how

    def object_at(self, path: Path) -> LoadedObject | None:
        return self._loaded_at(path) or next((o for o in self.every_object if o.path == path), None)

    # -- mapping ------------------------------------------------------------------------------------------
    def _new_object(self, path: str, loader: LoadedObject | None, group: str, requested: str) -> LoadedObject:
        p = Path(path)
        info = self.elf(p)
        st = self._stat_of(path)
        identity = (st.st_dev, st.st_ino) if st is not None else None
        module = self.graph.modules.get(str(p))
        if module is None:
            module = Module(p, arch=info.arch if isinstance(info, ElfFile) else None)
            if isinstance(info, Unreadable):
                module.unreadable = info.reason
            else:
                module.extra.update(_module_extra(info, group))
            self.graph.modules[str(p)] = module
        names = {requested, path}
        elf = info if isinstance(info, ElfFile) else None
        if elf is not None and elf.soname:
            names.add(elf.soname)
        obj = LoadedObject(p, elf, module, names, loader, identity, group)
        self.loaded.append(obj)
        self.every_object.append(obj)
        return obj

    def _map_closure(self, step: LoadStep, first: Sequence[LoadedObject]) -> None:
        """Breadth-first over DT_NEEDED as ``_dl_map_object_deps`` does; records edges, misses, versions.

        Objects mapped by an earlier step are not searched again: their recorded edges are followed, so the
        step's search list (its symbol lookup scope) is complete.
        """
        queue = list(first)
        seen = {id(o) for o in queue}
        step.searchlist.extend(queue)
        new = {id(o) for o in step.new_objects}
        index = 0
        while index < len(queue):
            obj = queue[index]
            index += 1
            if id(obj) not in new:
                for target in self._closure_of(obj)[1:]:
                    if id(target) not in seen:
                        seen.add(id(target))
                        queue.append(target)
                        step.searchlist.append(target)
                continue
            if obj.elf is None:
                if obj.module.unreadable and step.error is None:
                    step.error = f"{obj.path}: {obj.module.unreadable}"
                continue
            obj.module.dependencies = [d for d in obj.module.dependencies if d.kind != "needed"]
            for name in obj.elf.needed:
                target, how, searched, assumed = self.search_needed(name, obj)
                if isinstance(target, str):
                    st = self._stat_of(target)
                    same = self._same_file(st) if st is not None else None
                    if same is not None:
                        how = SearchPlace(STEP_LOADED, how.directory if how else None, same.group)
                        target = same
                    else:
                        target = self._new_object(target, obj, step.label, name)
                        step.new_objects.append(target)
                        new.add(id(target))
                if isinstance(target, LoadedObject):
                    dep = Dependency(name, "needed", Resolution(target.path, how), tuple(searched))
                    if id(target) not in seen:
                        seen.add(id(target))
                        queue.append(target)
                        step.searchlist.append(target)
                elif assumed:
                    dep = Dependency(name, "needed", Resolution(None, how, assumed=True), tuple(searched))
                else:
                    dep = Dependency(name, "needed", None, tuple(searched))
                    step.misses.append((obj, dep))
                    if step.error is None:
                        step.error = f"{name}: cannot open shared object file: No such file or directory"
                obj.module.dependencies.append(dep)
        # version needs, in search-list order (``_dl_check_map_versions`` runs after everything is mapped)
        for obj in step.searchlist:
            if obj.elf is not None and id(obj) in new:
                self._check_versions(step, obj)

    def _check_versions(self, step: LoadStep, obj: LoadedObject) -> None:
        assert obj.elf is not None
        if not obj.elf.version_needs:
            return
        by_file: dict[str, LoadedObject] = {}
        for dep in obj.module.dependencies:
            if dep.resolution is not None and dep.resolution.path is not None:
                target = self._loaded_at(dep.resolution.path)
                if target is not None:
                    by_file[dep.name] = target
        problems: list[str] = []
        missing: list[dict[str, Any]] = []
        for need in obj.elf.version_needs:
            target = by_file.get(need.file) or self.find_loaded(need.file)
            if target is None or target.elf is None:
                continue
            if not target.elf.version_defs and target.elf.version_base is None:
                continue  # ld.so: "no version information available" (a warning in LD_DEBUG only)
            if target.elf.defines_version(need.version) or need.weak:
                continue
            text = f"{target.path}: version `{need.version}' not found (required by {obj.path})"
            problems.append(text)
            missing.append({"library": need.file, "version": need.version, "found": str(target.path)})
            step.version_failures.append((obj, need.file, need.version, target))
            if step.error is None:
                step.error = text
        if problems:
            obj.module.extra.setdefault("missing_versions", []).extend(missing)
            deps = obj.module.dependencies
            for i, dep in enumerate(deps):
                extra = tuple(p for p, m in zip(problems, missing) if m["library"] == dep.name)
                if extra and not set(extra) <= set(dep.problems):
                    deps[i] = Dependency(dep.name, dep.kind, dep.resolution, dep.searched, dep.problems + extra)

    def _loaded_at(self, path: Path) -> LoadedObject | None:
        for obj in self.loaded:
            if obj.path == path:
                return obj
        return None

    # -- process life -------------------------------------------------------------------------------------
    def start_process(self, executable: Path | None) -> LoadStep:
        """The executable (its origin is its real path), LD_PRELOAD, the interpreter, then its DT_NEEDED."""
        # named after the program: for `tree FILE` that is FILE, as for ldd, not python
        label = f"{os.path.basename(executable)} {GROUP_PROCESS_SUFFIX}" if executable is not None else GROUP_PROCESS
        step = LoadStep(label, None, rtld_global=True)
        interp_path = INTERPRETERS.get(self.search.arch)
        if executable is not None:
            real = Path(os.path.realpath(executable))
            main = self._new_object(str(real), None, label, str(executable))
            main.is_main = True
            main.names.add(str(executable))
            main.module.extra["executable"] = str(executable)
            self.main = main
            step.root = main
            if main.elf is not None and main.elf.interpreter:
                interp_path = main.elf.interpreter
        if interp_path and self.search.system_known and self._stat_of(interp_path) is not None:
            interp = self._new_object(interp_path, None, label, interp_path)
            interp.names.add(os.path.basename(interp_path))
        elif interp_path:
            self._assumed_interpreter = os.path.basename(interp_path)
        first: list[LoadedObject] = [self.main] if self.main is not None else []
        if self.main is not None:
            step.new_objects.append(self.main)
        for entry in self.search.preload:
            target, how, searched, _assumed = self.search_needed(entry, self.main)
            if isinstance(target, str):
                obj = self._new_object(target, self.main, "LD_PRELOAD", entry)
                step.new_objects.append(obj)
                first.append(obj)
                if self.main is not None:
                    self._edge(
                        self.main.module, Dependency(entry, "preload", Resolution(obj.path, how), tuple(searched))
                    )
            elif self.main is not None:
                self._edge(self.main.module, Dependency(entry, "preload", None, tuple(searched)))
        self._map_closure(step, first)
        self.global_scope = list(self.loaded)
        self.steps.append(step)
        return step

    def dlopen(
        self, path: Path, label: str, *, rtld_global: bool, caller: LoadedObject | None = None, fatal: bool = True
    ) -> LoadStep:
        """dlopen by full path, as ctypes.CDLL and Python's import do; failed dlopens unmap what they mapped."""
        step = LoadStep(label, None, rtld_global=rtld_global, fatal=fatal)
        key = str(path)
        caller_module = (caller or self.main).module if (caller or self.main) is not None else None
        existing = self.find_loaded(key)
        st = self._stat_of(key)
        if existing is None and st is not None:
            existing = self._same_file(st)
        if existing is not None:
            step.root = existing
            how = SearchPlace(STEP_LOADED, str(existing.path.parent), existing.group)
            self._edge(caller_module, Dependency(path.name, "dlopen", Resolution(existing.path, how)))
            step.searchlist = self._closure_of(existing)
            self.steps.append(step)
            return step
        if st is None:
            dep = Dependency(str(path), "dlopen", None, (SearchPlace(STEP_PATH, str(path.parent)),))
            self._edge(caller_module, dep)
            step.misses.append((caller or self.main, dep))
            step.error = f"{path}: cannot open shared object file: No such file or directory"
            self.steps.append(step)
            return step
        root = self._new_object(key, caller or self.main, label, key)
        step.root = root
        step.new_objects.append(root)
        self._edge(
            caller_module,
            Dependency(path.name, "dlopen", Resolution(root.path, SearchPlace(STEP_PATH, str(path.parent)))),
        )
        self._map_closure(step, [root])
        if step.failed:
            # glibc unmaps everything a failed dlopen mapped
            fresh = {id(o) for o in step.new_objects}
            self.loaded = [o for o in self.loaded if id(o) not in fresh]
        elif rtld_global:
            for obj in step.searchlist:
                if obj not in self.global_scope:
                    self.global_scope.append(obj)
        self.steps.append(step)
        return step

    def _edge(self, module: Module | None, dep: Dependency) -> None:
        if module is None:
            return
        if any(d.kind == dep.kind and d.name == dep.name for d in module.dependencies):
            return
        module.dependencies.append(dep)

    def _closure_of(self, root: LoadedObject) -> list[LoadedObject]:
        out = [root]
        seen = {id(root)}
        i = 0
        while i < len(out):
            obj = out[i]
            i += 1
            for dep in obj.module.dependencies:
                if dep.kind != "needed" or dep.resolution is None or dep.resolution.path is None:
                    continue
                target = self._loaded_at(dep.resolution.path)
                if target is not None and id(target) not in seen:
                    seen.add(id(target))
                    out.append(target)
        return out

    _assumed_interpreter: str | None = None


def _module_extra(elf: ElfFile, group: str) -> dict[str, Any]:
    extra: dict[str, Any] = {"loaded_by": group}
    if elf.soname:
        extra["soname"] = elf.soname
    if elf.rpath:
        extra["rpath"] = list(elf.rpath)
    if elf.runpath:
        extra["runpath"] = list(elf.runpath)
    return extra


class LinuxLoad(MutableRecord):
    """The simulated import of torch: the graph plus what the checks need beyond it."""

    __slots__ = ("graph", "ldso", "plan", "search", "first_error", "preloaded")

    def __init__(
        self,
        graph: LoadGraph,
        ldso: LdSo,
        plan: TorchLoadPlan | None,
        search: LinuxSearch,
        first_error: str | None = None,
    ) -> None:
        self.graph = graph
        self.ldso = ldso
        self.plan = plan
        self.search = search
        #: what torch's import would report first (an ld.so message or torch's own ValueError), if it fails
        self.first_error = first_error
        self.preloaded: list[Path] = []

    @property
    def steps(self) -> list[LoadStep]:
        return self.ldso.steps


def _new_graph(search: LinuxSearch) -> LoadGraph:
    graph = LoadGraph(platform="linux")
    graph.notes.extend(search.notes)
    order: list[SearchPlace] = [
        SearchPlace(STEP_LOADED),
        SearchPlace(STEP_RPATH, note="DT_RPATH of the requiring object and its loaders, unless it has DT_RUNPATH"),
    ]
    order += [SearchPlace(STEP_LD_LIBRARY_PATH, d, search.ld_library_path_source) for d in search.ld_library_path]
    order.append(SearchPlace(STEP_RUNPATH, note="DT_RUNPATH of the requiring object (direct dependencies only)"))
    if search.system_known and search.cache is not None:
        order.append(SearchPlace(STEP_CACHE, None, search.cache.source))
        order += [SearchPlace(STEP_DEFAULT_DIRS, d) for d in search.layout.default_dirs]
    else:
        order.append(SearchPlace(STEP_UNKNOWN_SYSTEM, None, UNKNOWN_SYSTEM))
    graph.search_order = order
    return graph


def build_graph_for_file(ctx: LoaderContext, path: Path) -> LoadGraph:
    """The closure of one ELF file as ld.so would load it as a program (what ``ldd``/``lddtree`` show)."""
    return load_file(ctx, path).graph


def load_file(ctx: LoaderContext, path: Path) -> LinuxLoad:
    env, host = ctx.env, ctx.host
    info = read_elf(path)
    arch = info.arch if isinstance(info, ElfFile) else None
    bits = info.bits if isinstance(info, ElfFile) else 64
    search = search_context(env, host, arch=arch, bits=bits)
    graph = _new_graph(search)
    ldso = LdSo(search, graph)
    ldso.start_process(path)
    assert ldso.main is not None
    graph.roots.append(ldso.main.path)
    first = next((s.error for s in ldso.steps if s.error), None)
    return LinuxLoad(graph, ldso, None, search, first_error=first)
