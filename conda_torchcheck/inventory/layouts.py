"""What kind of Python installation a prefix that is neither a conda env nor a venv is, from its own files.

The kind decides the import path and the fix commands, so each is read from what the installer leaves behind:

- ``embedded``: the python.org "embeddable package" (ComfyUI's Windows portable build ships one as
  ``python_embeded``). A ``python3XX._pth`` (or ``<exe-stem>._pth``) beside python.exe defines ``sys.path``
  exactly and sets isolated mode: no PYTHONPATH, no user site, no script or current folder on the path; the
  standard library and site-packages are read only if the file says so (its entries, ``import site``).
  Sources: CPython Doc/using/windows.rst "Finding modules" and Doc/library/sys_path_init.rst (``._pth``
  files); Modules/getpath.py, which sets ``isolated``, ``use_environment = 0``, ``safe_path`` and
  ``site_import`` only on an ``import site`` line.
- ``store``: the Microsoft Store package (``PythonSoftwareFoundation.Python.3.X_<version>_<arch>__qbz5n2kfra8p0``
  under ``Program Files\\WindowsApps``, its ``AppxManifest.xml`` naming the package). Its install folder is
  read-only, so pip installs into the user site, which the package's launcher points at
  ``%LOCALAPPDATA%\\Packages\\<family>\\LocalCache\\local-packages`` (CPython PC/python_uwp.cpp sets
  PYTHONUSERBASE there). Sources: CPython Doc/using/windows.rst "The Microsoft Store package".
- ``system`` with a manager: uv's managed Pythons (python-build-standalone builds unpacked as
  ``<uv python dir>/cpython-3.12.8-linux-x86_64-gnu``, marked EXTERNALLY-MANAGED by uv: uv's
  crates/uv-python/src/managed.rs, docs "Python versions") and pyenv / pyenv-win versions
  (``$PYENV_ROOT/versions/3.11.9``, ``%USERPROFILE%\\.pyenv\\pyenv-win\\versions\\3.11.9``: the projects' READMEs).

A venv says who made it in pyvenv.cfg: ``uv = 0.5.11`` (uv venv) or ``virtualenv = 20.x``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from conda_torchcheck.inventory import fs
from conda_torchcheck.inventory.fs import find_child, listing
from conda_torchcheck.lazy_re import LazyPattern
from conda_torchcheck.records import Record

_PTH_NAME = LazyPattern(r"^python(\d+)?\._pth$", re.IGNORECASE)
_STORE_FOLDER = LazyPattern(r"^PythonSoftwareFoundation\.Python\.(3\.\d+)_", re.IGNORECASE)
_STORE_IDENTITY = LazyPattern(r'<Identity\b[^>]*\bName="(PythonSoftwareFoundation\.Python\.3\.\d+)"', re.IGNORECASE)
_STORE_PUBLISHER_ID = "qbz5n2kfra8p0"  # the Python Software Foundation's publisher id in every package family name
_UV_FOLDER = LazyPattern(r"^(cpython|pypy|graalpy)-(\d+\.\d+)[.\d]*[a-z0-9+]*-", re.IGNORECASE)
_PYENV_VERSION = LazyPattern(r"^\d+\.\d+")


class PathFile(Record):
    """An embedded Python's ``._pth``: the whole import path, in order, and whether site runs."""

    __slots__ = ("path", "entries", "imports_site")

    def __init__(self, path: Path, entries: tuple[Path, ...], imports_site: bool) -> None:
        self.path = path
        self.entries = entries
        self.imports_site = imports_site


class InstallKind(Record):
    __slots__ = ("layout", "manager", "path_file", "store_family")

    def __init__(
        self,
        layout: str,
        manager: str | None = None,
        path_file: PathFile | None = None,
        store_family: str | None = None,
    ) -> None:
        #: "embedded", "store" or "system"
        self.layout = layout
        #: who installed and updates this Python: "uv", "pyenv", "pyenv-win" (None: nobody the tool knows)
        self.manager = manager
        self.path_file = path_file
        #: the Store package's family name (``PythonSoftwareFoundation.Python.3.12_qbz5n2kfra8p0``)
        self.store_family = store_family


def read_path_file(prefix: Path) -> PathFile | None:
    """The ``._pth`` beside python.exe, read as getpath.py reads it (``#`` starts a comment; ``import site``
    switches site on; other ``import`` lines are ignored with a warning; entries are relative to the file)."""
    names = listing(prefix)
    candidates = sorted(
        (entry for name, entry in names.items() if _PTH_NAME.match(name)),
        key=lambda p: (p.name.lower() != "python._pth", p.name),
    )
    if not candidates or find_child(prefix, "python.exe") is None:
        return None
    pth = candidates[0]
    try:
        text = pth.read_bytes()[: 1 << 16].decode("utf-8-sig", errors="replace")
    except OSError:
        return None
    entries: list[Path] = []
    imports_site = False
    for raw in text.splitlines():
        line = raw.partition("#")[0].strip()
        if not line:
            continue
        if line == "import site":
            imports_site = True
        elif line.startswith("import "):
            continue
        else:
            # Windows paths inside the file: backslashes, relative to the file's folder
            entries.append(_join(prefix, line))
    return PathFile(pth, tuple(entries), imports_site)


def _join(base: Path, text: str) -> Path:
    parts = [p for p in re.split(r"[\\/]", text) if p not in ("", ".")]
    if re.match(r"^[A-Za-z]:", text) or text.startswith(("\\\\", "/")):
        return Path(text)
    current = base
    for part in parts:
        current = current.parent if part == ".." else (find_child(current, part) or current / part)
    return current


def store_family(prefix: Path) -> str | None:
    """``PythonSoftwareFoundation.Python.3.12_qbz5n2kfra8p0`` for a Store package's install folder."""
    manifest = find_child(prefix, "AppxManifest.xml")
    if manifest is not None:
        try:
            head = manifest.read_bytes()[: 1 << 16].decode("utf-8", errors="replace")
        except OSError:
            head = ""
        m = _STORE_IDENTITY.search(head)
        if m:
            return f"{m.group(1)}_{_STORE_PUBLISHER_ID}"
    m = _STORE_FOLDER.match(prefix.name)
    if m and prefix.name.lower().endswith("__" + _STORE_PUBLISHER_ID):
        return f"PythonSoftwareFoundation.Python.{m.group(1)}_{_STORE_PUBLISHER_ID}"
    return None


def store_user_base(family: str, host_get, prefix: Path | None = None) -> Path | None:
    """The Store package's user base: ``%LOCALAPPDATA%\\Packages\\<family>\\LocalCache\\local-packages``.

    Without LOCALAPPDATA (the env examined from WSL or a mounted disk, where this process has no Windows
    variables), the drive the Store app lives on is searched: ``<drive>\\Users\\*\\AppData\\Local\\Packages\\<family>
    \\LocalCache\\local-packages``. Only one user's folder is an answer; with several, which user runs python
    cannot be told, and none is guessed."""
    local = host_get("LOCALAPPDATA")
    if local:
        return Path(local) / "Packages" / family / "LocalCache" / "local-packages"
    drive = _drive_of_windows_apps(prefix) if prefix is not None else None
    if drive is None:
        return None
    users = find_child(drive, "Users")
    if users is None:
        return None
    found = []
    try:
        names = sorted(os.listdir(users))[:_MAX_USERS]
    except OSError:
        return None
    for name in names:
        base = users / name / "AppData" / "Local" / "Packages" / family / "LocalCache" / "local-packages"
        if fs.is_dir(base):
            found.append(base)
    return found[0] if len(found) == 1 else None


#: user folders looked at on a drive (a server's C:\\Users can hold thousands)
_MAX_USERS = 200


def _drive_of_windows_apps(prefix: Path) -> Path | None:
    """``/mnt/c`` for ``/mnt/c/Program Files/WindowsApps/<package folder>``: the drive the Store app is on."""
    parent = prefix.parent
    if parent.name.lower() == "windowsapps" and parent.parent.name.lower() == "program files":
        return parent.parent.parent
    return None


def manager_of(prefix: Path, os_: str) -> str | None:
    """uv or pyenv, from where the installation sits and the marker files they leave."""
    parent = prefix.parent
    if _UV_FOLDER.match(prefix.name) and parent.name.lower() == "python":
        # ~/.local/share/uv/python, %APPDATA%\uv\python, or $UV_PYTHON_INSTALL_DIR (then the .lock/.gitignore
        # uv writes there tell it)
        if parent.parent.name.lower() == "uv" or find_child(parent, ".lock") or find_child(parent, ".gitignore"):
            return "uv"
    if parent.name.lower() == "versions" and _PYENV_VERSION.match(prefix.name):
        root = parent.parent
        if root.name.lower() == "pyenv-win":
            return "pyenv-win"
        if root.name.lower() == ".pyenv" or (root / "libexec" / "pyenv").exists() or (root / "bin" / "pyenv").exists():
            return "pyenv"
    return None


def venv_creator(pyvenv: Mapping[str, str]) -> str | None:
    """Who wrote pyvenv.cfg: ``uv`` (its ``uv`` key), ``virtualenv`` (its ``virtualenv`` key), else None (venv)."""
    for tool in ("uv", "virtualenv"):
        if pyvenv.get(tool):
            return tool
    return None


def install_kind(prefix: Path, os_: str) -> InstallKind:
    """The kind of a prefix without conda-meta or pyvenv.cfg."""
    if os_ == "windows":
        pth = read_path_file(prefix)
        if pth is not None:
            return InstallKind("embedded", path_file=pth)
        family = store_family(prefix)
        if family is not None:
            return InstallKind("store", store_family=family)
    return InstallKind("system", manager=manager_of(prefix, os_))


def externally_managed(prefix: Path, os_: str, major_minor: tuple[int, int] | None) -> Path | None:
    """The PEP 668 ``EXTERNALLY-MANAGED`` marker in the standard library folder (``lib/python3.X`` on Unix,
    ``Lib`` on Windows), when there is one: pip refuses to install into such a Python."""
    if os_ == "windows":
        lib = find_child(prefix, "Lib")
    else:
        lib = prefix / "lib" / f"python{major_minor[0]}.{major_minor[1]}" if major_minor else None
    marker = lib / "EXTERNALLY-MANAGED" if lib is not None else None
    return marker if marker is not None and marker.is_file() else None


def debian_dist_packages(prefix: Path, major_minor: tuple[int, int]) -> list[Path]:
    """The import path Debian's and Ubuntu's Python (and so most Docker images, NVIDIA's NGC containers among
    them) read instead of site-packages, in site.py's order: ``<prefix>/local/lib/python3.X/dist-packages``
    (pip's, as root), ``<prefix>/lib/python3/dist-packages`` (apt's), ``<prefix>/lib/python3.X/dist-packages``.
    Source: Debian Python Policy 2.5 "Module Path" and Debian's patch to site.getsitepackages. Only the folders
    that exist, only for a prefix whose standard library has no site-packages of its own (a Debian Python)."""
    version = f"python{major_minor[0]}.{major_minor[1]}"
    if (prefix / "lib" / version / "site-packages").is_dir():
        return []
    candidates = [
        prefix / "local" / "lib" / version / "dist-packages",
        prefix / "lib" / "python3" / "dist-packages",
        prefix / "lib" / version / "dist-packages",
    ]
    return [p for p in candidates if p.is_dir()]


#: the distribution only Google Colab's runtime image has (its notebook front end's Python side)
COLAB_DISTRIBUTION = "google-colab"


def runtime_manager(dist_names: set[str]) -> str | None:
    """``colab`` for Google Colab's runtime (a Debian-layout Python whose dist-packages hold google-colab)."""
    return "colab" if COLAB_DISTRIBUTION in dist_names else None
