"""ld.so, modelled: how Linux would load torch's shared objects in this env, and why each one is found where.

The model follows glibc's ``elf/dl-load.c`` (``_dl_map_object``) for every DT_NEEDED entry of an object X:

1. a loaded object whose name, path or SONAME matches is reused (this is how torch's preloading works);
2. if X has no DT_RUNPATH: the DT_RPATH of X, then of the object that loaded X, and so on up to the
   executable (an object's DT_RPATH is ignored when it also has DT_RUNPATH);
3. LD_LIBRARY_PATH;
4. X's own DT_RUNPATH (it applies to X's direct dependencies only, never to theirs);
5. ``/etc/ld.so.cache``; 6. the default directories (both skipped when X has DF_1_NODEFLIB).

``$ORIGIN`` is the directory of the path the object was opened by (symlinks are not resolved, except for the
executable, whose origin comes from ``/proc/self/exe``). A candidate of the wrong ELF class or machine is
skipped; a candidate that is not a valid ELF file stops the load (``file too short``/``invalid ELF header``).
Files reached through different paths are one object when they are the same file (device and inode).

Then, as ``torch/__init__.py`` does it: ``libtorch_global_deps.so`` is dlopened with RTLD_GLOBAL (with the
CUDA libraries of ``site-packages/nvidia/*/lib`` preloaded when that fails for one of them, and proactively
when ``libcudart`` got mapped, on versions that do so), then ``torch/_C*.so`` with RTLD_LOCAL. Version needs
(``GLIBCXX_3.4.30``) are checked against the object that actually won, and (:func:`check_symbols`) every
undefined symbol against the lookup scope of its dlopen: the global scope plus the dlopen's own closure.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from pathlib import Path

from conda_torchcheck.binaries.elf import (
    ElfFile,
    SymbolRef,
    Symbols,
    Unreadable,
    Wanted,
    gnu_hash,
    read_elf,
    read_symbols,
)
from conda_torchcheck.binaries.headers import ELF_MACHINES
from conda_torchcheck.inventory import fs
from conda_torchcheck.loader.graph import Dependency, LoadGraph, Module, Resolution, SearchPlace
from conda_torchcheck.loader.ldcache import (
    LdCache,
    SystemLayout,
    is_system_dir,
    read_host_cache,
    read_preload_file,
    system_layout,
)
from conda_torchcheck.loader.torch_import import record_missing_extension, start_python
from conda_torchcheck.messages import msg
from conda_torchcheck.records import MutableRecord, Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    from conda_torchcheck.loader.contract import LoaderContext


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


# --- the machine ld.so runs on ----------------------------------------------------------------------------


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


# --- the simulated process --------------------------------------------------------------------------------


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


class LdSo:
    """A simulated ld.so for one process: map objects, resolve DT_NEEDED, check version needs."""

    def __init__(self, search: LinuxSearch, graph: LoadGraph) -> None:
        self.search = search
        self.graph = graph
        self.loaded: list[LoadedObject] = []
        self.global_scope: list[LoadedObject] = []
        self.main: LoadedObject | None = None
        self.steps: list[LoadStep] = []
        #: every object mapped, including those a failed dlopen unmapped again
        self.every_object: list[LoadedObject] = []
        self._stat: dict[str, os.stat_result | None] = {}
        self._dir: dict[str, bool] = {}
        self._elf: dict[str, ElfFile | Unreadable] = {}
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


# --- torch's own loading steps ----------------------------------------------------------------------------


class TorchLoadPlan(Record):
    """What ``torch/__init__.py`` of the installed version does on Linux, read from that file."""

    __slots__ = (
        "package_dir", "global_deps", "c_module", "cuda_libs", "optional_cuda_libs", "proactive_preload",
        "cuda_major_dir", "rtld_global", "source",
    )  # fmt: skip

    def __init__(
        self,
        package_dir: Path,
        global_deps: Path | None,
        c_module: Path | None,
        cuda_libs: tuple[tuple[str, str], ...] = (),
        optional_cuda_libs: tuple[tuple[str, str], ...] = (),
        proactive_preload: bool = False,
        cuda_major_dir: bool = False,
        rtld_global: bool = False,
        source: str = "torch/__init__.py",
    ) -> None:
        self.package_dir = package_dir
        self.global_deps = global_deps
        self.c_module = c_module
        self.cuda_libs = cuda_libs
        self.optional_cuda_libs = optional_cuda_libs
        self.proactive_preload = proactive_preload
        self.cuda_major_dir = cuda_major_dir
        self.rtld_global = rtld_global
        self.source = source


# patterns, not compiled regexes: only the torch import needs them, and `tree FILE` must not compile them
_PAIR_TUPLE = r"""\(\s*["'](\w+)["']\s*,\s*["'](lib[^"']+)["']\s*\)"""
_PAIR_DICT = r"""["'](\w+)["']\s*:\s*["'](lib[^"']+)["']"""
_OPTIONAL = r"""_preload_cuda_lib\(\s*["'](\w+)["']\s*,\s*["'](lib[^"']+)["']\s*,\s*required=False"""


def torch_load_plan(package_dir: Path, python_tag: str | None, host: Any = None) -> TorchLoadPlan:
    """Read the CUDA preload list and flags from the installed ``torch/__init__.py`` (never executing it)."""
    try:
        text = fs.read_text(package_dir / "__init__.py", fs.SMALL_LIMIT)
    except OSError:
        text = ""
    cuda_libs: list[tuple[str, str]] = []
    start = text.find("cuda_libs")
    if start >= 0:
        end = text.find("\ndef ", start)
        block = text[start : end if end > 0 else len(text)]
        cuda_libs = re.findall(_PAIR_TUPLE, block) or re.findall(_PAIR_DICT, block)
    optional = re.findall(_OPTIONAL, text)
    lib_dir = package_dir / "lib"
    uses_global_deps = "_load_global_deps" in text or not text
    global_deps = lib_dir / "libtorch_global_deps.so" if uses_global_deps else None
    rtld_global = bool(host is not None and host.get("TORCH_USE_RTLD_GLOBAL")) and "TORCH_USE_RTLD_GLOBAL" in text
    return TorchLoadPlan(
        package_dir=package_dir,
        global_deps=global_deps,
        c_module=find_c_module(package_dir, python_tag),
        cuda_libs=tuple(cuda_libs),
        optional_cuda_libs=tuple(optional),
        proactive_preload="/proc/self/maps" in text,
        cuda_major_dir='f"cu{' in text or "f'cu{" in text,
        rtld_global=rtld_global,
        source="torch/__init__.py" if text else "default",
    )


def find_c_module(package_dir: Path, python_tag: str | None) -> Path | None:
    """``torch/_C.cpython-311-x86_64-linux-gnu.so`` for the env's Python, as Python's import system finds it.

    Python only loads an extension whose suffix is one of the running interpreter's EXTENSION_SUFFIXES
    (``.cpython-3XY[t]-<platform>.so``, ``.abi3.so`` for GIL builds, ``.so``): a ``_C`` built for another
    Python is invisible to it (TC111 reports that), so it is not a candidate here.
    """
    try:
        names = sorted(n for n in os.listdir(package_dir) if n.startswith("_C.") and n.endswith(".so"))
    except OSError:
        return None
    if not python_tag:
        return package_dir / names[0] if names else None
    digits = python_tag.rstrip("t")
    free_threaded = python_tag.endswith("t")
    wanted = f"_C.cpython-{digits}{'t' if free_threaded else ''}-"
    for n in names:
        if n.startswith(wanted):
            return package_dir / n
    for n in names:
        if (n.startswith("_C.abi3") and not free_threaded) or n == "_C.so":
            return package_dir / n
    return None


def cuda_preload_candidates(
    site_dirs: Sequence[Path], folder: str, pattern: str, cuda_version: str | None, cuda_major_dir: bool
) -> list[Path]:
    """``_get_cuda_dep_paths`` for every sys.path entry: the first entry with a match wins."""
    for site in site_dirs:
        dirs = [site / "nvidia" / folder / "lib"]
        if cuda_major_dir and cuda_version:
            dirs.append(site / "nvidia" / f"cu{cuda_version.split('.')[0]}" / "lib")
        dirs.append(site / folder / "lib")
        found: list[Path] = []
        for d in dirs:
            try:
                names = sorted(os.listdir(d))
            except OSError:
                continue
            found += [d / n for n in names if fnmatch.fnmatchcase(n, pattern)]
        if found:
            return found
    return []


# --- building the graphs ----------------------------------------------------------------------------------


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


def simulate_torch_import(ctx: LoaderContext) -> LinuxLoad | None:
    """Model ``import torch`` in ``ctx.env`` on ``ctx.host``; None when the env has no torch package."""
    env = ctx.env
    torch = ctx.torch
    if torch is None or torch.package_dir is None:
        return None
    search = search_context(env, ctx.host)
    graph = _new_graph(search)
    ldso = LdSo(search, graph)
    plan = torch_load_plan(torch.package_dir, env.python.tag, ctx.host)
    start_python(ldso, graph, env, msg("TC4.note.no_python").render())
    load = LinuxLoad(graph, ldso, plan, search)
    sites = [s.path for s in env.site_dirs if s.active]
    cuda_version = torch.cuda_version
    if plan.rtld_global:
        graph.notes.append(msg("TC4.note.rtld_global").render())
    if plan.global_deps is not None:
        label = GROUP_GLOBAL_DEPS
        step = ldso.dlopen(plan.global_deps, label, rtld_global=True)
        if step.failed:
            cuda_names = tuple(lib.split(".", 1)[0] for _f, lib in plan.cuda_libs)
            if plan.cuda_libs and any(n in (step.error or "") for n in cuda_names):
                # torch: "Can happen for wheel with cuda libs as PYPI deps": preload them, then retry
                graph.notes.append(msg("TC4.note.preload_after_failure").render())
                error = _preload_cuda(load, sites, cuda_version, required=True)
                if error is None:
                    step = ldso.dlopen(plan.global_deps, label + " (retry)", rtld_global=True)
                    if step.failed:
                        load.first_error = load.first_error or step.error
                else:
                    load.first_error = load.first_error or error
            else:
                load.first_error = step.error
        elif plan.proactive_preload and plan.cuda_libs and _cudart_mapped(ldso):
            graph.notes.append(msg("TC4.note.preload_proactive").render())
            _preload_cuda(load, sites, cuda_version, required=False)
    if plan.c_module is not None:
        step = ldso.dlopen(plan.c_module, GROUP_C, rtld_global=plan.rtld_global)
        if step.failed and load.first_error is None:
            load.first_error = step.error
    elif plan.global_deps is not None and not any(plan.package_dir.glob("_C.*.so")):
        # a real torch (it has the loading code) without its extension module: the import fails there
        # (a _C for another Python is TC111's finding, not a missing library)
        name = f"_C.cpython-{env.python.tag or '3XY'}-{search.arch}-linux-gnu.so"
        step = LoadStep(GROUP_C, None, error="ModuleNotFoundError: No module named 'torch._C'")
        record_missing_extension(ldso, step, name, SearchPlace(STEP_PATH, str(plan.package_dir)))
        graph.notes.append(msg("TC4.note.no_c_module", dir=str(plan.package_dir)).render())
        load.first_error = load.first_error or step.error
    return load


def _cudart_mapped(ldso: LdSo) -> bool:
    return any(o.path.name.startswith("libcudart.so") for o in ldso.loaded)


def _preload_cuda(load: LinuxLoad, sites: list[Path], cuda_version: str | None, *, required: bool) -> str | None:
    """torch's ``_preload_cuda_deps``: dlopen the first ``nvidia/<folder>/lib/<glob>`` on sys.path.

    On the failure path a required library that is not found raises ValueError (import fails); on the
    proactive path that exception is swallowed, so preloading silently stops at the first gap.
    """
    plan = load.plan
    assert plan is not None
    for folder, pattern, must in [(f, p, True) for f, p in plan.cuda_libs] + [
        (f, p, False) for f, p in plan.optional_cuda_libs
    ]:
        found = cuda_preload_candidates(sites, folder, pattern, cuda_version, plan.cuda_major_dir)
        if not found:
            if must:
                text = f"{pattern} not found in the system path"
                if required:
                    return text
                load.graph.notes.append(msg("TC4.note.preload_stopped", pattern=pattern).render())
                return None
            continue
        label = f"torch preload {found[0].name} dlopen(RTLD_LOCAL)"
        step = load.ldso.dlopen(found[0], label, rtld_global=False, fatal=required)
        load.preloaded.append(found[0])
        if step.failed:
            if required:
                return step.error
            load.graph.notes.append(msg("TC4.note.preload_stopped", pattern=pattern).render())
            return None
    return None


def build_torch_graph(ctx: LoaderContext) -> LoadGraph | None:
    """The load graph of ``import torch`` for a Linux env (None when torch is absent), with undefined
    symbols marked on the edge that loads the library needing them (Python binds them all at import)."""
    load = torch_load(ctx)
    if load is None:
        return None
    mark_symbol_misses(load, torch_symbol_misses(ctx))
    return load.graph


def mark_symbol_misses(load: LinuxLoad, misses: Sequence[SymbolMiss]) -> None:
    """Add ``missing-symbols:<names>`` to the edge that loads each library with undefined symbols."""
    by_module: dict[Path, list[str]] = {}
    for miss in misses:
        by_module.setdefault(miss.required_by, []).append(miss.name)
    if not by_module:
        return
    for module in load.graph.modules.values():
        for i, dep in enumerate(module.dependencies):
            res = dep.resolution
            if res is None or res.path not in by_module or res.found_by.step == STEP_LOADED:
                continue
            problem = "missing-symbols:" + ", ".join(by_module.pop(res.path))
            module.dependencies[i] = Dependency(dep.name, dep.kind, res, dep.searched, dep.problems + (problem,))


def torch_load(ctx: LoaderContext) -> LinuxLoad | None:
    """The simulated import, computed once per check context."""
    return ctx.memo("linux_load", lambda: simulate_torch_import(ctx))


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


# --- symbols --------------------------------------------------------------------------------------------


class SymbolMiss(Record):
    """An undefined symbol that no object in the lookup scope defines (``undefined symbol: X``)."""

    __slots__ = ("name", "version", "version_file", "required_by", "step", "scope")

    def __init__(
        self,
        name: str,
        version: str | None,
        version_file: str | None,
        required_by: Path,
        step: str,
        scope: tuple[Path, ...],
    ) -> None:
        self.name = name
        self.version = version
        self.version_file = version_file
        self.required_by = required_by
        self.step = step
        self.scope = scope


_PYTHON_API = (b"Py", b"_Py")


def symbols_of(obj: LoadedObject) -> Symbols | Unreadable | None:
    if obj.symbols is None and obj.elf is not None:
        obj.symbols = read_symbols(obj.elf)
    return obj.symbols


def check_symbols(load: LinuxLoad, steps: Iterable[LoadStep] | None = None) -> list[SymbolMiss]:
    """Every non-weak undefined symbol of every object mapped by a dlopen, looked up in that dlopen's scope:
    the global scope (executable, its libraries, LD_PRELOAD, RTLD_GLOBAL dlopens before it) then the dlopen's
    own breadth-first closure. Python's C API is taken as provided when the interpreter could not be read.

    Each reference is looked up the way ld.so does: its hash (computed once) through each scope object's hash
    table in turn, its version checked only on the symbol found, so no object's whole table is read."""
    ldso = load.ldso
    python_unknown = ldso.main is None or ldso.main.elf is None or ldso.main.elf.tables.symtab is None
    misses: list[SymbolMiss] = []
    global_scope: list[LoadedObject] = []
    hashes: dict[bytes, int] = {}
    for step in steps if steps is not None else ldso.steps:
        if step.root is None:
            continue
        scope = list(global_scope)
        for obj in step.searchlist:
            if obj not in scope:
                scope.append(obj)
        if not step.failed:
            wanted: dict[tuple[bytes, str | None], list[LoadedObject]] = {}
            for obj in step.new_objects:
                syms = symbols_of(obj)
                if isinstance(syms, Symbols):
                    for key in syms.required():
                        wanted.setdefault(key, []).append(obj)
            remaining = set(wanted)
            if python_unknown:
                remaining = {k for k in remaining if not k[0].startswith(_PYTHON_API)}
            assumed = {d.name for o in scope for d in o.module.dependencies if d.resolution and d.resolution.assumed}
            if assumed:
                # libraries of a machine not examined here may define anything: only a reference versioned
                # against a library that was examined can still be judged
                remaining = {k for k in remaining if all(_versioned_from_known(o, k[0], assumed) for o in wanted[k])}
            pending: dict[int, list[Wanted]] = {}
            for name, version in remaining:
                h = hashes.get(name)
                if h is None:
                    h = hashes[name] = gnu_hash(name)
                pending.setdefault(h | 1, []).append((name, version, h))
            for obj in scope:
                if not pending:
                    break
                syms = symbols_of(obj)
                if isinstance(syms, Symbols):
                    for entry in syms.defined_among(pending):
                        entries = pending[entry[2] | 1]
                        entries.remove(entry)
                        if not entries:
                            del pending[entry[2] | 1]
            remaining = {(n, v) for entries in pending.values() for n, v, _h in entries}
            scope_paths = tuple(o.path for o in scope)
            for name, version in sorted(remaining, key=lambda k: (k[0], k[1] or "")):
                for obj in wanted[(name, version)]:
                    syms = symbols_of(obj)
                    ref = SymbolRef(*syms.ref_of(name, version, any_version=False))  # type: ignore[union-attr,misc]
                    misses.append(
                        SymbolMiss(ref.text, ref.version, ref.version_file, obj.path, step.label, scope_paths)
                    )
                    obj.module.extra.setdefault("undefined_symbols", []).append(
                        {"name": ref.text, "version": ref.version, "from": ref.version_file}
                    )
        if step.rtld_global and not step.failed:
            for obj in step.searchlist:
                if obj not in global_scope:
                    global_scope.append(obj)
    return misses


def _versioned_from_known(obj: LoadedObject, name: bytes, assumed: set[str]) -> bool:
    syms = symbols_of(obj)
    if not isinstance(syms, Symbols):
        return False
    ref = syms.ref_of(name)
    return ref is not None and ref[2] is not None and ref[2] not in assumed


def torch_symbol_misses(ctx: LoaderContext) -> list[SymbolMiss]:
    """Symbol misses of the simulated ``import torch``, computed once per context."""
    load = torch_load(ctx)
    if load is None:
        return []
    return ctx.memo("linux_symbol_misses", lambda: check_symbols(load))
