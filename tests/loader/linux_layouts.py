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
from types import SimpleNamespace

from conda_torchcheck.inventory.model import HostFacts

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "elf" / "prebuilt"
TORCH_PATTERNS = ("torch/lib/*", "torch/_C*.so", "torch/__init__.py", "torch/version.py", "torch-*.dist-info/*")


def host(*, llp: str | None = None, live: bool = True, preload: str | None = None, cwd: Path | None = None):
    environ = {}
    if llp is not None:
        environ["LD_LIBRARY_PATH"] = llp
    if preload is not None:
        environ["LD_PRELOAD"] = preload
    return HostFacts(live=live, environ=environ, cwd=cwd)


def file_ctx(**kwargs) -> SimpleNamespace:
    """A context for ``build_graph_for_file`` without an env (what the ``tree`` verb has for a bare file)."""
    return SimpleNamespace(env=None, host=host(**kwargs))


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
    link_tree(root / "torch", builder.site_packages / "torch")
    for info in root.glob("torch-*.dist-info"):
        link_tree(info, builder.site_packages / info.name)
    return builder.site_packages / "torch"
