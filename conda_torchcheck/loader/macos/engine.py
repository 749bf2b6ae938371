"""dyld's engine, modelled (apple-oss-distributions/dyld): the simulated process, its images and dlopen
steps, and one Mach-O file loaded as a program or dlopened by the env's python."""

from __future__ import annotations

import os
from pathlib import Path

from conda_torchcheck.binaries.macho import DylibRef, MachOFile, MachOSlice, Unreadable, read_macho, version_text
from conda_torchcheck.loader.graph import Dependency, LoadGraph, Module, Resolution, SearchPlace
from conda_torchcheck.loader.macos.search import (
    GROUP_PROCESS,
    KIND_BY_REF,
    NOT_EXAMINED,
    STEP_CACHE,
    STEP_DEFAULT_FALLBACK,
    STEP_DLOPEN,
    STEP_DYLD_LIBRARY_PATH,
    STEP_EXECUTABLE,
    STEP_FALLBACK,
    STEP_LOADED,
    STEP_LOADER,
    STEP_PATH,
    STEP_RPATH,
    STEP_UNEXAMINED,
    MacSearch,
    _table,
    search_context,
    version_tuple,
)
from conda_torchcheck.records import MutableRecord, Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from conda_torchcheck.loader.contract import LoaderContext
    from conda_torchcheck.loader.macos.torch_plan import TorchLoadPlan


class Image:
    """One image in the simulated process (dyld's ``Loader``); equal only to itself."""

    __slots__ = ("path", "slice", "module", "loader", "group", "is_main", "install_name", "real")

    def __init__(
        self, path: Path, sl: MachOSlice | None, module: Module, loader: Image | None, group: str, real: str
    ) -> None:
        self.path = path
        self.slice = sl
        self.module = module
        self.loader = loader
        self.group = group
        self.is_main = False
        self.install_name = sl.install_name if sl is not None else None
        self.real = real

    def __repr__(self) -> str:
        return f"Image({self.path})"


class LoadStep(MutableRecord):
    """One dlopen (or the process start): what it mapped, and the first error dyld would report."""

    __slots__ = ("label", "root", "new_images", "fatal", "error", "misses", "rejected")

    def __init__(self, label: str, root: Image | None = None, *, fatal: bool = True, error: str | None = None):
        self.label = label
        self.root = root
        self.new_images: list[Image] = []
        self.fatal = fatal
        self.error = error
        #: (requiring image, dependency) for every unresolved non-weak load command, in dyld's order
        self.misses: list[tuple[Image | None, Dependency]] = []
        #: (requiring image, dependency, candidate path, dyld's reason) for candidates skipped on the way
        self.rejected: list[tuple[Image | None, Dependency | None, str, str]] = []

    @property
    def failed(self) -> bool:
        return self.error is not None


class Candidate(Record):
    __slots__ = ("path", "step", "note")

    def __init__(self, path: str, step: str, note: str = "") -> None:
        self.path = path  # as dyld composes it (not normalised: dyld prints '…/bin/../lib/…')
        self.step = step
        self.note = note


class Dyld:
    """The images of one process and dyld's search for each load command."""

    def __init__(self, search: MacSearch, graph: LoadGraph, prefix: Path | None) -> None:
        self.search = search
        self.graph = graph
        self.prefix = Path(os.path.realpath(prefix)) if prefix is not None else None
        self.loaded: list[Image] = []
        self.main: Image | None = None
        self.steps: list[LoadStep] = []
        self._files: dict[str, MachOFile | Unreadable] = {}
        self._processed: set[int] = set()
        cfg = _table()["dyld"]
        self._cache_prefixes = tuple(cfg["cache_prefixes"])
        self._not_cache = tuple(cfg["not_cache_prefixes"])
        self._cache_leaves: dict[str, str] = dict(cfg["cache_leaves"])
        self._fallback_before = version_tuple(cfg["fallback_sdk_before"]) or (14, 0)
        self._default_fallback = tuple(cfg["default_fallback"])

    # -- files -------------------------------------------------------------------------------------------

    def _inside_env(self, path: str) -> bool:
        if self.prefix is None:
            return False
        real = os.path.realpath(path)
        return real == str(self.prefix) or real.startswith(str(self.prefix) + os.sep)

    def _disk_path(self, path: str) -> str | None:
        """Where to look for ``path`` on this machine: None when it cannot be looked at (foreign host)."""
        norm = os.path.normpath(path)
        if self.search.live or not path.startswith("/") or self._inside_env(norm):
            return norm
        root = self.search.system_root
        if root is not None:
            return str(root / norm.lstrip("/"))
        return None

    def macho(self, disk: str) -> MachOFile | Unreadable:
        info = self._files.get(disk)
        if info is None:
            info = read_macho(disk)
            self._files[disk] = info
        return info

    def is_cache_path(self, path: str) -> bool:
        return path.startswith(self._cache_prefixes) and not path.startswith(self._not_cache)

    # -- candidates --------------------------------------------------------------------------------------

    def candidates(self, name: str, image: Image | None, stack: tuple[Image, ...], static: bool) -> list[Candidate]:
        out: list[Candidate] = []
        leaf = name.rsplit("/", 1)[-1]
        for d in self.search.dyld_library_path:
            out.append(Candidate(f"{d.rstrip('/')}/{leaf}", STEP_DYLD_LIBRARY_PATH, d))
        main_dir = str(self.main.path.parent) if self.main is not None else None
        if name.startswith("@loader_path"):
            base = str(image.path.parent) if image is not None else main_dir
            if base is not None:
                out.append(Candidate(base + name[len("@loader_path") :], STEP_LOADER))
        elif name.startswith("@executable_path"):
            if main_dir is not None:
                out.append(Candidate(main_dir + name[len("@executable_path") :], STEP_EXECUTABLE))
        elif name.startswith("@rpath/"):
            tail = name[len("@rpath") :]
            for link in stack:
                if link.slice is None:
                    continue
                for rpath in link.slice.rpaths:
                    expanded = self._expand_rpath(rpath, link, main_dir)
                    if expanded is not None:
                        out.append(Candidate(expanded.rstrip("/") + tail, STEP_RPATH, f"{rpath} of {link.path.name}"))
        else:
            out.append(Candidate(name, STEP_PATH))
        # fallbacks: only for load commands (static linkage) and for leaf names [DYLD forEachPath]
        if static or "/" not in name:
            if self.search.fallback_library_path is not None:
                for d in self.search.fallback_library_path:
                    out.append(Candidate(f"{d.rstrip('/')}/{leaf}", STEP_FALLBACK, d))
            elif image is not None and self._needs_default_fallback(image):
                for d in self._default_fallback:
                    out.append(Candidate(f"{d}/{leaf}", STEP_DEFAULT_FALLBACK, d))
        return out

    def _needs_default_fallback(self, image: Image) -> bool:
        # forEachDylibFallback: "if no FALLBACK env vars, then only do fallbacks for old binaries"
        sdk = version_tuple(version_text(image.slice.sdk)) if image.slice is not None else None
        return sdk is None or sdk < self._fallback_before

    def _expand_rpath(self, rpath: str, link: Image, main_dir: str | None) -> str | None:
        if rpath.startswith("@loader_path"):
            return str(link.path.parent) + rpath[len("@loader_path") :]
        if rpath.startswith("@executable_path"):
            return None if main_dir is None else main_dir + rpath[len("@executable_path") :]
        if rpath.startswith("/"):
            return rpath
        return None  # a relative LC_RPATH is not used by dyld for a hardened or ordinary process here

    # -- resolution --------------------------------------------------------------------------------------

    def find_loaded(self, name: str) -> Image | None:
        for img in self.loaded:
            if img.install_name == name or str(img.path) == name:
                return img
        return None

    def _loaded_real(self, real: str) -> Image | None:
        for img in self.loaded:
            if img.real == real:
                return img
        return None

    def _slice_problem(self, info: MachOFile | Unreadable) -> tuple[MachOSlice | None, str | None]:
        if isinstance(info, Unreadable):
            if "not a Mach-O" in info.reason or "file too short" in info.reason:
                return None, "not a mach-o file"
            return None, f"not a mach-o file: {info.reason}"
        sl = info.slice_for(self.search.arch)
        if sl is None:
            have = ",".join(info.archs)
            if info.fat:
                return None, f"fat file, but missing compatible architecture (have '{have}', need '{self.search.arch}')"
            return None, f"mach-o file, but is an incompatible architecture (have '{have}', need '{self.search.arch}')"
        host = version_tuple(self.search.macos)
        minos = version_tuple(sl.minos_text)
        if host is not None and minos is not None and minos > host and sl.platform in (None, "macos"):
            return None, f"built for macOS {sl.minos_text} which is newer than running OS"
        return sl, None

    def resolve(
        self, name: str, image: Image | None, stack: tuple[Image, ...], step: LoadStep, static: bool = True
    ) -> tuple[Image | None, Resolution | None, list[SearchPlace]]:
        """(the image that satisfies ``name``, how, every place tried) — as dyld's Loader::getLoader."""
        if name.startswith("@rpath/") or name.startswith("/"):
            found = self.find_loaded(name)
            if found is not None:
                how = SearchPlace(STEP_LOADED, str(found.path), f"install name {found.install_name or found.path}")
                return found, Resolution(found.path, how), []
        tried: list[SearchPlace] = []
        unexamined = False
        for cand in self.candidates(name, image, stack, static):
            path = cand.path
            disk = self._disk_path(path)
            leaf_cache = self._cache_leaves.get(path.rsplit("/", 1)[-1]) if path.startswith("/usr/lib/") else None
            if disk is None:
                if self.is_cache_path(path) and (path == name or leaf_cache == path):
                    return None, self._cache_resolution(path, cand), tried
                if self.is_cache_path(path):
                    # SIP keeps /usr/lib and /System to Apple's own files, which are all in the shared cache
                    tried.append(SearchPlace(cand.step, path, "no such file, not in dyld cache" + _via(cand)))
                    continue
                tried.append(SearchPlace(cand.step, path, NOT_EXAMINED + (f"; {cand.note}" if cand.note else "")))
                unexamined = True
                continue
            if not os.path.isfile(disk):
                if self.is_cache_path(path) and (path == name or leaf_cache == path):
                    return None, self._cache_resolution(path, cand), tried
                cache_note = ", not in dyld cache" if self.is_cache_path(path) else ""
                tried.append(SearchPlace(cand.step, path, f"no such file{cache_note}" + _via(cand)))
                continue
            real = os.path.realpath(disk)
            same = self._loaded_real(real)
            if same is not None:
                how = SearchPlace(STEP_LOADED, path, f"same file as {same.path}" + _via(cand))
                return same, Resolution(same.path, how), tried
            sl, problem = self._slice_problem(self.macho(disk))
            if problem is not None:
                tried.append(SearchPlace(cand.step, path, problem + _via(cand)))
                step.rejected.append((image, None, path, problem))
                continue
            new = self._new_image(Path(disk), sl, image, step)
            how = SearchPlace(cand.step, path if path != disk else str(Path(disk).parent), cand.note)
            return new, Resolution(new.path, how), tried
        if unexamined and not tried:
            tried.append(SearchPlace(STEP_UNEXAMINED, None, NOT_EXAMINED))
        return None, None, tried

    def _cache_resolution(self, path: str, cand: Candidate) -> Resolution:
        # [BIGSUR] system dylibs exist only inside the shared cache: dyld finds them there, not on disk
        assumed = version_tuple(self.search.macos) is None
        note = "macOS 11+: no file on disk"
        return Resolution(None, SearchPlace(STEP_CACHE, path, note + _via(cand)), assumed=assumed)

    def _new_image(self, path: Path, sl: MachOSlice | None, loader: Image | None, step: LoadStep) -> Image:
        extra: dict[str, Any] = {"group": step.label}
        arch = None
        if sl is not None:
            arch = sl.arch
            if sl.install_name:
                extra["install_name"] = sl.install_name
            if sl.rpaths:
                extra["rpaths"] = list(sl.rpaths)
            if sl.minos_text:
                extra["minos"] = sl.minos_text
            if sl.sdk_text:
                extra["sdk"] = sl.sdk_text
        info = self._files.get(str(path))
        if isinstance(info, MachOFile) and info.fat:
            extra["archs"] = list(info.archs)
        module = Module(path, arch=arch, extra=extra)
        self.graph.modules.setdefault(str(path), module)
        module = self.graph.modules[str(path)]
        img = Image(path, sl, module, loader, step.label, os.path.realpath(path))
        self.loaded.append(img)
        step.new_images.append(img)
        return img

    # -- loading -----------------------------------------------------------------------------------------

    def _load_dependents(self, image: Image, stack: tuple[Image, ...], step: LoadStep) -> None:
        """JustInTimeLoader::loadDependents: every load command in order, then each dependent's own."""
        if id(image) in self._processed or image.slice is None:
            return
        self._processed.add(id(image))
        chain = (image,) + stack
        targets: list[Image] = []
        for ref in image.slice.dylibs:
            target, res, tried = self.resolve(ref.name, image, chain, step)
            kind = KIND_BY_REF.get(ref.kind, "needed")
            dep = Dependency(ref.name, kind, res, tuple(tried))
            self._edge(image.module, dep)
            if res is None:
                if not ref.weak:
                    step.misses.append((image, dep))
                    if step.error is None:
                        step.error = library_not_loaded(ref.name, image.path, tried)
                continue
            if target is not None:
                targets.append(target)
        for target in targets:
            self._load_dependents(target, chain, step)

    def _edge(self, module: Module | None, dep: Dependency) -> None:
        if module is None:
            return
        if any(d.kind == dep.kind and d.name == dep.name for d in module.dependencies):
            return
        module.dependencies.append(dep)

    def start_process(self, executable: Path | None, label: str = GROUP_PROCESS) -> LoadStep:
        step = LoadStep(label)
        if executable is None:
            self.steps.append(step)
            return step
        real = Path(os.path.realpath(executable))
        info = self.macho(str(real))
        sl, problem = self._slice_problem(info)
        if sl is None and isinstance(info, MachOFile) and info.slices:
            sl = info.slices[0]  # the executable decides the process's architecture: take its own slice
            problem = None
        main = self._new_image(real, sl, None, step)
        main.is_main = True
        main.module.extra["executable"] = str(executable)
        if isinstance(info, Unreadable):
            main.module.unreadable = info.reason
        elif problem:
            main.module.unreadable = problem
        self.main = main
        step.root = main
        self._load_dependents(main, (), step)
        self.steps.append(step)
        return step

    def dlopen(self, path: Path, label: str, *, mode: int = 0x2, fatal: bool = True) -> LoadStep:
        """dlopen by full path (ctypes.CDLL, Python's import); the rpath stack ends with caller and main."""
        step = LoadStep(label, fatal=fatal)
        caller = self.main
        key = str(path)
        existing = self.find_loaded(key) or self._loaded_real(os.path.realpath(key))
        caller_module = caller.module if caller is not None else None
        if existing is not None:
            step.root = existing
            how = SearchPlace(STEP_LOADED, str(existing.path), existing.group)
            self._edge(caller_module, Dependency(path.name, "dlopen", Resolution(existing.path, how)))
            self.steps.append(step)
            return step
        dlopen_text = f"dlopen({path}, 0x{mode:04X})"
        if not os.path.isfile(key):
            tried = [SearchPlace(STEP_DLOPEN, key, "no such file")]
            dep = Dependency(str(path), "dlopen", None, tuple(tried))
            self._edge(caller_module, dep)
            step.misses.append((caller, dep))
            step.error = f"{dlopen_text}: tried: '{path}' (no such file)"
            self.steps.append(step)
            return step
        sl, problem = self._slice_problem(self.macho(key))
        if problem is not None:
            tried = [SearchPlace(STEP_DLOPEN, key, problem)]
            dep = Dependency(str(path), "dlopen", None, tuple(tried), problems=(f"arch:{problem}",))
            self._edge(caller_module, dep)
            step.misses.append((caller, dep))
            step.rejected.append((caller, dep, key, problem))
            step.error = f"{dlopen_text}: tried: '{path}' ({problem})"
            self.steps.append(step)
            return step
        root = self._new_image(path, sl, caller, step)
        step.root = root
        self._edge(caller_module, Dependency(path.name, "dlopen", Resolution(root.path, SearchPlace(STEP_DLOPEN, key))))
        # LoadChain: { main } ← { caller } ← { the dlopened image } (dyld APIs dlopen_from)
        stack = tuple(x for x in (caller, self.main) if x is not None)
        self._load_dependents(root, stack, step)
        if step.error is not None:
            step.error = f"{dlopen_text}: {step.error}"
            # a failed dlopen unloads what it loaded (dyld4 garbage-collects the new images)
            fresh = {id(i) for i in step.new_images}
            self.loaded = [i for i in self.loaded if id(i) not in fresh]
            self._processed -= fresh
        self.steps.append(step)
        return step


def _via(cand: Candidate) -> str:
    return f"; {cand.note}" if cand.note and cand.step in (STEP_RPATH,) else ""


def library_not_loaded(name: str, referenced_from: Path, tried: list[SearchPlace]) -> str:
    """dyld's message: ``Library not loaded: @rpath/libc10.dylib\\n  Referenced from: …\\n  Reason: tried: …``."""
    parts = []
    for place in tried:
        if place.directory is None:
            continue
        reason = (place.note or "").split("; ", 1)[0]
        if reason.startswith(NOT_EXAMINED):
            reason = "not examined here"
        parts.append(f"'{place.directory}' ({reason})")
    reason = "tried: " + ", ".join(parts) if parts else "image not found"
    return f"Library not loaded: {name}\n  Referenced from: {referenced_from}\n  Reason: {reason}"


class MacLoad(MutableRecord):
    """The simulated import of torch: the graph plus what the checks need beyond it."""

    __slots__ = ("graph", "dyld", "plan", "search", "first_error")

    def __init__(
        self, graph: LoadGraph, dyld: Dyld, plan: TorchLoadPlan | None, search: MacSearch, first_error: str | None
    ) -> None:
        self.graph = graph
        self.dyld = dyld
        self.plan = plan
        self.search = search
        self.first_error = first_error

    @property
    def steps(self) -> list[LoadStep]:
        return self.dyld.steps


def _new_graph(search: MacSearch) -> LoadGraph:
    graph = LoadGraph(platform="darwin")
    graph.notes.extend(search.notes)
    order: list[SearchPlace] = [SearchPlace(STEP_LOADED, note="an image with that install name")]
    order += [SearchPlace(STEP_DYLD_LIBRARY_PATH, d, search.variables_source) for d in search.dyld_library_path]
    order.append(SearchPlace(STEP_PATH, note="the install name; @loader_path, @executable_path expanded"))
    order.append(SearchPlace(STEP_RPATH, note="LC_RPATH of the image, then of each image that loaded it, to python"))
    if search.fallback_library_path is not None:
        order += [SearchPlace(STEP_FALLBACK, d, search.variables_source) for d in search.fallback_library_path]
    else:
        order += [SearchPlace(STEP_DEFAULT_FALLBACK, d, "SDK < 14") for d in _table()["dyld"]["default_fallback"]]
    order.append(SearchPlace(STEP_CACHE, note="system dylibs and frameworks (macOS 11+)"))
    graph.search_order = order
    return graph


def load_file(ctx: LoaderContext, path: Path) -> MacLoad:
    """One Mach-O file: an executable starts a process; a dylib or bundle is dlopened by the env's python."""
    env, host = ctx.env, ctx.host
    info = read_macho(path)
    arch = None
    if isinstance(info, MachOFile):
        thin_python = env is not None and env.python is not None and env.python.arch in ("arm64", "x86_64")
        if not thin_python:
            sl = info.slice_for("arm64") or info.slices[0]
            arch = sl.arch
    search = search_context(env, host, arch=arch)
    graph = _new_graph(search)
    dyld = Dyld(search, graph, env.prefix if env is not None else path.parent)
    if isinstance(info, MachOFile) and any(s.is_executable for s in info.slices):
        step = dyld.start_process(path, f"{path.name} (main executable and its dylibs)")
        graph.roots.append(dyld.main.path if dyld.main is not None else path)
        return MacLoad(graph, dyld, None, search, step.error)
    executable = env.python.executable if env is not None and env.python is not None else None
    dyld.start_process(executable)
    if dyld.main is not None:
        graph.roots.append(dyld.main.path)
    step = dyld.dlopen(path, f"dlopen({path.name})")
    if dyld.main is None and step.root is not None:
        graph.roots.append(step.root.path)
    return MacLoad(graph, dyld, None, search, step.error)


def build_graph_for_file(ctx: LoaderContext, path: Path) -> LoadGraph:
    return load_file(ctx, path).graph


def images_loaded(load: MacLoad) -> list[Image]:
    return list(load.dyld.loaded)


def dependency_kind(ref: DylibRef) -> str:
    return KIND_BY_REF.get(ref.kind, "needed")
