"""Real envs for the plan and repair tests and benchmarks/repair.py: a venv with the real torch 2.13.0+cpu wheel
installed by pip, a local folder of real wheels to repair from (``--no-index --find-links``), and the ways the
suite breaks such an env, each a function of the env's clone.

The wheel folder holds the torch wheel (tests/realdata.py's cache) and what the repairs install, fetched once by
pip from its configured sources (``pip download --no-deps``): the torchvision releases for torch 2.13 and 2.14,
pillow, numpy and typing-extensions. Nothing here is a stand-in except the old libstdc++ (a generated ELF with
chosen version nodes) and another build's library (a real torch library under another file name).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

#: what the repairs may install, by pip's configured sources; torch's own wheel comes from the realdata cache
WHEELHOUSE_SPECS = ("torchvision==0.28.0", "torchvision==0.29.0", "pillow", "numpy", "typing-extensions")


class Unavailable(Exception):
    """The real env cannot be built here (no cp311, no wheel, no pip source): tests skip with this reason."""


def build_base(root: Path) -> tuple[Path, Path]:
    """(venv, wheelhouse) under ``root``: torch 2.13.0+cpu installed from its real wheel by pip."""
    if not sys.platform.startswith("linux"):
        raise Unavailable("the real-import envs need Linux")
    if sys.version_info[:2] != (3, 11):
        raise Unavailable("the pinned torch wheel is cp311; this interpreter is not 3.11")
    from tests.realdata import wheel

    torch_wheel = wheel("torch-2.13.0-linux-cpu")
    house = root / "wheels"
    house.mkdir(parents=True, exist_ok=True)
    link = house / torch_wheel.name
    if not link.exists():
        try:
            os.link(torch_wheel, link)
        except OSError:
            link.symlink_to(torch_wheel)
    for spec in WHEELHOUSE_SPECS:  # one at a time: pip resolves the specs of one call together
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "-d", str(house),
             "--disable-pip-version-check", "--python-version", "3.11", spec],
            capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        if proc.returncode != 0:
            raise Unavailable(f"pip cannot download {spec} here: " + proc.stderr.strip()[-300:])
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    proc = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile", "--disable-pip-version-check",
         str(link)],
        capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    if proc.returncode != 0:
        raise Unavailable("cannot pip install torch and its dependencies here: " + proc.stderr.strip()[-300:])
    subprocess.run([str(venv / "bin" / "python"), "-c", "import torch"], capture_output=True, timeout=600)
    return venv, house


def clone(base: Path, target: Path) -> Path:
    """A hard-linked copy of ``base`` (milliseconds; pip replaces files, never writes into them)."""
    shutil.copytree(base, target, symlinks=True, copy_function=os.link)
    return target


def site(venv: Path) -> Path:
    return next((venv / "lib").glob("python3.*/site-packages"))


def real_import(venv: Path, llp: str | None = None, module: str = "torch") -> str | None:
    """None when ``import <module>`` works in the env, else the last line of its error."""
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD", "PYTHONPATH")}
    if llp:
        env["LD_LIBRARY_PATH"] = llp
    proc = subprocess.run(
        [str(venv / "bin" / "python"), "-c", f"import {module}"], capture_output=True, text=True, env=env, timeout=300
    )
    return None if proc.returncode == 0 else (proc.stderr.strip().splitlines() or ["?"])[-1]


# --- the breakages: each changes the clone and returns the LD_LIBRARY_PATH the user has (None: unset) ------


def _missing_libshm(venv: Path, work: Path, house: Path) -> str | None:
    (site(venv) / "torch" / "lib" / "libshm.so").unlink()
    return None


def _mixed_torch_files(venv: Path, work: Path, house: Path) -> str | None:
    lib = site(venv) / "torch" / "lib"
    (lib / "libc10.so").unlink()
    shutil.copy(lib / "libtorch.so", lib / "libc10.so")
    return None


def _missing_typing_extensions(venv: Path, work: Path, house: Path) -> str | None:
    for entry in list(site(venv).iterdir()):
        if entry.name.startswith("typing_extensions"):
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    return None


def _torchvision_of_another_torch(venv: Path, work: Path, house: Path) -> str | None:
    [wheel] = sorted(house.glob("torchvision-0.29.0-*.whl"))
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    return None


def _old_libgomp_on_ld_library_path(venv: Path, work: Path, house: Path) -> str | None:
    from tests.loader.linux_layouts import FIX

    return str(FIX / "gomp_old")


def _old_libstdcxx_on_ld_library_path(venv: Path, work: Path, house: Path) -> str | None:
    from tests.binaries.elfgen import make_elf

    folder = work / "old-gcc" / "lib64"
    folder.mkdir(parents=True, exist_ok=True)
    nodes = ["GLIBCXX_3.4", *(f"GLIBCXX_3.4.{i}" for i in range(1, 19)), "CXXABI_1.3"]
    (folder / "libstdc++.so.6").write_bytes(make_elf(soname="libstdc++.so.6", version_defs=nodes))
    return str(folder)


def _another_torch_library_on_ld_library_path(venv: Path, work: Path, house: Path) -> str | None:
    folder = work / "other-torch" / "lib"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(site(venv) / "torch" / "lib" / "libtorch.so", folder / "libc10.so")
    return str(folder)


def cpu_torchvision(house: Path) -> bool:
    """Whether the folder has a torchvision built for a +cpu torch (PyPI's Linux wheels are CUDA builds)."""
    return any(house.glob("torchvision-*+cpu-*.whl"))


#: classes whose repair needs a torchvision +cpu wheel (download.pytorch.org/whl/cpu), which may not be at hand
NEEDS_CPU_TORCHVISION = frozenset({"torchvision-of-another-torch"})

Breakage = Callable[[Path, Path, Path], "str | None"]
BREAKAGES: dict[str, Breakage] = {
    "missing-libshm": _missing_libshm,
    "mixed-torch-files": _mixed_torch_files,
    "missing-typing-extensions": _missing_typing_extensions,
    "torchvision-of-another-torch": _torchvision_of_another_torch,
    "old-libgomp-on-ld-library-path": _old_libgomp_on_ld_library_path,
    "old-libstdcxx-on-ld-library-path": _old_libstdcxx_on_ld_library_path,
    "another-torch-library-on-ld-library-path": _another_torch_library_on_ld_library_path,
}
