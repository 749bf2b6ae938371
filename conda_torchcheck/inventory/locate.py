"""Find the target prefix: ``-p``, ``-n NAME`` (without conda), or the active env."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path

from conda_torchcheck.errors import TargetError
from conda_torchcheck.inventory import fs
from conda_torchcheck.messages import translate


def _environments_txt(home: Path) -> list[Path]:
    out = []
    for candidate in (home / ".conda" / "environments.txt",):
        try:
            for line in fs.read_text(candidate, fs.SMALL_LIMIT).splitlines():
                line = line.strip()
                if line and not line.startswith("#"):
                    out.append(Path(line))
        except OSError:
            continue
    return out


def _conda_roots(environ: Mapping[str, str], home: Path) -> list[Path]:
    roots: list[Path] = []
    for var in ("CONDA_ROOT", "MAMBA_ROOT_PREFIX"):
        if environ.get(var):
            roots.append(Path(environ[var]))
    if environ.get("CONDA_EXE"):
        # <root>/bin/conda or <root>\Scripts\conda.exe or <root>/condabin/conda
        roots.append(Path(environ["CONDA_EXE"]).parent.parent)
    if environ.get("CONDA_PREFIX") and environ.get("CONDA_SHLVL"):
        prefix = Path(environ["CONDA_PREFIX"])
        roots.append(prefix.parent.parent if prefix.parent.name == "envs" else prefix)
    # the installation this tool itself runs from (the conda plugin runs inside base or an env of it)
    here = Path(sys.prefix)
    if here.parent.name == "envs" and fs.is_dir(here.parent.parent / "conda-meta"):
        roots.append(here.parent.parent)
    elif fs.is_dir(here / "conda-meta") and (fs.is_dir(here / "envs") or fs.is_dir(here / "condabin")):
        roots.append(here)
    for name in ("miniconda3", "anaconda3", "miniforge3", "mambaforge", "micromamba", ".miniconda3"):
        roots.append(home / name)
    roots.append(home / ".local" / "share" / "mamba")
    for entry in _environments_txt(home):
        if fs.is_dir(entry / "condabin") or fs.is_dir(entry / "envs"):
            roots.append(entry)
    seen: set[str] = set()
    unique = []
    for root in roots:
        key = os.path.normcase(str(root))
        if key not in seen:
            seen.add(key)
            unique.append(root)
    return unique


def _condarc_envs_dirs(paths: list[Path], environ: Mapping[str, str]) -> list[Path]:
    """``envs_dirs`` from .condarc files, read with a few lines of parsing (no YAML import on this path)."""
    out: list[Path] = []
    for rc in paths:
        try:
            text = fs.read_text(rc, fs.SMALL_LIMIT)
        except OSError:
            continue
        in_list = False
        for raw in text.splitlines():
            line = raw.split(" #", 1)[0].rstrip()
            if not line.strip():
                continue
            if line.startswith("envs_dirs:"):
                rest = line[len("envs_dirs:") :].strip()
                if rest.startswith("[") and rest.endswith("]"):
                    out.extend(_rc_path(item, environ) for item in rest[1:-1].split(",") if item.strip())
                in_list = not rest
                continue
            if in_list:
                stripped = line.strip()
                if stripped.startswith("- ") and raw[:1] in (" ", "-", "\t"):
                    out.append(_rc_path(stripped[2:], environ))
                    continue
                in_list = False
    return out


def _rc_path(item: str, environ: Mapping[str, str]) -> Path:
    value = item.strip().strip("'\"")
    # conda expands $VAR and ${VAR}; unknown names stay as written
    value = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: environ.get(m.group(1) or m.group(2), m.group(0)), value)
    return Path(os.path.expanduser(value))


def _condarc_files(environ: Mapping[str, str], home: Path, roots: list[Path]) -> list[Path]:
    installed = [root for root in roots if fs.is_dir(root / "conda-meta")]
    files = [installed[0] / ".condarc"] if installed else []
    files += [home / ".config" / "conda" / ".condarc", home / ".conda" / ".condarc", home / ".condarc"]
    if environ.get("CONDARC"):
        files.append(Path(environ["CONDARC"]))
    return files


def envs_dirs(environ: Mapping[str, str] | None = None, home: Path | None = None) -> list[Path]:
    """The folders conda looks in for named envs, in conda's order, without importing conda."""
    environ = os.environ if environ is None else environ
    home = home or Path.home()
    dirs: list[Path] = []
    for var in ("CONDA_ENVS_PATH", "CONDA_ENVS_DIRS"):
        value = environ.get(var)
        if value:
            dirs.extend(Path(p) for p in value.split(os.pathsep) if p)
    roots = _conda_roots(environ, home)
    dirs.extend(_condarc_envs_dirs(_condarc_files(environ, home, roots), environ))
    dirs.extend(root / "envs" for root in roots)
    dirs.append(home / ".conda" / "envs")
    return dirs


def resolve_name(name: str, environ: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
    environ = os.environ if environ is None else environ
    home = home or Path.home()
    if name in ("base", "root"):
        for root in _conda_roots(environ, home):
            if fs.is_dir(root / "conda-meta"):
                return root
        raise TargetError(translate("cli.target.no_base"), hint=translate("cli.target.no_base_hint"))
    if "/" in name or "\\" in name or name in (".", ".."):
        raise TargetError(
            translate("cli.target.name_is_path", name=name), hint=translate("cli.target.name_is_path_hint")
        )
    for directory in envs_dirs(environ, home):
        candidate = directory / name
        if fs.is_dir(candidate / "conda-meta"):
            return candidate
    for entry in _environments_txt(home):
        if entry.name == name and fs.is_dir(entry):
            return entry
    raise TargetError(
        translate("cli.target.no_such_name", name=name),
        hint=translate("cli.target.no_such_name_hint", places=", ".join(str(d) for d in envs_dirs(environ, home))),
    )


def default_prefix(environ: Mapping[str, str] | None = None) -> Path:
    """The active env (CONDA_PREFIX, then VIRTUAL_ENV), else the env this tool runs in."""
    environ = os.environ if environ is None else environ
    conda, venv = environ.get("CONDA_PREFIX"), environ.get("VIRTUAL_ENV")
    if conda and venv:
        # a venv activated inside an activated conda env (or the reverse): the one whose folder comes first
        # on PATH is the one whose python runs
        return Path(conda if _path_rank(conda, environ) < _path_rank(venv, environ) else venv)
    for value in (conda, venv):
        if value:
            return Path(value)
    return Path(sys.prefix)


def _path_rank(prefix: str, environ: Mapping[str, str]) -> int:
    wanted = {os.path.normcase(os.path.normpath(os.path.join(prefix, sub))) for sub in ("bin", "Scripts", "")}
    for index, entry in enumerate(environ.get("PATH", "").split(os.pathsep)):
        if entry and os.path.normcase(os.path.normpath(entry)) in wanted:
            return index
    return 1 << 30


def readable_folder(prefix: str | Path) -> Path:
    """``prefix`` made absolute, or :class:`TargetError` when it is missing, not a folder or unreadable."""
    prefix = Path(os.path.expanduser(str(prefix)))
    try:
        prefix = prefix.absolute()
    except OSError as exc:  # pragma: no cover - cwd vanished
        raise TargetError(translate("cli.target.cannot_resolve", prefix=str(prefix), error=str(exc))) from exc
    try:
        os.stat(prefix)
    except FileNotFoundError:
        raise TargetError(translate("cli.target.missing", prefix=str(prefix))) from None
    except (OSError, ValueError) as exc:  # a folder on the way not searchable, a name too long, a NUL byte
        detail = fs.describe(exc) if isinstance(exc, OSError) else "the path holds a NUL byte"
        raise TargetError(translate("cli.target.unreadable", prefix=repr(str(prefix))[1:-1], error=detail)) from None
    if not fs.is_dir(prefix):
        raise TargetError(translate("cli.target.not_dir", prefix=str(prefix)))
    try:
        os.listdir(prefix)
    except OSError as exc:
        detail = str(exc.strerror or exc)
        raise TargetError(translate("cli.target.unreadable", prefix=str(prefix), error=detail)) from exc
    return prefix


#: where ComfyUI's Windows portable build keeps its embedded Python, from the folder a user points -p at: the
#: unpacked ComfyUI_windows_portable folder, or the ComfyUI folder inside it (its README: run_nvidia_gpu.bat
#: starts .\\python_embeded\\python.exe -s ComfyUI\\main.py)
_EMBEDDED_FOLDER = "python_embeded"


def embedded_python_in(folder: Path) -> Path | None:
    """The ``python_embeded`` folder of a ComfyUI portable install pointed at by ``folder`` (when ``folder``
    is not itself an environment), else None."""
    if (folder / "python.exe").exists() or (folder / "conda-meta").is_dir() or (folder / "pyvenv.cfg").exists():
        return None
    for candidate in (folder / _EMBEDDED_FOLDER, folder.parent / _EMBEDDED_FOLDER):
        if (candidate / "python.exe").is_file():
            return candidate
    return None


def resolve_target(prefix: str | None, name: str | None, environ: Mapping[str, str] | None = None) -> Path:
    if prefix and name:
        raise TargetError(translate("cli.target.prefix_and_name"))
    if prefix:
        given = Path(os.path.expanduser(prefix))
        return embedded_python_in(given) or given
    if name:
        return resolve_name(name, environ)
    return default_prefix(environ)


def known_envs(environ: Mapping[str, str] | None = None, home: Path | None = None) -> list[tuple[Path, str]]:
    """Every env conda knows on this machine, found the way conda finds them, without conda: the base
    installations, each folder of the envs dirs that holds ``conda-meta``, and ``~/.conda/environments.txt``.
    (prefix, where it was found), each prefix once, in that order; folders that no longer exist are left out,
    as conda leaves them out."""
    environ = os.environ if environ is None else environ
    home = home or Path.home()
    found: list[tuple[Path, str]] = []
    seen: set[str] = set()

    def add(prefix: Path, where: str) -> None:
        try:
            key = os.path.normcase(os.path.realpath(prefix))
        except (OSError, ValueError):  # a NUL byte in an environments.txt line, a loop
            key = os.path.normcase(str(prefix))
        if key not in seen and fs.is_dir(prefix / "conda-meta"):
            seen.add(key)
            found.append((prefix, where))

    for root in _conda_roots(environ, home):
        add(root, "base")
    for directory in envs_dirs(environ, home):
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in names:
            add(directory / name, str(directory))
    for entry in _environments_txt(home):
        add(entry, str(home / ".conda" / "environments.txt"))
    return found


def python_installs(environ: Mapping[str, str] | None = None, home: Path | None = None) -> list[tuple[Path, str]]:
    """Pythons installed by uv and pyenv, where they keep them (uv: ``$UV_PYTHON_INSTALL_DIR``,
    ``$XDG_DATA_HOME/uv/python``, ``~/.local/share/uv/python``, ``%APPDATA%\\uv\\python``; pyenv:
    ``$PYENV_ROOT/versions``, ``~/.pyenv/versions``, pyenv-win's ``~/.pyenv/pyenv-win/versions``); uv's
    minor-version links to an installation are the installation once. (prefix, the folder it was found in)."""
    environ = os.environ if environ is None else environ
    home = home or Path.home()
    places: list[Path] = []
    if environ.get("UV_PYTHON_INSTALL_DIR"):
        places.append(Path(environ["UV_PYTHON_INSTALL_DIR"]))
    data = Path(environ["XDG_DATA_HOME"]) if environ.get("XDG_DATA_HOME") else home / ".local" / "share"
    places.append(data / "uv" / "python")
    if environ.get("APPDATA"):
        places.append(Path(environ["APPDATA"]) / "uv" / "python")
    if environ.get("PYENV_ROOT"):
        places.append(Path(environ["PYENV_ROOT"]) / "versions")
    places += [home / ".pyenv" / "versions", home / ".pyenv" / "pyenv-win" / "versions"]
    found: list[tuple[Path, str]] = []
    seen: set[str] = set()
    for place in places:
        try:
            names = sorted(os.listdir(place))
        except OSError:
            continue
        # the installations before the links to them
        for name in sorted(names, key=lambda n: os.path.islink(place / n)):
            prefix = place / name
            if not (prefix / "bin" / "python3").exists() and not (prefix / "python.exe").is_file():
                continue
            try:
                key = os.path.normcase(os.path.realpath(prefix))
            except OSError:
                key = os.path.normcase(str(prefix))
            if key not in seen:
                seen.add(key)
                found.append((prefix, str(place)))
    return found
