"""Windows env layouts built from real wheels (tests/realdata.py) for the loader, check and tree tests.

Files are hard-linked from the extraction cache when possible (fast, no extra disk): a test that damages a file
must replace it (:func:`replace_file`), never write into it, or it would damage the shared cache.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from tests import realdata
from tests.envbuilder import EnvBuilder, pe_stub

TORCH_MEMBERS = ("torch/lib/*.dll", "torch/*.pyd", "torch/__init__.py", "torch/version.py", "torch-*.dist-info/*")
WHEEL_MEMBERS = ("*.dll", "*.pyd", "*.dist-info/*")

# the OS DLLs torch 2.0-2.15, the VC runtime and intel-openmp import (real-test-data.md §2.4)
OS_DLLS = (
    "kernel32.dll",
    "kernelbase.dll",
    "ntdll.dll",
    "advapi32.dll",
    "dbghelp.dll",
    "iphlpapi.dll",
    "psapi.dll",
    "user32.dll",
    "userenv.dll",
    "ws2_32.dll",
    "wintrust.dll",
    "imagehlp.dll",
    "shell32.dll",
    "ole32.dll",
    "oleaut32.dll",
    "ucrtbase.dll",
)


def link_or_copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if dst.exists():
        dst.unlink()
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def replace_file(path: Path, data: bytes) -> None:
    """Give ``path`` new contents without touching the (possibly hard-linked) original."""
    path.unlink()
    path.write_bytes(data)


def torch_root(version: str) -> Path:
    return realdata.extract(f"torch-{version}-win", TORCH_MEMBERS)


def wheel_root(key: str) -> Path:
    return realdata.extract(key, WHEEL_MEMBERS)


def install_torch(env: EnvBuilder, version: str, *, site: Path | None = None) -> Path:
    """Lay the real wheel's torch files into ``site`` with a RECORD trimmed to the extracted members."""
    install_wheel(env, f"torch-{version}-win", TORCH_MEMBERS, site=site)
    return (site or env.site_packages) / "torch"


PYQT5_MEMBERS = ("PyQt5/Qt5/bin/msvcp140*.dll", "PyQt5/Qt5/bin/vcruntime140*.dll", "PyQt5_Qt5-*.dist-info/*")


def install_wheel(env: EnvBuilder, key: str, patterns: tuple[str, ...], *, site: Path | None = None) -> Path:
    """Lay the members of the real wheel ``key`` matching ``patterns`` into ``site`` as pip would: the files and
    the dist-info, its RECORD trimmed to the files laid out. Returns the dist-info folder."""
    root = realdata.extract(key, patterns)
    site = site or env.site_packages
    info = next(root.glob("*.dist-info"))
    present = set()
    for path in root.rglob("*"):
        if path.is_file() and path.name != ".complete":
            rel = path.relative_to(root).as_posix()
            present.add(rel)
            link_or_copy(path, site / rel)
    rows = []
    with open(info / "RECORD", encoding="utf-8", newline="") as fh:
        for row in csv.reader(fh):
            if row and (row[0] in present or row[0].endswith("/RECORD")):
                rows.append(row)
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    target = site / info.name
    (target / "RECORD").unlink()
    (target / "RECORD").write_text(out.getvalue(), encoding="utf-8")
    (target / "INSTALLER").write_text("pip\n", encoding="utf-8")
    return target


def install_pyqt5_qt5(env: EnvBuilder, *, site: Path | None = None) -> Path:
    """PyQt5-Qt5 5.15.2's real VC++ runtime copies (14.26.28720.3) in site-packages\\PyQt5\\Qt5\\bin."""
    install_wheel(env, "pyqt5-qt5-5.15.2-win", PYQT5_MEMBERS, site=site)
    return (site or env.site_packages) / "PyQt5" / "Qt5" / "bin"


def runtime_dlls(key: str) -> dict[str, Path]:
    """name (lower case) -> file, for the msvc-runtime wheel ``key`` (both data/ and data/Scripts/ copies)."""
    out: dict[str, Path] = {}
    for path in sorted(wheel_root(key).rglob("*.dll")):
        out.setdefault(path.name.lower(), path)
    return out


def install_runtime(dest: Path, key: str, names: Iterable[str] | None = None) -> list[Path]:
    dlls = runtime_dlls(key)
    wanted = [n.lower() for n in names] if names is not None else list(dlls)
    placed = []
    for name in wanted:
        link_or_copy(dlls[name], dest / name)
        placed.append(dest / name)
    return placed


def openmp_dll(key: str = "intel-openmp-2021.4-win64") -> Path:
    return next(wheel_root(key).rglob("libiomp5md.dll"))


def fake_windows(root: Path, *, arch: str = "x86_64", extra: Iterable[Path] = ()) -> Path:
    """A Windows folder whose System32 holds header-only stand-ins for the OS DLLs (and real files given)."""
    system32 = root / "System32"
    system32.mkdir(parents=True, exist_ok=True)
    for name in OS_DLLS:
        (system32 / name).write_bytes(pe_stub(arch))
    for path in extra:
        link_or_copy(path, system32 / path.name.lower())
    return root


def record_digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pe"


def fixture(rel: str) -> Path:
    return FIXTURES / rel


def context(prefix: Path, *, system_root: Path | None = None, path: str | None = None, cwd: Path | None = None, **env):
    """A CheckContext for a Windows env read from this (Linux) machine, with the host facts given."""
    from conda_torchcheck.checks.context import CheckContext
    from conda_torchcheck.inventory import fs, load_environment

    fs.clear_cache()
    overrides = dict(env)
    if path is not None:
        overrides["PATH"] = path
    environment, host = load_environment(
        prefix, use_live_host=False, host_overrides=overrides, cwd=cwd, system_root=system_root
    )
    return CheckContext(environment, host)


def windows_env(tmp_path: Path, *, layout: str = "conda", python: str = "3.11.9", channel: str = "conda-forge", **kw):
    return EnvBuilder(tmp_path / "env", os="windows", layout=layout, python=python, python_channel=channel, **kw)


def python_org_base(root: Path, runtime_key: str | None = "msvc-runtime-14.44", tag: str = "311") -> Path:
    """A python.org-style install: python.exe, pythonXY.dll and (x64) vcruntime140.dll + vcruntime140_1.dll."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "python.exe").write_bytes(pe_stub("x86_64"))
    (root / f"python{tag}.dll").write_bytes(pe_stub("x86_64"))
    (root / "Lib" / "site-packages").mkdir(parents=True, exist_ok=True)
    if runtime_key:
        install_runtime(root, runtime_key, ["vcruntime140.dll", "vcruntime140_1.dll"])
    return root


def torch_env(tmp_path: Path, version: str = "2.3.0", runtime_key: str = "msvc-runtime-14.44") -> EnvBuilder:
    """A conda-layout Windows env with the real torch wheel's files and a real VC++ runtime beside python.exe."""
    builder = windows_env(tmp_path)
    install_torch(builder, version)
    install_runtime(builder.prefix, runtime_key)
    return builder


def venv_on(tmp_path: Path, base: Path, *, python: str = "3.11.9") -> EnvBuilder:
    """A venv whose pyvenv.cfg points at ``base`` (a local folder, so the model can look at it)."""
    builder = EnvBuilder(tmp_path / "venv", os="windows", layout="venv", python=python)
    (builder.prefix / "pyvenv.cfg").write_text(
        f"home = {base}\ninclude-system-site-packages = false\nversion = {python}\n", encoding="utf-8"
    )
    return builder
