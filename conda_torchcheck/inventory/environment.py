"""Turn a prefix into an :class:`Environment`: layout, platform, interpreter, import path, packages."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from conda_torchcheck.binaries.headers import sniff
from conda_torchcheck.errors import TargetError
from conda_torchcheck.inventory import fs
from conda_torchcheck.inventory.conda_meta import read_conda_meta
from conda_torchcheck.inventory.dists import read_distributions
from conda_torchcheck.inventory.fs import find_child, find_path
from conda_torchcheck.inventory.host import RUNNING_OS, make_host_facts
from conda_torchcheck.inventory.layouts import (
    InstallKind,
    debian_dist_packages,
    install_kind,
    runtime_manager,
    store_user_base,
    venv_creator,
)
from conda_torchcheck.inventory.locate import readable_folder
from conda_torchcheck.inventory.model import (
    OS,
    CondaRecord,
    Environment,
    HostFacts,
    Layout,
    Problem,
    PythonInfo,
    SiteDir,
)
from conda_torchcheck.inventory.names import PLATFORMS
from conda_torchcheck.lazy_re import LazyPattern
from conda_torchcheck.messages import translate

#: why an embedded Python reads neither PYTHONPATH nor the user site
_ISOLATED = "an embedded Python's ._pth file sets isolated mode"
_PYDIR = re.compile(r"^python(\d)\.(\d+)(t?)$")
_PYDLL = LazyPattern(r"^python(\d)(\d+)(t?)\.dll$", re.IGNORECASE)


def detect_os(prefix: Path, records: tuple[CondaRecord, ...] | None = None) -> OS:
    """Windows envs have python.exe / Lib / Library\\bin; Unix envs have bin/python and lib/pythonX.Y."""
    if find_child(prefix, "python.exe") or find_path(prefix, "Scripts", "python.exe"):
        return "windows"
    if find_path(prefix, "Library", "bin") is not None and find_path(prefix, "Lib", "site-packages"):
        return "windows"
    if fs.is_dir(prefix / "Lib" / "site-packages") and not fs.is_dir(prefix / "bin"):
        return "windows"
    if records is None:
        records, _ = read_conda_meta(prefix) if fs.is_dir(prefix / "conda-meta") else ((), ())
    for rec in records:
        if rec.subdir.startswith("win-"):
            return "windows"
        if rec.subdir.startswith("osx-"):
            return "darwin"
        if rec.subdir.startswith("linux-"):
            return "linux"
    py = _unix_python_binary(prefix)
    if py is not None:
        header = sniff(py)
        if header and header.format == "macho":
            return "darwin"
        return "linux"
    return RUNNING_OS if RUNNING_OS != "windows" else "linux"


def _unix_python_binary(prefix: Path) -> Path | None:
    bindir = prefix / "bin"
    for name in ("python3", "python"):
        candidate = bindir / name
        if fs.exists(candidate):
            return candidate
    try:
        for entry in sorted(bindir.glob("python3.*")):
            if fs.exists(entry) and not entry.name.endswith("-config"):
                return entry
    except OSError:
        pass
    return None


def read_pyvenv_cfg(prefix: Path) -> dict[str, str] | None:
    cfg = prefix / "pyvenv.cfg"
    try:
        text = fs.read_text(cfg, fs.SMALL_LIMIT)
    except OSError:
        return None
    out: dict[str, str] = {}
    for line in text.splitlines():
        if "=" in line:
            key, value = line.split("=", 1)
            out[key.strip().lower()] = value.strip()
    return out


def detect_layout(prefix: Path, pyvenv: Mapping[str, str] | None) -> Layout:
    if pyvenv is not None:
        return "venv"
    if fs.is_dir(prefix / "conda-meta"):
        parts = [p.lower() for p in prefix.parts]
        if ".pixi" in parts:
            return "pixi"
        return "conda"
    return "system"


def _python_record(records: tuple[CondaRecord, ...]) -> CondaRecord | None:
    for rec in records:
        if rec.name in ("python", "python_abi") and rec.name == "python":
            return rec
    return None


def detect_python(
    prefix: Path, os_: OS, records: tuple[CondaRecord, ...], pyvenv: Mapping[str, str] | None
) -> PythonInfo:
    executable: Path | None = None
    version: str | None = None
    source = ""
    free_threaded = False
    rec = _python_record(records)
    if rec is not None:
        version, source = rec.version, f"conda-meta/{rec.source.name}"
        free_threaded = "_cp3" in rec.build and rec.build.rstrip("0123456789_").endswith("t")
    if os_ == "windows":
        executable = find_child(prefix, "python.exe") or find_path(prefix, "Scripts", "python.exe")
        if version is None:
            dirs = [prefix]
            if pyvenv and pyvenv.get("home"):
                dirs.append(Path(pyvenv["home"]))
            for d in dirs:
                for name in sorted(_safe_listdir(d)):
                    m = _PYDLL.match(name)
                    if m and m.group(1) == "3":
                        version, source = f"3.{m.group(2)}", f"{name}"
                        free_threaded = bool(m.group(3))
                        break
                if version:
                    break
    else:
        executable = _unix_python_binary(prefix)
        libdirs = []
        for name in _safe_listdir(prefix / "lib"):
            m = _PYDIR.match(name)
            if m:
                libdirs.append((int(m.group(1)), int(m.group(2)), m.group(3), name))
        with_site = [d for d in libdirs if fs.is_dir(prefix / "lib" / d[3] / "site-packages")]
        best = max(with_site or libdirs, default=None)
        if best is not None:
            if version is None or not version.startswith(f"{best[0]}.{best[1]}"):
                if version is None:
                    version, source = f"{best[0]}.{best[1]}", f"lib/{best[3]}"
            free_threaded = free_threaded or bool(best[2])
    if pyvenv is not None:
        cfg_version = pyvenv.get("version_info") or pyvenv.get("version")
        if cfg_version and (version is None or len(version.split(".")) < 3):
            cleaned = ".".join(cfg_version.split(".")[:3])
            if version is None or cleaned.startswith(version):
                version, source = cleaned, "pyvenv.cfg"
    if version is not None and len(version.split(".")) == 2 and os_ != "windows":
        patch = _patchlevel(prefix, version, free_threaded)
        if patch:
            version, source = patch, source + "+patchlevel.h"
    arch = None
    if executable is not None:
        header = sniff(executable.resolve() if fs.is_symlink(executable) else executable)
        if header is not None:
            arch = header.arch
    if arch is None and os_ == "windows":
        for name in _safe_listdir(prefix):
            if _PYDLL.match(name):
                header = sniff(prefix / name)
                if header:
                    arch = header.arch
                    break
    if arch is None and rec is not None:
        arch = {
            "win-64": "x86_64",
            "win-32": "x86",
            "win-arm64": "arm64",
            "linux-64": "x86_64",
            "linux-aarch64": "aarch64",
            "osx-64": "x86_64",
            "osx-arm64": "arm64",
        }.get(rec.subdir)
    return PythonInfo(
        executable=executable, version=version, arch=arch, free_threaded=free_threaded, version_source=source
    )


def _patchlevel(prefix: Path, version: str, free_threaded: bool) -> str | None:
    header = prefix / "include" / f"python{version}{'t' if free_threaded else ''}" / "patchlevel.h"
    try:
        text = fs.read_text(header, fs.SMALL_LIMIT)
    except OSError:
        return None
    m = re.search(r'#define\s+PY_VERSION\s+"([0-9.]+)', text)
    return m.group(1) if m else None


def _safe_listdir(path: Path) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def detect_platform(os_: OS, python: PythonInfo, records: tuple[CondaRecord, ...]) -> tuple[str | None, str | None]:
    """(platform, guess): the conda subdir read from the python record, the interpreter's header or any
    platform-specific record; when none of them tells, no platform and the OS's most common one as a guess."""
    rec = _python_record(records)
    if rec is not None and rec.subdir and rec.subdir != "noarch":
        return rec.subdir, None
    if python.arch and (os_, python.arch) in PLATFORMS:
        return PLATFORMS[(os_, python.arch)], None
    for rec in records:
        if rec.subdir and rec.subdir != "noarch":
            return rec.subdir, None
    return None, {"windows": "win-64", "linux": "linux-64", "darwin": "osx-arm64"}[os_]


def _is_base(prefix: Path, records: tuple[CondaRecord, ...]) -> bool:
    if fs.is_dir(prefix / "condabin"):
        return True
    if not fs.is_dir(prefix / "conda-meta"):
        return False
    if fs.is_dir(prefix / "envs") and fs.is_dir(prefix / "pkgs"):
        return True
    return any(rec.name == "conda" for rec in records)


def _base_prefix(prefix: Path, layout: Layout, os_: OS, pyvenv: Mapping[str, str] | None) -> Path | None:
    if layout == "venv" and pyvenv is not None:
        for key in ("base-prefix", "base_prefix"):
            if pyvenv.get(key):
                return Path(pyvenv[key])
        home = pyvenv.get("home")
        if home:
            home_path = Path(home)
            # Windows: home is the folder of python.exe (the base prefix itself); Unix: <base>/bin
            return home_path if os_ == "windows" else home_path.parent
        return None
    if layout in ("conda", "pixi") and prefix.parent.name == "envs":
        base = prefix.parent.parent
        if fs.is_dir(base / "conda-meta"):
            return base
    return None


def _same_path(a: str | Path | None, b: Path, windows: bool) -> bool:
    if not a:
        return False
    sa, sb = os.path.normpath(str(a)), os.path.normpath(str(b))
    if windows:
        return sa.lower() == sb.lower()
    try:
        return os.path.realpath(sa) == os.path.realpath(sb)
    except OSError:
        return sa == sb


def _site_dirs(
    prefix: Path,
    os_: OS,
    python: PythonInfo,
    layout: Layout,
    pyvenv: Mapping[str, str] | None,
    host: HostFacts,
    base_prefix: Path | None,
    kind: InstallKind | None = None,
) -> tuple[SiteDir, ...]:
    sites: list[SiteDir] = []
    sep = ";" if os_ == "windows" else ":"
    isolated = kind is not None and kind.path_file is not None
    for entry in host.path_list("PYTHONPATH", sep):
        p = Path(entry)
        # a ._pth's isolated mode ignores every PYTHON* variable: listed for the evidence, never read
        sites.append(SiteDir(p, "pythonpath", fs.is_dir(p) and not isolated, _ISOLATED if isolated else ""))
    user = user_site_dir(os_, python, host, kind, prefix)
    if user is not None:
        inactive_reason = ""
        if isolated:
            inactive_reason = _ISOLATED
        elif host.get("PYTHONNOUSERSITE"):
            inactive_reason = "PYTHONNOUSERSITE is set"
        elif layout == "venv" and (pyvenv or {}).get("include-system-site-packages", "false").lower() != "true":
            inactive_reason = "venvs without system site packages ignore the user site"
        sites.append(SiteDir(user, "user", not inactive_reason and fs.is_dir(user), inactive_reason))
    env_sites: list[Path] = []
    if isolated:
        assert kind is not None and kind.path_file is not None
        sites.extend(_path_file_sites(prefix, kind))
    elif os_ == "windows":
        found = find_path(prefix, "Lib", "site-packages")
        if found is not None:
            env_sites.append(found)
    else:
        mm = python.major_minor
        if mm:
            name = f"python{mm[0]}.{mm[1]}{'t' if python.free_threaded else ''}"
            for lib in ("lib", "lib64"):
                candidate = prefix / lib / name / "site-packages"
                if fs.is_dir(candidate) and not any(_same_path(candidate, s, False) for s in env_sites):
                    env_sites.append(candidate)
            if layout == "system" and os_ == "linux":
                env_sites.extend(debian_dist_packages(prefix, mm))
    for path in env_sites:
        sites.append(SiteDir(path, "env", True))
    if layout == "venv" and (pyvenv or {}).get("include-system-site-packages", "false").lower() == "true":
        if base_prefix is not None:
            base_site = find_path(base_prefix, "Lib", "site-packages") if os_ == "windows" else None
            if os_ != "windows" and python.major_minor:
                mm = python.major_minor
                base_site = base_prefix / "lib" / f"python{mm[0]}.{mm[1]}" / "site-packages"
            if base_site is not None:
                sites.append(SiteDir(base_site, "base", fs.is_dir(base_site)))
    # .pth files add directories after their site dir, each once: site.py skips a folder already on the path
    # (2,500 "." lines add nothing), so the checks that walk the path stay linear in its distinct folders
    known = {os.path.normcase(os.path.abspath(str(s.path))) for s in sites}
    for site in list(sites):
        if not site.active or site.kind not in ("env", "user", "base"):
            continue
        for name in sorted(_safe_listdir(site.path)):
            if not name.endswith(".pth"):
                continue
            try:
                lines = fs.read_text(site.path / name, fs.SMALL_LIMIT).splitlines()
            except OSError:
                continue
            for line in lines:
                line = line.strip()
                if not line or line.startswith(("#", "import ", "import\t")):
                    continue
                target = Path(line) if os.path.isabs(line) else site.path / line
                key = os.path.normcase(os.path.abspath(str(target)))
                if key not in known and fs.is_dir(target):
                    known.add(key)
                    sites.append(SiteDir(target, "pth", True, note=str(site.path / name)))
    return tuple(sites)


def _path_file_sites(prefix: Path, kind: InstallKind) -> list[SiteDir]:
    """An embedded Python's import path: the ``._pth`` entries in order (folders only: the stdlib zip is a
    file), then, only with ``import site``, ``Lib\\site-packages`` as site.main() adds it for the prefix."""
    assert kind.path_file is not None
    note = str(kind.path_file.path)
    out: list[SiteDir] = []
    for entry in kind.path_file.entries:
        if not fs.is_dir(entry):
            continue
        inside = entry == prefix or prefix in entry.parents
        out.append(SiteDir(entry, "env" if inside and entry.name.lower() == "site-packages" else "pth", True, note))
    found = find_path(prefix, "Lib", "site-packages")
    if found is not None and not any(_same_path(found, s.path, True) for s in out):
        # listed either way: without `import site` it is where pip put the packages this Python never reads
        reads = kind.path_file.imports_site
        out.append(SiteDir(found, "env", reads, "" if reads else "the ._pth file has no `import site` line"))
    return out


def _refused_path_files(prefix: Path, sites: tuple[SiteDir, ...]) -> tuple[Problem, ...]:
    """pyvenv.cfg and the .pth files that exist but could not be read (a FIFO, a device link, past any sane
    size, no permission): said, since what they would add to the import path went unseen."""
    candidates = [prefix / "pyvenv.cfg"]
    for site in sites:
        if site.active and site.kind in ("env", "user", "base"):
            candidates += [site.path / n for n in sorted(_safe_listdir(site.path)) if n.endswith(".pth")]
    out = []
    for path in candidates:
        if not (fs.exists(path) or fs.is_symlink(path)):
            continue
        try:
            fs.read_bytes(path, fs.SMALL_LIMIT)
        except FileNotFoundError:
            continue
        except OSError as exc:
            out.append(Problem("path-file", path, fs.describe(exc)))
    return tuple(out)


def user_site_dir(
    os_: OS, python: PythonInfo, host: HostFacts, kind: InstallKind | None = None, prefix: Path | None = None
) -> Path | None:
    """PEP 370 user site for this interpreter version, on the host the env runs on (for a Microsoft Store
    Python, under its package's LocalCache, where its launcher points PYTHONUSERBASE)."""
    mm = python.major_minor
    if mm is None:
        return None
    userbase = host.get("PYTHONUSERBASE")
    t = "t" if python.free_threaded else ""
    if not userbase and kind is not None and kind.store_family is not None:
        store_base = store_user_base(kind.store_family, host.get, prefix)
        userbase = str(store_base) if store_base is not None else None
    if os_ == "windows":
        if not userbase:
            appdata = host.get("APPDATA")
            if not appdata:
                return None
            userbase = str(Path(appdata) / "Python")
        return Path(userbase) / f"Python{mm[0]}{mm[1]}{t}" / "site-packages"
    if not userbase:
        if host.home is None:
            return None
        userbase = str(host.home / ".local")
    return Path(userbase) / "lib" / f"python{mm[0]}.{mm[1]}{t}" / "site-packages"


def _looks_like_env(prefix: Path, os_: OS) -> bool:
    if fs.is_dir(prefix / "conda-meta") or fs.is_file(prefix / "pyvenv.cfg"):
        return True
    if os_ == "windows":
        return find_child(prefix, "python.exe") is not None or find_path(prefix, "Lib", "site-packages") is not None
    return _unix_python_binary(prefix) is not None or any(_PYDIR.match(n) for n in _safe_listdir(prefix / "lib"))


def load_environment(
    prefix: Path | str,
    *,
    use_live_host: bool = True,
    host_overrides: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    system_root: Path | None = None,
    target_os: OS | None = None,
) -> tuple[Environment, HostFacts]:
    """Read everything the checks need about ``prefix``. Raises :class:`TargetError` for a non-env."""
    # a long-lived process (conda running its hooks in-process) must not see listings from before a transaction
    fs.clear_cache()
    prefix = readable_folder(prefix)
    records, meta_problems = read_conda_meta(prefix)  # once: large envs hold tens of MB of JSON
    os_ = target_os or detect_os(prefix, records)
    if not _looks_like_env(prefix, os_):
        raise TargetError(
            translate("cli.target.not_env", prefix=str(prefix)), hint=translate("cli.target.not_env_hint")
        )
    pyvenv = read_pyvenv_cfg(prefix)
    layout: Layout = detect_layout(prefix, pyvenv)
    kind = install_kind(prefix, os_) if layout == "system" else None
    if kind is not None:
        layout = kind.layout  # type: ignore[assignment]
    manager = venv_creator(pyvenv) if pyvenv is not None else kind.manager if kind is not None else None
    python = detect_python(prefix, os_, records, pyvenv)
    platform, platform_guess = detect_platform(os_, python, records)
    host = make_host_facts(
        os_, prefix, use_live=use_live_host, overrides=host_overrides, cwd=cwd, system_root=system_root
    )
    base_prefix = _base_prefix(prefix, layout, os_, pyvenv)
    is_base = _is_base(prefix, records)
    sites = _site_dirs(prefix, os_, python, layout, pyvenv, host, base_prefix, kind)
    dists, leftovers, dist_problems = read_distributions(sites)
    if manager is None and layout == "system":
        manager = runtime_manager({d.name for d in dists})
    name = None
    if is_base:
        name = "base"
    elif prefix.parent.name == "envs":
        name = prefix.name
    is_active = None
    if host.live:
        import sys

        windows = os_ == "windows"
        # a venv activated inside an activated conda env: both are "active" (the venv's python runs, the
        # conda env's activation variables are set); with neither set, the env this process runs in
        activated = [v for v in (host.get("VIRTUAL_ENV"), host.get("CONDA_PREFIX")) if v]
        is_active = any(_same_path(a, prefix, windows) for a in (activated or [sys.prefix]))
    env = Environment(
        prefix=prefix,
        os=os_,
        platform=platform,
        platform_guess=platform_guess,
        layout=layout,
        python=python,
        base_prefix=base_prefix,
        is_base=is_base,
        name=name,
        site_dirs=sites,
        conda_records=records,
        distributions=dists,
        leftovers=leftovers,
        problems=meta_problems + dist_problems + _refused_path_files(prefix, sites),
        is_active=is_active,
        manager=manager,
        path_file=kind.path_file if kind is not None else None,
        store_family=kind.store_family if kind is not None else None,
    )
    return env, host
