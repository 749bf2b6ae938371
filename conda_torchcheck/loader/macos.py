"""dyld, modelled: how macOS would load torch's dylibs in this env, and why each one is found where.

Every rule below is dyld's own (apple-oss-distributions/dyld, dyld-1378; the dyld(1) man page); the sources
are listed in ``knowledge/macos_dyld.toml`` and docs/macos-loading.md. For a load command of image X naming
``name``:

1. ``@rpath/…`` already loaded: an image whose install name is ``name`` is reused, wherever it came from
   (``Loader::getLoader``); an absolute ``name`` is reused when a loaded image has that path or install name.
2. the candidate paths, in order (``PathOverrides::forEachPathVariant`` + ``Loader::forEachResolvedAtPathVar``):
   ``DYLD_LIBRARY_PATH`` directories with the leaf name; then the name itself, with ``@loader_path`` = X's
   folder, ``@executable_path`` = the main executable's folder, and ``@rpath`` = every LC_RPATH of X, then of
   the image that loaded X, and so on down to the main executable (each image's LC_RPATHs in order, each
   expanded against the image that carries it); then ``DYLD_FALLBACK_LIBRARY_PATH`` with the leaf name, or,
   when it is unset and X was built with an SDK older than macOS 14, ``/usr/local/lib`` and ``/usr/lib``.
3. a system path (``/usr/lib/…``, ``/System/Library/…``) with no file on disk is in the dyld shared cache
   (macOS 11+): present, not missing. A candidate with no slice for the process's architecture, or not a
   Mach-O file, is skipped with dyld's words for why, and the search goes on.
4. ``LC_LOAD_WEAK_DYLIB``: a miss is not an error. SIP purges every ``DYLD_*`` variable when a protected binary
   (``/usr/bin/python3``, ``/bin/sh`` running a script) starts.

torch's own steps (from the installed ``torch/__init__.py``): ``ctypes.CDLL(torch/lib/libtorch_global_deps.dylib,
RTLD_GLOBAL)``, then ``import torch._C`` (``dlopen(_C.cpython-3XY-darwin.so)``). For both, the rpath stack ends
with the caller (the interpreter) and the main executable, which is why dyld's "tried:" list shows the
interpreter's rpaths twice.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from conda_torchcheck.binaries.macho import DylibRef, MachOFile, MachOSlice, Unreadable, read_macho, version_text
from conda_torchcheck.inventory import fs
from conda_torchcheck.loader.graph import Dependency, LoadGraph, Module, Resolution, SearchPlace
from conda_torchcheck.loader.torch_import import record_missing_extension, start_python
from conda_torchcheck.records import MutableRecord, Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from conda_torchcheck.loader.contract import LoaderContext

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


# --- the simulated process --------------------------------------------------------------------------------


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


# --- torch's steps -----------------------------------------------------------------------------------------


class TorchLoadPlan(Record):
    __slots__ = ("package_dir", "global_deps", "c_module", "source")

    def __init__(self, package_dir: Path, global_deps: Path | None, c_module: Path | None, source: str) -> None:
        self.package_dir = package_dir
        self.global_deps = global_deps
        self.c_module = c_module
        self.source = source


def find_c_module(package_dir: Path, python_tag: str | None) -> Path | None:
    """``torch/_C.cpython-311-darwin.so`` for the env's Python (one of its EXTENSION_SUFFIXES)."""
    try:
        names = sorted(n for n in os.listdir(package_dir) if n.startswith("_C.") and n.endswith(".so"))
    except OSError:
        return None
    if not python_tag:
        return package_dir / names[0] if names else None
    wanted = f"_C.cpython-{python_tag}-darwin.so"
    for n in names:
        if n == wanted:
            return package_dir / n
    for n in names:
        if (n.startswith("_C.abi3") and not python_tag.endswith("t")) or n == "_C.so":
            return package_dir / n
    return None


def torch_load_plan(package_dir: Path, python_tag: str | None) -> TorchLoadPlan:
    """Read from the installed ``torch/__init__.py`` whether it loads libtorch_global_deps (never executing it)."""
    try:
        text = fs.read_text(package_dir / "__init__.py", fs.SMALL_LIMIT)
    except OSError:
        text = ""
    uses_global_deps = "_load_global_deps" in text or not text
    global_deps = package_dir / "lib" / "libtorch_global_deps.dylib" if uses_global_deps else None
    return TorchLoadPlan(
        package_dir, global_deps, find_c_module(package_dir, python_tag), "torch/__init__.py" if text else "default"
    )


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


def simulate_torch_import(ctx: LoaderContext) -> MacLoad | None:
    """Model ``import torch`` in ``ctx.env`` on ``ctx.host``; None when the env has no torch package."""
    from conda_torchcheck.messages import msg

    env = ctx.env
    torch = ctx.torch
    if torch is None or torch.package_dir is None:
        return None
    search = search_context(env, ctx.host)
    graph = _new_graph(search)
    dyld = Dyld(search, graph, env.prefix)
    plan = torch_load_plan(torch.package_dir, env.python.tag)
    start_python(dyld, graph, env, msg("TC45.note.no_python").render())
    load = MacLoad(graph, dyld, plan, search, None)
    if plan.global_deps is not None:
        step = dyld.dlopen(plan.global_deps, GROUP_GLOBAL_DEPS, mode=0xA)  # RTLD_GLOBAL | RTLD_NOW
        if step.failed:
            load.first_error = step.error
    if load.first_error is None or plan.global_deps is None:
        if plan.c_module is not None:
            step = dyld.dlopen(plan.c_module, GROUP_C.replace("3XY", env.python.tag or "3XY"))
            if step.failed and load.first_error is None:
                load.first_error = step.error
        elif plan.global_deps is not None:
            name = f"_C.cpython-{env.python.tag or '3XY'}-darwin.so"
            step = LoadStep(GROUP_C, error="ModuleNotFoundError: No module named 'torch._C'")
            record_missing_extension(dyld, step, name, SearchPlace(STEP_FILE_PATH, str(plan.package_dir)))
            load.first_error = load.first_error or step.error
    return load


def torch_load(ctx: LoaderContext) -> MacLoad | None:
    """The simulated import, computed once per check context."""
    return ctx.memo("macos_load", lambda: simulate_torch_import(ctx))


def build_torch_graph(ctx: LoaderContext) -> LoadGraph | None:
    load = torch_load(ctx)
    return None if load is None else load.graph


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


# --- symbols (two-level namespace) --------------------------------------------------------------------------

# special library ordinals (<mach-o/nlist.h>): the image itself, flat lookup, the main executable
_SELF, _DYNAMIC_LOOKUP, _EXECUTABLE = 0, 0xFE, 0xFF


class SymbolMiss(Record):
    """An undefined symbol that the dylib its two-level ordinal names does not export (dyld: Symbol not found)."""

    __slots__ = ("name", "required_by", "expected_in", "library")

    def __init__(self, name: str, required_by: Path, expected_in: Path, library: str) -> None:
        self.name = name
        self.required_by = required_by
        self.expected_in = expected_in
        self.library = library  # the load command's name (@rpath/libc10.dylib)

    @property
    def message(self) -> str:
        # dyld4 (Loader.cpp) prints "<UUID> path" for both images; the UUID is left out here
        return (
            f"Symbol not found: {self.name}\n  Referenced from: {self.required_by}\n"
            f"  Expected in:     {self.expected_in}"
        )


def check_symbols(load: MacLoad, limit: int = 200) -> list[SymbolMiss]:
    """Every non-weak undefined symbol of every loaded image, looked up in the export trie of the dylib its
    library ordinal names (and what that dylib re-exports), as dyld binds a two-level namespace image.

    Symbols bound to the shared cache (system dylibs: no file here), flat-namespace lookups (Python's C API in
    extension modules) and weak references are not judged.
    """
    from conda_torchcheck.binaries.macho import read_exported, read_exports, read_undefined

    by_path: dict[str, Image] = {str(img.path): img for img in load.dyld.loaded}

    def resolved(img: Image, name: str) -> Image | None:
        for dep in img.module.dependencies:
            if dep.name == name and dep.resolution is not None and dep.resolution.path is not None:
                return by_path.get(str(dep.resolution.path))
        return None

    # (binding image, symbol, load command) grouped by the image the symbols are bound to
    wanted: dict[str, list[tuple[Image, str, str]]] = {}
    for img in load.dyld.loaded:
        sl = img.slice
        if sl is None or not sl.dylibs or sl.symtab is None:
            continue
        undefined = read_undefined(img.path, sl)
        if not isinstance(undefined, tuple):
            continue
        for name, ordinal, weak in undefined:
            if weak or ordinal in (_SELF, _DYNAMIC_LOOKUP, _EXECUTABLE) or ordinal > len(sl.dylibs):
                continue
            ref = sl.dylibs[ordinal - 1]
            if ref.weak:
                continue
            target = resolved(img, ref.name)
            if target is None:
                continue  # in the shared cache, or missing (TC450 reports the missing dylib)
            wanted.setdefault(str(target.path), []).append((img, name, ref.name))

    def lookup(target: Image, names: set[str], depth: int = 0) -> set[str]:
        """The names ``target`` exports itself or through its LC_REEXPORT_DYLIB dylibs."""
        if target.slice is None or not names:
            return set()
        # a few hundred names: one trie walk each; thousands (libtorch_python → libtorch_cpu): list the trie once
        if len(names) > 512:
            listed = read_exports(target.path, target.slice)
            got = frozenset(names & listed) if isinstance(listed, frozenset) else listed
        else:
            got = read_exported(target.path, target.slice, names)
        if not isinstance(got, frozenset):
            return set(names)  # an export trie that cannot be read proves nothing missing: judge nothing
        found = set(got)
        if depth < 8:
            for ref in target.slice.dylibs:
                if ref.kind == "reexport" and names - found:
                    inner = resolved(target, ref.name)
                    if inner is not None:
                        found |= lookup(inner, names - found, depth + 1)
        return found

    misses: list[SymbolMiss] = []
    for key, uses in wanted.items():
        target = by_path[key]
        found = lookup(target, {n for _i, n, _r in uses})
        for img, name, ref_name in uses:
            if name not in found:
                misses.append(SymbolMiss(name, img.path, target.path, ref_name))
                if len(misses) >= limit:
                    return misses
    return misses


def torch_symbol_misses(ctx: LoaderContext) -> list[SymbolMiss]:
    load = torch_load(ctx)
    if load is None:
        return []
    return ctx.memo("macos_symbol_misses", lambda: check_symbols(load))
