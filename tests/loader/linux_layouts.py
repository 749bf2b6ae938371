"""Linux layouts for loader and check tests: gcc-built fixtures, the real torch 2.13.0+cpu wheel laid out as a
venv or a conda env (hard links into the shared extraction, so each layout costs milliseconds), and the real
loader (``ldd``, ``ctypes.CDLL`` in a child process) as the oracle."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from conda_torchcheck.inventory.model import HostFacts
from conda_torchcheck.loader.contract import FileContext

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "elf" / "prebuilt"
#: torch's libraries and every Python file its RECORD lists (a layout missing some is a broken one: TC211)
TORCH_PATTERNS = ("torch/lib/*", "torch/_C*.so", "torch/*.py", "torchgen/*.py", "functorch/*.py", "torch-*.dist-info/*")


def host(*, llp: str | None = None, live: bool = True, preload: str | None = None, cwd: Path | None = None):
    environ = {}
    if llp is not None:
        environ["LD_LIBRARY_PATH"] = llp
    if preload is not None:
        environ["LD_PRELOAD"] = preload
    return HostFacts(live=live, environ=environ, cwd=cwd)


def file_ctx(**kwargs) -> FileContext:
    """A context for ``build_graph_for_file`` without an env (what the ``tree`` verb has for a bare file)."""
    return FileContext(host(**kwargs))


def resolutions(graph) -> dict[str, str | None]:
    """DT_NEEDED name -> resolved path (None for a miss), first occurrence, over the whole graph."""
    out: dict[str, str | None] = {}
    for _module, dep in graph.iter_edges():
        if dep.kind != "needed" or dep.name in out:
            continue
        out[dep.name] = str(dep.resolution.path) if dep.resolution and dep.resolution.path else None
    return out


# --- oracles ----------------------------------------------------------------------------------------------


def have_ldd() -> bool:
    return shutil.which("ldd") is not None and sys.platform.startswith("linux")


def ldd(path: Path, env: dict[str, str] | None = None) -> dict[str, str | None]:
    """``ldd`` as name -> path (None for 'not found'); paths normalised."""
    proc = subprocess.run(
        ["ldd", str(path)], capture_output=True, text=True, env={**_clean_env(), **(env or {})}, timeout=60
    )
    out: dict[str, str | None] = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"\s*(\S+) => (not found|(\S+) \(0x[0-9a-f]+\))", line)
        if m:
            out[m.group(1)] = None if m.group(2) == "not found" else os.path.normpath(m.group(3))
    return out


def dlopen(path: Path, env: dict[str, str] | None = None) -> str | None:
    """dlopen ``path`` with RTLD_NOW in a child Python (the real ld.so); None on success, else its message."""
    proc = subprocess.run(
        [sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])", str(path)],
        capture_output=True,
        text=True,
        env={**_clean_env(), **(env or {})},
        timeout=60,
    )
    if proc.returncode == 0:
        return None
    return proc.stderr.strip().splitlines()[-1].split("OSError: ", 1)[-1]


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD", "PYTHONPATH")}
    return env


# --- the real wheel ---------------------------------------------------------------------------------------


def torch_root() -> Path:
    from tests.realdata import extract

    return extract("torch-2.13.0-linux-cpu", TORCH_PATTERNS)


def link_tree(src: Path, dst: Path) -> None:
    """Hard-link (or copy, across file systems) every file of ``src`` into ``dst``."""
    for root, _dirs, files in os.walk(src):
        rel = Path(root).relative_to(src)
        (dst / rel).mkdir(parents=True, exist_ok=True)
        for name in files:
            target = dst / rel / name
            if target.exists():
                continue
            try:
                os.link(Path(root) / name, target)
            except OSError:
                shutil.copy2(Path(root) / name, target)


def install_real_torch(builder, *, conda_record: bool = False) -> Path:
    """Put the real torch 2.13.0+cpu files into ``builder``'s site-packages as pip would (dist-info, RECORD)."""
    root = torch_root()
    for package in ("torch", "torchgen", "functorch"):
        if (root / package).is_dir():
            link_tree(root / package, builder.site_packages / package)
    for info in root.glob("torch-*.dist-info"):
        link_tree(info, builder.site_packages / info.name)
    return builder.site_packages / "torch"


# --- minitorch: a torch-shaped chain of gcc-built fixtures ------------------------------------------------

MINI = FIX / "minitorch"
TORCH_INIT = """# torch/__init__.py shaped like torch 2.13's loading code (only what the loader model reads)
def _preload_cuda_deps(err=None):
    cuda_libs = [
        ("cublas", "libcublasLt.so.*[0-9]"),
        ("nccl", "libnccl.so.*[0-9]"),
    ]

def _load_global_deps():
    with open("/proc/self/maps") as f:
        pass
"""


def minitorch_env(
    builder,
    *,
    mkl: str | None = "2024.0",
    nccl: str | None = "2.21",
    nccl_dist: str | None = "2.21.5",
    cuda: str | None = "12.6",
    requires: tuple[str, ...] = ('nvidia-nccl-cu12==2.21.5; platform_system == "Linux"',),
) -> Path:
    """Install minitorch into ``builder`` as a pip torch ``2.13.0+cu126`` whose RECORD lists its libraries.

    libtorch_cpu.so needs libmkl_rt.so.2 (from torch/lib here, ``mkl`` picks the build) and libnccl.so.2 (from
    site-packages/nvidia/nccl/lib, as the CUDA wheels' RUNPATH has it; ``nccl`` picks the build).
    """
    site = builder.site_packages
    files: dict[str, bytes] = {
        "torch/__init__.py": TORCH_INIT.encode(),
        "torch/version.py": (
            f"__version__ = '2.13.0+{'cu' + cuda.replace('.', '') if cuda else 'cpu'}'\n"
            f"cuda = {repr(cuda)}\nhip = None\nxpu = None\n"
        ).encode(),
        "torch/_C.cpython-311-x86_64-linux-gnu.so": (
            MINI / "torch" / "_C.cpython-311-x86_64-linux-gnu.so"
        ).read_bytes(),
    }
    for lib in ("libtorch_global_deps.so", "libtorch_python.so", "libtorch_cpu.so"):
        files[f"torch/lib/{lib}"] = (MINI / "torch" / "lib" / lib).read_bytes()
    if mkl:
        files["torch/lib/libmkl_rt.so.2"] = (MINI / f"mkl-{mkl}" / "libmkl_rt.so.2").read_bytes()
    local = "cu" + cuda.replace(".", "") if cuda else "cpu"
    builder.dist("torch", f"2.13.0+{local}", files=files, requires=requires)
    if nccl:
        nccl_files = {"nvidia/nccl/lib/libnccl.so.2": (FIX / "cuda" / f"nccl-{nccl}" / "libnccl.so.2").read_bytes()}
        if nccl_dist:
            builder.dist("nvidia-nccl-cu12", nccl_dist, files=nccl_files)
        else:
            for rel, data in nccl_files.items():
                (site / rel).parent.mkdir(parents=True, exist_ok=True)
                (site / rel).write_bytes(data)
    return site / "torch"


def context(prefix: Path, **overrides: str):
    from conda_torchcheck.checks.context import CheckContext
    from conda_torchcheck.inventory import load_environment

    env, host_facts = load_environment(prefix, host_overrides=overrides or None)
    return CheckContext(env, host_facts)


def run_ids(ctx, *ids: str):
    from conda_torchcheck.checks import run_checks

    return run_checks(ctx, only=list(ids))
