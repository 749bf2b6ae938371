"""Real envs for the plan and repair tests and benchmarks/repair.py: a venv with the real torch 2.13.0+cpu wheel
installed by pip, a local folder of real wheels to repair from (``--no-index --find-links``), and the ways the
suite breaks such an env, each a function of the env's clone that returns the variables the user's shell has
(LD_LIBRARY_PATH, LD_PRELOAD, PYTHONPATH).

The classes are the ones users hit on a pip venv: torch's files removed or cut short (an interrupted install, a
full disk, antivirus), a dependency torch imports at start-up missing or too old, a library of another build
or an old system library first in the process (LD_LIBRARY_PATH, LD_PRELOAD), another torch first on sys.path
(a source checkout or a script named torch.py on PYTHONPATH). Each really breaks ``import torch`` (the tests
check it before anything else). Not here, because the import works: a stale torch dist-info beside the current
one, torch's own libgomp removed (the system's loads and has every version torch needs), a library made
unreadable by its mode (this user may be root).

The wheel folder holds the torch wheel (tests/realdata.py's cache) and what the repairs install, fetched once by
pip from its configured sources (``pip download --no-deps``): the torchvision releases for torch 2.13 and 2.14,
pillow, numpy and typing-extensions (the newest, and 4.5.0 for the too-old class). Nothing here is a stand-in
except the old libstdc++ (a generated ELF with chosen version nodes), the old libgomp (a prebuilt fixture with
its sources in tests/fixtures/elf) and another build's library (a real torch library under another file name).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

Variables = dict[str, str]

#: what the repairs may install, by pip's configured sources; torch's own wheel comes from the realdata cache
WHEELHOUSE_SPECS = (
    "torchvision==0.28.0",
    "torchvision==0.29.0",
    "pillow",
    "numpy",
    "typing-extensions",
    "typing-extensions==4.5.0",  # older than torch 2.13's typing-extensions>=4.10.0: a breakage, not a repair
)


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


#: the variables of the user's shell a breakage may set (the checks read them; the real import runs with them)
VARIABLES = ("LD_LIBRARY_PATH", "LD_PRELOAD", "PYTHONPATH")


def real_import(venv: Path, variables: dict[str, str] | None = None, module: str = "torch") -> str | None:
    """None when ``import <module>`` works in the env with the user's ``variables``, else its error's last line.

    ``<module>.__version__`` is read too: without torch/__init__.py, ``import torch`` "works" and gives an empty
    namespace package, on which the user's next line fails."""
    env = {k: v for k, v in os.environ.items() if k not in VARIABLES and k != "PYTHONNOUSERSITE"}
    env.update({k: v for k, v in (variables or {}).items() if v})
    env["PYTHONNOUSERSITE"] = "1"  # this machine's user site is not part of the env under test
    proc = subprocess.run(
        [str(venv / "bin" / "python"), "-c", f"import {module}; {module}.__version__"],
        capture_output=True, text=True, env=env, timeout=300, cwd=venv,
    )  # fmt: skip
    if proc.returncode == 0:
        return None
    return (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}, nothing on stderr"])[-1]


# --- the breakages: each changes the clone and returns the variables the user's shell has (VARIABLES) ------


def _missing_libshm(venv: Path, work: Path, house: Path) -> Variables:
    (site(venv) / "torch" / "lib" / "libshm.so").unlink()
    return {}


def _mixed_torch_files(venv: Path, work: Path, house: Path) -> Variables:
    lib = site(venv) / "torch" / "lib"
    (lib / "libc10.so").unlink()
    shutil.copy(lib / "libtorch.so", lib / "libc10.so")
    return {}


def _missing_typing_extensions(venv: Path, work: Path, house: Path) -> Variables:
    for entry in list(site(venv).iterdir()):
        if entry.name.startswith("typing_extensions"):
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    return {}


def _torchvision_of_another_torch(venv: Path, work: Path, house: Path) -> Variables:
    [wheel] = sorted(house.glob("torchvision-0.29.0-*.whl"))
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    return {}


def _old_libgomp_on_ld_library_path(venv: Path, work: Path, house: Path) -> Variables:
    from tests.loader.linux_layouts import FIX

    return {"LD_LIBRARY_PATH": str(FIX / "gomp_old")}


def _old_libstdcxx_on_ld_library_path(venv: Path, work: Path, house: Path) -> Variables:
    from tests.binaries.elfgen import make_elf

    folder = work / "old-gcc" / "lib64"
    folder.mkdir(parents=True, exist_ok=True)
    nodes = ["GLIBCXX_3.4", *(f"GLIBCXX_3.4.{i}" for i in range(1, 19)), "CXXABI_1.3"]
    (folder / "libstdc++.so.6").write_bytes(make_elf(soname="libstdc++.so.6", version_defs=nodes))
    return {"LD_LIBRARY_PATH": str(folder)}


def _another_torch_library_on_ld_library_path(venv: Path, work: Path, house: Path) -> Variables:
    folder = work / "other-torch" / "lib"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(site(venv) / "torch" / "lib" / "libtorch.so", folder / "libc10.so")
    return {"LD_LIBRARY_PATH": str(folder)}


def _torch_file(venv: Path, relative: str) -> Path:
    return site(venv) / "torch" / relative


def _truncate(path: Path, size: int) -> None:
    """A file cut short where it lies (an interrupted download or unpack); the clone's hard link is replaced
    first, so that the base env keeps its copy."""
    data = path.read_bytes()[:size]
    path.unlink()
    path.write_bytes(data)


def _zero_byte_libtorch_cpu(venv: Path, work: Path, house: Path) -> Variables:
    _truncate(_torch_file(venv, "lib/libtorch_cpu.so"), 0)
    return {}


def _truncated_libc10(venv: Path, work: Path, house: Path) -> Variables:
    path = _torch_file(venv, "lib/libc10.so")
    _truncate(path, path.stat().st_size // 2)
    return {}


def _missing_torch_c_extension(venv: Path, work: Path, house: Path) -> Variables:
    [module] = (site(venv) / "torch").glob("_C.cpython-311-*.so")
    module.unlink()
    return {}


def _missing_torch_init(venv: Path, work: Path, house: Path) -> Variables:
    _torch_file(venv, "__init__.py").unlink()
    return {}


def _missing_torch_module(venv: Path, work: Path, house: Path) -> Variables:
    _torch_file(venv, "_utils_internal.py").unlink()
    return {}


def _truncated_torch_module(venv: Path, work: Path, house: Path) -> Variables:
    path = _torch_file(venv, "functional.py")
    _truncate(path, path.stat().st_size // 3)
    return {}


def _missing_torchgen(venv: Path, work: Path, house: Path) -> Variables:
    shutil.rmtree(site(venv) / "torchgen")
    return {}


def _old_typing_extensions(venv: Path, work: Path, house: Path) -> Variables:
    [wheel] = sorted(house.glob("typing_extensions-4.5.0-*.whl"))
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    return {}


def _missing_libtorch_global_deps(venv: Path, work: Path, house: Path) -> Variables:
    _torch_file(venv, "lib/libtorch_global_deps.so").unlink()
    return {}


def _missing_libtorch_python(venv: Path, work: Path, house: Path) -> Variables:
    _torch_file(venv, "lib/libtorch_python.so").unlink()
    return {}


def _old_libstdcxx_preloaded(venv: Path, work: Path, house: Path) -> Variables:
    folder = Path(_old_libstdcxx_on_ld_library_path(venv, work, house)["LD_LIBRARY_PATH"])
    return {"LD_PRELOAD": str(folder / "libstdc++.so.6")}


def _old_libgomp_preloaded(venv: Path, work: Path, house: Path) -> Variables:
    """LD_PRELOAD of a libgomp (the usual answer to "cannot allocate memory in static TLS block"), here one older
    than torch's own."""
    return {
        "LD_PRELOAD": str(Path(_old_libgomp_on_ld_library_path(venv, work, house)["LD_LIBRARY_PATH"]) / "libgomp.so.1")
    }


def _another_torch_library_preloaded(venv: Path, work: Path, house: Path) -> Variables:
    folder = Path(_another_torch_library_on_ld_library_path(venv, work, house)["LD_LIBRARY_PATH"])
    return {"LD_PRELOAD": str(folder / "libc10.so")}


def _torch_source_tree_on_pythonpath(venv: Path, work: Path, house: Path) -> Variables:
    """A PyTorch source checkout on PYTHONPATH: its torch package has the .py files, not the built _C."""
    checkout = work / "pytorch"
    (checkout / "torch").mkdir(parents=True, exist_ok=True)
    for name in ("__init__.py", "_utils_internal.py", "version.py"):
        shutil.copy(_torch_file(venv, name), checkout / "torch" / name)
    return {"PYTHONPATH": str(checkout)}


def _torch_py_on_pythonpath(venv: Path, work: Path, house: Path) -> Variables:
    """A user's script named torch.py in a folder on PYTHONPATH (``import torch`` imports the script)."""
    scripts = work / "scripts"
    scripts.mkdir(parents=True, exist_ok=True)
    (scripts / "torch.py").write_text("import torch\n\nprint(torch.ones(2))\n")
    return {"PYTHONPATH": str(scripts)}


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
    "zero-byte-libtorch-cpu": _zero_byte_libtorch_cpu,
    "truncated-libc10": _truncated_libc10,
    "missing-torch-c-extension": _missing_torch_c_extension,
    "missing-torch-init": _missing_torch_init,
    "missing-torch-module": _missing_torch_module,
    "truncated-torch-module": _truncated_torch_module,
    "missing-torchgen": _missing_torchgen,
    "old-typing-extensions": _old_typing_extensions,
    "missing-libtorch-global-deps": _missing_libtorch_global_deps,
    "missing-libtorch-python": _missing_libtorch_python,
    "old-libstdcxx-preloaded": _old_libstdcxx_preloaded,
    "old-libgomp-preloaded": _old_libgomp_preloaded,
    "another-torch-library-preloaded": _another_torch_library_preloaded,
    "torch-source-tree-on-pythonpath": _torch_source_tree_on_pythonpath,
    "torch-py-on-pythonpath": _torch_py_on_pythonpath,
}
