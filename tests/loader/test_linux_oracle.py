"""Verdicts against the real thing: a venv with the real torch 2.13.0+cpu wheel installed by pip, broken in the
ways users break it, where ``import torch`` itself is the oracle.

One venv per session (pip install of the cached wheel, about 20 s; torch's pure-Python dependencies come from
the configured index); every test works on a hard-linked clone, so breaking it costs milliseconds.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conda_torchcheck.checks import run_checks
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.inventory import load_environment
from conda_torchcheck.loader import linux
from tests.loader.linux_layouts import FIX

pytestmark = [pytest.mark.realdata, pytest.mark.slow]


@pytest.fixture(scope="session")
def oracle_venv(tmp_path_factory):
    if not sys.platform.startswith("linux"):
        pytest.skip("the real-import oracle needs Linux")
    if sys.version_info[:2] != (3, 11):
        pytest.skip("the pinned wheel is cp311; this interpreter is not 3.11")
    from tests.realdata import wheel

    whl = wheel("torch-2.13.0-linux-cpu")
    root = tmp_path_factory.mktemp("oracle") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, timeout=300)
    proc = subprocess.run(
        [str(root / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile", "--disable-pip-version-check",
         str(whl)],
        capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    if proc.returncode != 0:
        pytest.skip("cannot pip install torch and its dependencies here: " + proc.stderr.strip()[-300:])
    # one import writes the bytecode caches, which every hard-linked clone then shares
    subprocess.run([str(root / "bin" / "python"), "-c", "import torch"], capture_output=True, timeout=600)
    return root


@pytest.fixture
def clone(oracle_venv, tmp_path):
    target = tmp_path / "venv"
    shutil.copytree(oracle_venv, target, symlinks=True, copy_function=os.link)
    return target


def site(venv: Path) -> Path:
    return next((venv / "lib").glob("python3.*/site-packages"))


def real_import(venv: Path, llp: str | None = None) -> str | None:
    """None when ``import torch`` works, else the last line of its traceback."""
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD", "PYTHONPATH")}
    if llp:
        env["LD_LIBRARY_PATH"] = llp
    proc = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import torch"], capture_output=True, text=True, env=env, timeout=300
    )
    if proc.returncode == 0:
        return None
    return proc.stderr.strip().splitlines()[-1]


def verdict(venv: Path, llp: str | None = None):
    env, host = load_environment(venv, host_overrides={"LD_LIBRARY_PATH": llp} if llp else None)
    ctx = CheckContext(env, host)
    found = run_checks(ctx, only=["TC4", "TC903"])
    return ctx, found, [f for f in found if f.severity.value == "error"]


def test_healthy(clone):
    assert real_import(clone) is None
    _ctx, _found, errors = verdict(clone)
    assert errors == []


def test_missing_libshm(clone):
    (site(clone) / "torch" / "lib" / "libshm.so").unlink()
    real = real_import(clone)
    _ctx, _found, errors = verdict(clone)
    assert real == "ImportError: libshm.so: cannot open shared object file: No such file or directory"
    assert [f.id for f in errors] == ["TC401"]
    assert real.endswith(errors[0].evidence["loader_message"])


def test_missing_libgomp_uses_the_system_copy(clone):
    ctx0 = verdict(clone)[0]
    cache = linux.search_context(ctx0.env, ctx0.host).cache
    if cache is None or cache.lookup("libgomp.so.1") is None:
        pytest.skip("no system libgomp.so.1 on this host")
    (site(clone) / "torch" / "lib" / "libgomp.so.1").unlink()
    assert real_import(clone) is None
    _ctx, found, errors = verdict(clone)
    assert errors == []
    assert [f.id for f in found] == ["TC406"]


def test_old_libgomp_on_ld_library_path(clone):
    llp = str(FIX / "gomp_old")
    real = real_import(clone, llp)
    _ctx, _found, errors = verdict(clone, llp)
    assert real is not None and "version `GOMP_4.0' not found" in real
    tc402 = [f for f in errors if f.id == "TC402"]
    assert tc402 and real.endswith(tc402[0].evidence["loader_message"])


def test_mixed_torch_files_give_undefined_symbols(clone):
    lib = site(clone) / "torch" / "lib"
    (lib / "libc10.so").unlink()
    shutil.copy(lib / "libtorch.so", lib / "libc10.so")  # a torch library from "another build"
    real = real_import(clone)
    _ctx, found, errors = verdict(clone)
    assert real is not None
    m = re.search(r"(\S+\.so): undefined symbol: (\S+)", real)
    assert m, real
    tc403 = {
        (s, r) for f in errors if f.id == "TC403" for r in f.evidence["required_by"] for s in f.evidence["symbols"]
    }
    assert (m.group(2), m.group(1)) in tc403
    assert all(f.fixes[0].commands and "--force-reinstall" in f.fixes[0].commands[0] for f in errors if f.id == "TC403")


def test_healthy_install_satisfies_its_python_requirements(clone):
    env, host = load_environment(clone)
    assert run_checks(CheckContext(env, host), only=["TC209"]) == []


def test_missing_typing_extensions_is_confirmed_by_the_real_import(clone):
    """TC209's import-time verdict against the real interpreter: typing_extensions gone → import fails."""
    sp = site(clone)
    for entry in list(sp.iterdir()):
        if entry.name.startswith("typing_extensions"):
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    real = real_import(clone)
    env, host = load_environment(clone)
    found = run_checks(CheckContext(env, host), only=["TC209"])
    assert real == "ModuleNotFoundError: No module named 'typing_extensions'"
    assert [(f.id, f.severity.value) for f in found] == [("TC209", "error")]


def test_torch_for_python_3_11_under_python_3_12_matches_the_real_import(oracle_venv, tmp_path):
    """TC111 against the real interpreter: a cp311 torch copied into a Python 3.12 venv."""
    py312 = _working_python("3.12")
    if py312 is None:
        pytest.skip("no working python3.12 here")
    venv = tmp_path / "v312"
    subprocess.run([py312, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    target = next((venv / "lib").glob("python3.*/site-packages"))
    for entry in site(oracle_venv).iterdir():
        if entry.name.startswith(("torch", "typing_extensions")):
            dest = target / entry.name
            if entry.is_dir():
                shutil.copytree(entry, dest, symlinks=True, copy_function=os.link)
            else:
                os.link(entry, dest)
    real = real_import(venv)
    env, host = load_environment(venv)
    found = run_checks(CheckContext(env, host), only=["TC111", "TC4"])
    assert real is not None and "Failed to load PyTorch C extensions" in real + _full_error(venv)
    assert [f.id for f in found if f.severity.value == "error"] == ["TC111"]


def _working_python(version: str) -> str | None:
    """An interpreter of that version that really runs (a pyenv shim without that version selected does not)."""
    import glob

    candidates = [shutil.which(f"python{version}")]
    candidates += sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}*/bin/python{version}")))
    candidates += sorted(glob.glob(f"/root/.pyenv/versions/{version}*/bin/python{version}"))
    for candidate in candidates:
        if candidate and subprocess.run([candidate, "-c", "pass"], capture_output=True).returncode == 0:
            return candidate
    return None


def _full_error(venv: Path) -> str:
    proc = subprocess.run([str(venv / "bin" / "python"), "-c", "import torch"], capture_output=True, text=True)
    return proc.stderr
