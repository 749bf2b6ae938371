"""Windows loader model: how ``import torch`` makes Windows load torch's DLLs in this env, step by step.

The model replays the process, not a generic search:

1. the interpreter starts: python.exe (for a venv: the base interpreter its launcher starts) loads pythonXY.dll
   and vcruntime140.dll; a conda Python adds its five folders with AddDllDirectory (knowledge/windows_python.toml);
2. torch/__init__.py adds its directories with os.add_dll_directory and probes the VC++ runtime with
   ``ctypes.CDLL`` (knowledge/windows_torch.toml); whatever copy that probe loads is the one every later import of
   that name gets, because Windows reuses a loaded module by base name;
3. torch preloads every ``torch\\lib\\*.dll`` in directory order with ``LoadLibraryExW(dll, NULL, 0x1100)``: the
   DLL's own folder, the folder of python.exe, the added folders (most recently added first), System32 - no PATH,
   no CWD. Only error 126 falls back to ``LoadLibraryW`` with torch's folders prepended to PATH (the classic order:
   python.exe's folder, System32, System, Windows, CWD, PATH). Any other error is raised at once;
4. Python loads ``torch\\_C.pyd`` with the same 0x1100 flags (Python >= 3.8).

conda-forge and defaults torch keep their DLLs in ``Library\\bin``; then step 3 finds nothing to preload and the
first failure surfaces in step 4 as ``DLL load failed while importing _C``.

Every import gets a :class:`Resolution` (where it was found and by which step) or the ordered list of places
searched. What could not be examined (System32 of a Windows env read from Linux, a PATH entry on another drive)
is recorded as such, never guessed: OS DLLs are then *assumed* present, VC++ runtime and driver DLLs become
conclusions that depend on the host.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conda_torchcheck.binaries.headers import sniff
from conda_torchcheck.binaries.pe import Exports, ImportedSymbol, PEInfo, Unreadable, read_exports, read_pe
from conda_torchcheck.inventory import fs
from conda_torchcheck.knowledge import load, parse_version
from conda_torchcheck.loader.graph import Dependency, LoadGraph, Module, Resolution, SearchPlace
from conda_torchcheck.messages import translate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from conda_torchcheck.loader.contract import LoaderContext

# search steps (SearchPlace.step)
STEP_FULL_PATH = "full-path"
STEP_LOADED = "already-loaded"
STEP_API_SET = "api-set"
STEP_KNOWN_DLL = "known-dll"
STEP_DLL_LOAD_DIR = "dll-load-dir"
STEP_APP_DIR = "application-dir"
STEP_USER_DIR = "add_dll_directory"
STEP_SYSTEM32 = "system32"
STEP_SYSTEM16 = "system"
STEP_WINDOWS = "windows-dir"
STEP_CWD = "cwd"
STEP_PATH = "path"
#: found_by.step of a resolution that depends on a place this tool could not examine
STEP_UNEXAMINED = "unexamined"

#: places whose DLLs belong to Windows: not expanded, not symbol-checked, not architecture-checked
SYSTEM_STEPS = frozenset({STEP_SYSTEM32, STEP_SYSTEM16, STEP_WINDOWS, STEP_KNOWN_DLL})

ERROR_MOD_NOT_FOUND = 126
ERROR_PROC_NOT_FOUND = 127
ERROR_BAD_EXE_FORMAT = 193
ERROR_DLL_INIT_FAILED = 1114

_DRIVE = re.compile(r"^([A-Za-z]):[\\/]*(.*)$")


# --------------------------------------------------------------------------------------------- knowledge


@dataclass(frozen=True)
class SystemTables:
    api_set_prefixes: tuple[str, ...]
    optional_api_set_prefixes: tuple[str, ...]
    known_dlls: frozenset[str]
    os_dlls: frozenset[str]
    driver_dlls: dict[str, str]


@functools.cache
def system_tables() -> SystemTables:
    data = load("windows_system")
    return SystemTables(
        tuple(data["api_set_prefixes"]),
        tuple(data["optional_api_set_prefixes"]),
        frozenset(n.lower() for n in data["known_dlls"]),
        frozenset(n.lower() for n in data["os_dlls"]),
        {k.lower(): v for k, v in data["driver_dlls"].items()},
    )


@functools.cache
def vc_runtime_table() -> dict[str, Any]:
    return load("windows_vc_runtime")


def is_api_set(name: str) -> bool:
    return name.lower().startswith(system_tables().api_set_prefixes)


def dll_kind(name: str) -> str:
    """api-set | os | vc-runtime | driver | python | other."""
    key = name.lower()
    tables = system_tables()
    if key.startswith(tables.api_set_prefixes):
        return "api-set"
    if key in tables.os_dlls or key in tables.known_dlls:
        return "os"
    if key in vc_runtime_table()["dlls"]:
        return "vc-runtime"
    if key in tables.driver_dlls:
        return "driver"
    if re.fullmatch(r"python3\d*t?(_d)?\.dll", key):
        return "python"
    return "other"


def _version_in(version: str | None, since: str) -> bool:
    v = parse_version(version)
    s = parse_version(since)
    if v is None or s is None:
        return True  # unknown torch version: assume a current one
    return v.release >= s.release


def torch_rules(version: str | None) -> dict[str, Any]:
    """The directory list, preload and VC probe rules that apply to this torch version."""
    data = load("windows_torch")
    return {
        "directories": [d for d in data["directory"] if _version_in(version, d["since"])],
        "preload": _version_in(version, data["preload"]["since"]),
        "preload_flags": data["preload"]["flags"],
        "vc_probe": data["vc_probe"] if _version_in(version, data["vc_probe"]["since"]) else None,
    }


def _spec_matches(spec: str, version: tuple[int, int] | None) -> bool:
    if version is None:
        return True
    from packaging.specifiers import SpecifierSet

    return f"{version[0]}.{version[1]}" in SpecifierSet(spec)


def interpreter_rule(channel: str | None, python: tuple[int, int] | None) -> dict[str, Any]:
    data = load("windows_python")
    canonical = channel if channel in ("conda-forge", "defaults") else "*"
    for rule in data["rule"]:
        if rule["channel"] in (canonical, "*") and _spec_matches(rule["python"], python):
            return rule
    return {"channel": "*", "mode": "none", "source": ""}


def vc_minimum(torch_version: str | None) -> list[dict[str, Any]]:
    from packaging.specifiers import SpecifierSet

    out = []
    v = parse_version(torch_version)
    for rule in vc_runtime_table().get("minimum", []):
        if v is None:
            continue
        if v.public.split("+")[0] in SpecifierSet(rule["torch"]) or f"{v.major}.{v.minor}.{v.micro}" in SpecifierSet(
            rule["torch"]
        ):
            out.append(rule)
    return out


def version_tuple(text: str | None) -> tuple[int, ...] | None:
    if not text:
        return None
    parts = re.findall(r"\d+", text)
    return tuple(int(p) for p in parts) if parts else None


# ------------------------------------------------------------------------------------------------ places


@dataclass(frozen=True)
class Place:
    """A folder in a search order."""

    step: str
    directory: Path | None  # a local folder to look in; None when it cannot be examined from this machine
    shown: str  # how the user knows it
    origin: str = ""  # who put it in the search

    def searched(self, note: str | None = None) -> SearchPlace:
        return SearchPlace(self.step, self.shown, self.origin if note is None else note)


def local_path(text: str | os.PathLike[str] | None, *, windows_host: bool | None = None) -> Path | None:
    """A path as the env's machine writes it, mapped to this machine (``C:\\x`` -> ``/mnt/c/x`` under WSL).

    None when it cannot be reached from here (a Windows path read on Linux outside WSL).
    """
    if text is None:
        return None
    raw = str(text).strip().strip('"')
    if not raw:
        return None
    running_windows = os.name == "nt" if windows_host is None else windows_host
    if running_windows:
        return Path(raw)
    m = _DRIVE.match(raw)
    if m is None:
        return Path(raw) if raw.startswith("/") else None
    mount = Path("/mnt") / m.group(1).lower()
    if not mount.is_dir():
        return None
    rest = [p for p in re.split(r"[\\/]+", m.group(2)) if p]
    found = fs.find_path(mount, *rest) if rest else mount
    return found if found is not None else mount.joinpath(*rest)


def _lookup(directory: Path | None, name: str) -> Path | None:
    if directory is None:
        return None
    hit = fs.listing(directory).get(name.lower())
    if hit is None:
        return None
    try:
        return hit if hit.is_file() else None
    except OSError:
        return None


# -------------------------------------------------------------------------------------------- the process


@dataclass
class ProcessModel:
    """The Windows process ``python -c "import torch"`` runs in, as far as DLL search is concerned."""

    arch: str | None
    python_exe: Path | None
    app_dir: Path | None
    app_dir_shown: str
    python_dll: Path | None
    python_tag: str | None
    exec_prefix: Path
    base_exec_prefix: Path
    system_dir: Path | None
    windows_dir: Path | None
    system_known: bool
    system_source: str
    known_dlls: frozenset[str]
    path_entries: list[tuple[str, Path | None]] | None  # None: PATH unknown
    cwd: Path | None
    cwd_shown: str | None
    interpreter_dirs: list[Place] = field(default_factory=list)  # in search order
    interpreter_mode: str = "none"
    torch_dirs: list[Place] = field(default_factory=list)  # in the order torch adds them
    notes: list[str] = field(default_factory=list)

    # ---- search orders
    def user_dirs(self) -> list[Place]:
        # AddDllDirectory folders: most recently added first (knowledge/windows_python.toml [WINE])
        return list(reversed(self.torch_dirs)) + list(self.interpreter_dirs)

    def _app(self) -> Place:
        return Place(STEP_APP_DIR, self.app_dir, self.app_dir_shown)

    def _system32(self) -> Place:
        shown = str(self.system_dir) if self.system_dir else "System32"
        return Place(STEP_SYSTEM32, self.system_dir if self.system_known else None, shown)

    def default_dirs(self) -> list[Place]:
        """LOAD_LIBRARY_SEARCH_DEFAULT_DIRS (0x1000): what ctypes.CDLL("name.dll") searches."""
        return [self._app(), *self.user_dirs(), self._system32()]

    def safe_order(self, load_dir: Path) -> list[Place]:
        """LoadLibraryExW flags 0x1100, used by torch's preload and by Python for extension modules."""
        return [Place(STEP_DLL_LOAD_DIR, load_dir, str(load_dir)), *self.default_dirs()]

    def classic_order(self, path_prefix: Iterable[Place] = (), *, load_dir: Path | None = None) -> list[Place]:
        """Plain LoadLibraryW with SafeDllSearchMode (the default): torch's fallback after error 126.

        ``load_dir`` replaces the application folder (LOAD_WITH_ALTERED_SEARCH_PATH, Python < 3.8).
        """
        first = Place(STEP_DLL_LOAD_DIR, load_dir, str(load_dir)) if load_dir is not None else self._app()
        places = [first, self._system32()]
        if self.windows_dir is not None:
            system16 = (
                (fs.find_child(self.windows_dir, "System") or self.windows_dir / "System")
                if self.system_known
                else None
            )
            places.append(Place(STEP_SYSTEM16, system16, str(self.windows_dir / "System")))
            places.append(Place(STEP_WINDOWS, self.windows_dir if self.system_known else None, str(self.windows_dir)))
        else:
            places.append(Place(STEP_WINDOWS, None, "Windows"))
        places.append(Place(STEP_CWD, self.cwd, self.cwd_shown or "CWD", "" if self.cwd_shown else "unknown"))
        places.extend(path_prefix)
        if self.path_entries is None:
            places.append(Place(STEP_PATH, None, "PATH", "unknown"))
        for i, (text, local) in enumerate(self.path_entries or (), 1):
            places.append(Place(STEP_PATH, local, text, f"PATH entry {i}"))
        return places

    def summary(self) -> dict[str, Any]:
        return {
            "arch": self.arch,
            "python_exe": str(self.python_exe) if self.python_exe else None,
            "application_dir": self.app_dir_shown,
            "python_dll": str(self.python_dll) if self.python_dll else None,
            "interpreter_dll_dirs": [p.shown for p in self.interpreter_dirs],
            "interpreter_mode": self.interpreter_mode,
            "torch_dll_dirs": [p.shown for p in self.torch_dirs],
            "system_dir": str(self.system_dir) if self.system_dir else None,
            "system_known": self.system_known,
            "system_source": self.system_source,
            "path_known": self.path_entries is not None,
            "cwd": self.cwd_shown,
        }


def _python_channel(env) -> str | None:
    rec = env.record("python")
    if rec is not None:
        return rec.channel
    if env.layout == "venv" and env.base_prefix is not None:
        base = local_path(env.base_prefix)
        meta = fs.find_child(base, "conda-meta") if base is not None else None
        if meta is not None:
            for name, entry in sorted(fs.listing(meta).items()):
                if re.fullmatch(r"python-3[\d.]+-[^-]+\.json", name):
                    try:
                        data = fs.parse_json(fs.read_text(entry, errors="strict"))
                    except (OSError, ValueError):
                        return "conda"
                    channel = str(data.get("channel", ""))
                    if "conda-forge" in channel:
                        return "conda-forge"
                    if "anaconda.com/pkgs" in channel or channel in ("defaults", "pkgs/main"):
                        return "defaults"
                    return channel or "conda"
            return "conda"
    return None


def _interpreter(env) -> tuple[Path | None, Path | None, str]:
    """(python.exe that runs, the folder Windows treats as the application folder, that folder as shown)."""
    prefix = env.prefix
    if env.layout == "venv":
        scripts = fs.find_child(prefix, "Scripts")
        if scripts is not None and any(re.fullmatch(r"python3\d+t?\.dll", n) for n in fs.listing(scripts)):
            # a copied interpreter (Python < 3.7.2 or --copies with its DLL): it runs from Scripts itself
            return fs.find_child(scripts, "python.exe"), scripts, str(scripts)
        # Python >= 3.7.2: Scripts\python.exe is a launcher that starts the base interpreter in a child process
        if env.base_prefix is not None:
            base = local_path(env.base_prefix)
            shown = str(env.base_prefix)
            exe = fs.find_child(base, "python.exe") if base is not None and base.is_dir() else None
            return exe, base if base is not None and base.is_dir() else None, shown
        return None, None, "?"
    return fs.find_child(prefix, "python.exe"), prefix, str(prefix)


def _known_dlls_live() -> frozenset[str] | None:
    if os.name != "nt":  # pragma: no cover - Windows only
        return None
    try:  # pragma: no cover - Windows only
        import winreg

        key = winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, r"SYSTEM\CurrentControlSet\Control\Session Manager\KnownDLLs")
        names = set()
        i = 0
        while True:
            try:
                _name, value, _type = winreg.EnumValue(key, i)
            except OSError:
                break
            if isinstance(value, str) and value.lower().endswith(".dll"):
                names.add(value.lower())
            i += 1
        return frozenset(names | {"ntdll.dll"})
    except OSError:  # pragma: no cover
        return None


def _split_path(value: str) -> list[str]:
    out = []
    for item in value.split(";"):
        item = item.strip().strip('"').rstrip("\\/")
        if item:
            out.append(item if not re.fullmatch(r"[A-Za-z]:", item) else item + "\\")
    return out


def process_model(ctx: LoaderContext, torch_info=None) -> ProcessModel:
    env, host = ctx.env, ctx.host
    exe, app_dir, app_shown = _interpreter(env)
    tag = env.python.tag
    python_dll = None
    if app_dir is not None and tag:
        python_dll = fs.find_child(app_dir, f"python{tag}.dll")
    exec_prefix = env.prefix
    base_exec = env.prefix
    if env.layout == "venv" and env.base_prefix is not None:
        base_exec = local_path(env.base_prefix) or env.base_prefix
    system_root = host.system_root
    system_dir = None
    windows_dir = None
    system_known = False
    if system_root is not None:
        windows_dir = system_root
        system_dir = host.system32
        if env.python.arch == "x86":  # a 32-bit process on 64-bit Windows sees SysWOW64 as its System32
            wow = fs.find_child(system_root, "SysWOW64")
            if wow is not None and wow.is_dir():
                system_dir = wow
        system_known = system_dir is not None and system_dir.is_dir()
    known = _known_dlls_live() if host.live else None
    path_value = host.get("PATH")
    path_known = host.live or path_value is not None
    entries = None
    if path_known:
        entries = [(text, local_path(text)) for text in _split_path(path_value or "")]
    cwd_shown = str(host.cwd) if host.cwd is not None else None
    cwd = local_path(host.cwd) if host.cwd is not None else None
    model = ProcessModel(
        arch=env.python.arch,
        python_exe=exe,
        app_dir=app_dir,
        app_dir_shown=app_shown,
        python_dll=python_dll,
        python_tag=tag,
        exec_prefix=exec_prefix,
        base_exec_prefix=base_exec,
        system_dir=system_dir,
        windows_dir=windows_dir,
        system_known=system_known,
        system_source=host.system_root_source if system_known else "unknown",
        known_dlls=known or system_tables().known_dlls,
        path_entries=entries,
        cwd=cwd,
        cwd_shown=cwd_shown,
    )
    _add_interpreter_dirs(model, env, host)
    if torch_info is not None and torch_info.installed:
        _add_torch_dirs(model, env, host, torch_info)
    if not system_known:
        model.notes.append(translate("win.note.system_unknown"))
    if entries is None:
        model.notes.append(translate("win.note.path_unknown"))
    if app_dir is None:
        model.notes.append(translate("win.note.app_dir_unknown", path=app_shown))
    return model


def _add_interpreter_dirs(model: ProcessModel, env, host) -> None:
    channel = _python_channel(env)
    if channel is None:
        return
    rule = interpreter_rule(channel, env.python.major_minor)
    mode = rule["mode"]
    enabled = host.get("CONDA_DLL_SEARCH_MODIFICATION_ENABLE")
    if enabled and enabled != "0" and rule.get("mode_if_enabled"):
        mode = rule["mode_if_enabled"]
    model.interpreter_mode = mode
    if mode == "none" or model.python_dll is None and model.app_dir is None:
        return
    # the folders are relative to the folder of pythonXY.dll (the base interpreter's, for a venv)
    base = model.python_dll.parent if model.python_dll is not None else model.app_dir
    assert base is not None
    data = load("windows_python")
    origin = f"{channel} python {env.python.version or ''}".strip()
    for rel in data["conda_folders"]:  # already in search order (most recently added first)
        folder = fs.find_path(base, *rel.split("\\"))
        if folder is not None and folder.is_dir():  # AddDllDirectory fails for a missing folder
            model.interpreter_dirs.append(Place(STEP_USER_DIR, folder, str(folder), origin))
    if mode == "path-mode":
        for i, (text, local) in enumerate(model.path_entries or (), 1):
            model.interpreter_dirs.append(Place(STEP_USER_DIR, local, text, f"{origin} (PATH entry {i})"))
        model.notes.append(translate("win.note.path_mode"))


def _userbase(env, host) -> Path | None:
    value = host.get("PYTHONUSERBASE")
    if value:
        return local_path(value)
    appdata = host.get("APPDATA")
    if appdata:
        base = local_path(appdata)
        return base / "Python" if base is not None else None
    return None


def _add_torch_dirs(model: ProcessModel, env, host, torch_info) -> None:
    rules = torch_rules(torch_info.version)
    origin = f"torch {torch_info.version or '?'}"
    program_files = host.get("ProgramFiles") or "C:\\Program Files"
    added: list[Place] = []

    def add(path: Path | None, shown: str | None = None) -> None:
        if path is None:
            return
        try:
            exists = path.exists()
        except OSError:
            exists = False
        if exists and not any(_same(p.directory, path) for p in added):
            added.append(Place(STEP_USER_DIR, path, shown or str(path), origin))

    for rule in rules["directories"]:
        ident, when = rule["id"], rule["when"]
        if ident == "torch-lib" and torch_info.package_dir is not None:
            add(fs.find_child(torch_info.package_dir, "lib") or torch_info.package_dir / "lib")
        elif ident == "exec-prefix-library-bin":
            add(fs.find_path(model.exec_prefix, "Library", "bin"))
        elif ident == "base-exec-prefix-library-bin" and when == "venv":
            if env.layout == "venv" and not _same(model.base_exec_prefix, model.exec_prefix):
                add(fs.find_path(model.base_exec_prefix, "Library", "bin"))
        elif ident == "userbase-library-bin":
            userbase = _userbase(env, host)
            if userbase is not None:
                add(fs.find_path(userbase, "Library", "bin"))
        elif ident == "exec-prefix-bin":
            add(fs.find_child(model.exec_prefix, "bin"))
        elif ident == "nvtoolsext":
            if not any(_lookup(p.directory, "nvToolsExt64_1.dll") for p in added):
                root = host.get("NVTOOLSEXT_PATH") or program_files + "\\NVIDIA Corporation\\NvToolsExt"
                local = local_path(root)
                if local is not None:
                    add(fs.find_path(local, "bin", "x64"), root + "\\bin\\x64")
        elif ident == "cuda-path" and torch_info.cuda_version:
            has_cudart = any(
                any(n.startswith("cudart64") and n.endswith(".dll") for n in fs.listing(p.directory))
                for p in added
                if p.directory is not None
            )
            if not has_cudart:
                cuda = torch_info.cuda_version
                var = "CUDA_PATH_V" + cuda.replace(".", "_")
                root = host.get(var) or f"{program_files}\\NVIDIA GPU Computing Toolkit\\CUDA\\v{cuda}"
                local = local_path(root)
                if local is not None:
                    add(fs.find_child(local, "bin"), root + "\\bin")
    model.torch_dirs = added


def _same(a: Path | None, b: Path | None) -> bool:
    if a is None or b is None:
        return False
    return os.path.normcase(os.path.normpath(str(a))) == os.path.normcase(os.path.normpath(str(b)))


# ------------------------------------------------------------------------------------------ the results


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


# ----------------------------------------------------------------------------------------- simulation


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


# ----------------------------------------------------------------------------------------------- torch


def read_record(path: Path) -> tuple[tuple[str, str, str], ...]:
    """The rows of a wheel's RECORD (parsed once per file version; the loader and the file check both need it)."""
    from conda_torchcheck.inventory.dists import record_rows

    return record_rows(path)


def _own_paths(torch_info, env) -> set[str]:
    """The binaries that belong to the installed torch build (its wheel RECORD or its conda packages)."""
    own: set[str] = set()
    dist = torch_info.dist
    if torch_info.source != "conda" and dist is not None and dist.has_record:
        # the wheel's RECORD: a DLL it does not list (a leftover, a hand-copied file) is not part of this build
        site = str(dist.site)
        for row in read_record(dist.record_path):
            if row[0].lower().endswith((".dll", ".pyd")):
                own.add(os.path.normcase(os.path.normpath(os.path.join(site, row[0]))))
    elif torch_info.package_dir is not None:
        for folder in (torch_info.package_dir, torch_info.package_dir / "lib", torch_info.package_dir / "bin"):
            for name, entry in fs.listing(folder).items():
                if name.endswith((".dll", ".pyd")):
                    own.add(os.path.normcase(str(entry)))
    for record in (torch_info.conda_record, torch_info.libtorch_record):
        if record is None or torch_info.source != "conda":
            continue
        for rel in record.files:
            if rel.lower().endswith((".dll", ".pyd")):
                own.add(os.path.normcase(str(env.prefix / rel)))
    return own


def _extension_module(torch_dir: Path, tag: str | None, model: ProcessModel) -> tuple[Path | None, str | None]:
    candidates = sorted(
        entry for name, entry in fs.listing(torch_dir).items() if name.startswith("_c.") and name.endswith(".pyd")
    )
    if not candidates:
        return None, None
    if tag:
        for entry in candidates:
            if f".cp{tag}-" in entry.name.lower():
                return entry, None
    return candidates[0], translate("win.note.pyd_tag", name=candidates[0].name, tag=tag or "?")


def preload_list(lib_dir: Path | None) -> list[Path]:
    """``glob(torch\\lib\\*.dll)`` in the order NTFS lists a directory (case-insensitive, upper-cased names)."""
    if lib_dir is None:
        return []
    entries = [e for n, e in fs.listing(lib_dir).items() if n.endswith(".dll")]
    return sorted((e for e in entries if e.is_file()), key=lambda e: e.name.upper())


def build_torch_graph(ctx: LoaderContext) -> WindowsLoadGraph | None:
    """The whole of ``import torch`` on Windows for this env; None when torch is not installed here."""
    torch_info = ctx.torch
    if not torch_info.installed or torch_info.package_dir is None:
        return None
    env = ctx.env
    model = process_model(ctx, torch_info)
    graph = WindowsLoadGraph(platform="windows", torch_version=torch_info.version, process=model)
    graph.own_paths = frozenset(_own_paths(torch_info, env))
    rules = torch_rules(torch_info.version)
    sim = _Simulation(model, graph)
    sim.seed_interpreter()
    if rules["vc_probe"] is not None:
        dlls = [d for d in rules["vc_probe"]["dlls"]]
        if model.arch == "arm64":
            dlls = [d for d in dlls if d not in rules["vc_probe"]["skip_on_arm64"]]
        graph.vc_probe = sim.vc_probe(dlls)
    lib_dir = fs.find_child(torch_info.package_dir, "lib")
    preload = preload_list(lib_dir) if rules["preload"] else []
    graph.layout = "wheel" if preload else "conda"
    if not preload:
        library_bin = fs.find_path(env.prefix, "Library", "bin")
        if library_bin is not None and _lookup(library_bin, "torch_cpu.dll") is not None:
            graph.notes.append(translate("win.note.conda_layout", path=str(library_bin)))
    fallback_prefix = [Place(STEP_PATH, p.directory, p.shown, "prepended by torch") for p in model.torch_dirs]
    index = 0
    for dll in preload:
        graph.roots.append(dll)
        graph.outcomes.append(sim.load_root(dll, "preload", index, fallback_prefix=fallback_prefix))
        index += 1
    pyd, note = _extension_module(torch_info.package_dir, model.python_tag, model)
    if note:
        graph.notes.append(note)
    if pyd is not None:
        graph.roots.append(pyd)
        flags_fallback = None  # Python raises ImportError at once: no fallback for extension modules
        py = ctx.env.python.major_minor
        if py is not None and py < (3, 8):
            # before the preload (torch < 1.5.1) torch put its directories on PATH at import, unconditionally
            attempt_order = model.classic_order(fallback_prefix if not rules["preload"] else (), load_dir=pyd.parent)
            outcome = RootOutcome(pyd, "extension", index)
            attempt = _Attempt(attempt_order, "classic", record=True)
            sim.load(pyd, attempt, [pyd])
            outcome.error = outcome.first_error = attempt.error
            outcome.failing, outcome.chain, outcome.uncertain = attempt.failing, attempt.chain, attempt.uncertain
            graph.outcomes.append(outcome)
        else:
            graph.outcomes.append(sim.load_root(pyd, "extension", index, fallback_prefix=flags_fallback))
    _apply_vc_minimum(graph, sim, torch_info.version)
    graph.search_order = [p.searched() for p in model.safe_order(lib_dir or torch_info.package_dir)]
    graph.notes = model.notes + graph.notes
    return graph


def _apply_vc_minimum(graph: WindowsLoadGraph, sim: _Simulation, torch_version: str | None) -> None:
    """torch >= 2.9 needs msvcp140.dll >= 14.40: an older loaded copy makes c10.dll's initialisation fail (1114)."""
    for rule in vc_minimum(torch_version):
        name = rule["dll"].lower()
        bound = sim.loaded.get(name)
        if bound is None or bound[0] is None:
            continue
        info = sim.info(bound[0])
        if isinstance(info, Unreadable) or not info.file_version:
            continue
        have = version_tuple(info.file_version) or ()
        need = version_tuple(rule["version"]) or ()
        if have[: len(need)] >= need:
            continue
        for outcome in graph.outcomes:
            if outcome.error is not None:
                continue
            for module in closure(graph, outcome.path):
                if module.extra.get("own") and any(d.name.lower() == name for d in module.dependencies):
                    outcome.error = ERROR_DLL_INIT_FAILED
                    outcome.failing = (module.path, rule["dll"])
                    outcome.chain = graph.chain_to(module.path)
                    break
            if outcome.error is not None:
                return


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


def build_graph_for_file(ctx: LoaderContext, path: Path) -> WindowsLoadGraph:
    """``path`` loaded with LoadLibraryExW(0x1100) in this env's Python after ``import torch`` added its folders."""
    path = Path(path)
    torch_info = ctx.torch
    model = process_model(ctx, torch_info if torch_info.installed else None)
    graph = WindowsLoadGraph(platform="windows", torch_version=torch_info.version, process=model)
    if torch_info.installed:
        graph.own_paths = frozenset(_own_paths(torch_info, ctx.env))
    sim = _Simulation(model, graph, check_all_symbols=True)
    sim.seed_interpreter()
    graph.roots.append(path)
    graph.outcomes.append(sim.load_root(path, "file", 0, fallback_prefix=None))
    graph.search_order = [p.searched() for p in model.safe_order(path.parent)]
    # no PATH fallback happens for a single LoadLibraryExW: the PATH note would only distract
    graph.notes = [n for n in model.notes if n != translate("win.note.path_unknown")]
    graph.notes.append(translate("win.note.file_model" if torch_info.installed else "win.note.file_model_bare"))
    return graph


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


# ------------------------------------------------------------------------ what shares the process with torch


def package_load_winner(graph: WindowsLoadGraph, name: str, copy: Path, *, beside_extension: bool) -> Path | None:
    """Which file a package imported *before* torch gets when it loads ``name`` and ships ``copy``.

    The package's extension module is loaded with 0x1100 like torch's: its own folder first, then python.exe's
    folder, then the added folders (the package's own, most recently added) and System32. ``beside_extension``:
    the copy is in that extension's folder (found first); otherwise it is in a folder the package adds (PyQt5's
    Qt5\\bin), which comes after python.exe's folder. A module python.exe itself loaded at start is reused by base
    name whatever the package ships. Returns the file that wins (``copy`` or another one); None when python.exe's
    copy cannot be examined.
    """
    key = name.lower()
    bound = graph.loaded.get(key)
    if bound is not None and bound[1].note == "interpreter":
        return bound[0]  # loaded before any package: the already-loaded rule hands out this one
    if beside_extension:
        return copy
    model = graph.process
    if model is not None and model.app_dir is not None:
        hit = _lookup(model.app_dir, key)
        if hit is not None:
            return hit
    return copy


def system_file_version(graph: WindowsLoadGraph, name: str) -> tuple[Path | None, str | None]:
    """(file, FileVersion) of ``name`` in the System32 this model knows (live or --system-root); (None, None) when
    System32 is unknown or lacks it."""
    model = graph.process
    if model is None or not model.system_known or model.system_dir is None:
        return None, None
    hit = _lookup(model.system_dir, name)
    if hit is None:
        return None, None
    return hit, graph.module_version(hit)


def live_windows_version() -> tuple[int, int, int] | None:
    """The running Windows' (major, minor, build); None elsewhere. A seam the tests replace with a fake host."""
    import sys

    getter = getattr(sys, "getwindowsversion", None)
    if getter is None:
        return None
    info = getter()
    return (info.major, info.minor, info.build)


def windows_version(ctx: LoaderContext, graph: WindowsLoadGraph) -> tuple[tuple[int, ...], str] | None:
    """(version, where it was read) of the Windows the env runs on: the running one when live, else
    System32\\kernel32.dll's FileVersion (its first three fields are the OS version: 6.1.7601 is Windows 7 SP1)."""
    if ctx.host.live:
        live = live_windows_version()
        if live is not None:
            return live, "sys.getwindowsversion()"
    path, version = system_file_version(graph, "kernel32.dll")
    parts = version_tuple(version)
    if path is None or not parts:
        return None
    return parts[:3], f"{path} (FileVersion {version})"


__all__ = [
    "EdgeIssue",
    "ProcessModel",
    "RootOutcome",
    "WindowsLoadGraph",
    "build_graph_for_file",
    "build_torch_graph",
    "dll_kind",
    "local_path",
    "process_model",
]
