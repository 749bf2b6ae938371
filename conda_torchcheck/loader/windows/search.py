"""What the Windows loader searches, as the model sees it: its search steps and error codes, the system's
tables (API sets, KnownDLLs, the VC++ runtime), places on a host path, and the process model (the
interpreter's and torch's DLL folders, PATH, the search order of each LoadLibraryExW flag set)."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conda_torchcheck.inventory import fs
from conda_torchcheck.knowledge import load, parse_version
from conda_torchcheck.loader.graph import SearchPlace
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
    if not fs.is_dir(mount):
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
        return hit if fs.is_file(hit) else None
    except OSError:
        return None


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
            exe = fs.find_child(base, "python.exe") if base is not None and fs.is_dir(base) else None
            return exe, base if base is not None and fs.is_dir(base) else None, shown
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
            if wow is not None and fs.is_dir(wow):
                system_dir = wow
        system_known = system_dir is not None and fs.is_dir(system_dir)
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
        if folder is not None and fs.is_dir(folder):  # AddDllDirectory fails for a missing folder
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
            exists = fs.exists(path)
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
