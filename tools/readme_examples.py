"""Regenerate the example runs in README.md from real runs of the tool, so that what the README shows is what
the tool prints (tests/test_readme_examples.py fails when they drift apart).

    python -m tools.readme_examples            # rewrite README.md's generated blocks
    python -m tools.readme_examples --check    # exit 1 when they differ

Each example is built under one folder and shown there as ``/tmp/demo`` (the run uses a folder of the same
length, so the renderer wraps the lines exactly as it would there):

- ``windows``: a venv on a python.org Python 3.11 with pip's real torch 2.15.0 wheel files and its Python
  dependencies, examined from Linux against a Windows folder whose System32 holds the real VC++ runtime 14.34
  DLLs (the msvc-runtime wheel; tests/realdata.py pins both by sha256);
- ``first-contact``: the README's first command, ``.venv/bin/conda-torchcheck`` run with no target in a fresh
  venv of its own on a Linux machine without an NVIDIA driver, where a Miniforge base with an env ``ml`` and a
  uv-managed Python are installed.

A block in README.md is the text between ``<!-- generated: NAME -->`` and ``<!-- /generated -->``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import secrets
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
SHOWN_ROOT = "/tmp/demo"
_BLOCK = re.compile(r"(<!-- generated: ([\w-]+) -->\n)(.*?)(<!-- /generated -->)", re.DOTALL)

#: torch 2.15.0's Requires-Dist for Windows, each at a release that satisfies it
TORCH_DEPENDENCIES = {
    "filelock": "3.20.0",
    "typing-extensions": "4.15.0",
    "setuptools": "80.9.0",
    "sympy": "1.14.0",
    "networkx": "3.5",
    "jinja2": "3.1.6",
    "fsspec": "2025.10.0",
}


@contextlib.contextmanager
def demo_root() -> Iterator[Path]:
    """A fresh folder whose path is as long as ``/tmp/demo``."""
    base = Path(os.path.dirname(SHOWN_ROOT))
    length = len(os.path.basename(SHOWN_ROOT))
    for _ in range(100):
        root = base / secrets.token_hex(length)[:length]
        try:
            root.mkdir()
        except FileExistsError:
            continue
        try:
            yield root
        finally:
            shutil.rmtree(root, ignore_errors=True)
        return
    raise RuntimeError("no free folder for the examples")


@contextlib.contextmanager
def _environ(values: dict[str, str | None]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


#: variables of the machine that generates the examples that must not reach them
_CLEARED = (
    "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "CONDA_SHLVL", "CONDA_EXE", "CONDA_ROOT", "MAMBA_ROOT_PREFIX",
    "CONDA_ENVS_PATH", "CONDA_ENVS_DIRS", "CONDARC", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONUSERBASE",
    "PYENV_ROOT", "UV_PYTHON_INSTALL_DIR", "XDG_DATA_HOME", "LD_LIBRARY_PATH", "LC_ALL", "LC_MESSAGES",
    "CONDA_TORCHCHECK_LANG", "KMP_DUPLICATE_LIB_OK",
)  # fmt: skip


def _run(argv: list[str], root: Path, *, prefix: Path | None = None) -> str:
    """``conda-torchcheck ARGV`` in this process, as a user's terminal would show it (no colour)."""
    from conda_torchcheck.checks import cuda_driver
    from conda_torchcheck.cli.main import main
    from conda_torchcheck.inventory import fs

    no_driver = root / "no-driver"
    no_driver.mkdir(exist_ok=True)
    values: dict[str, str | None] = dict.fromkeys(_CLEARED)
    values.update({"HOME": str(root / "home"), "NO_COLOR": "1", "LANG": "C.UTF-8"})
    saved_prefix, saved_root = sys.prefix, cuda_driver.ROOT
    out = io.StringIO()
    try:
        with _environ(values), contextlib.redirect_stdout(out):
            fs.clear_cache()
            if prefix is not None:
                sys.prefix = str(prefix)  # the venv the tool was installed into
            cuda_driver.ROOT = no_driver  # a machine without an NVIDIA driver, wherever this runs
            main(argv)
    finally:
        sys.prefix, cuda_driver.ROOT = saved_prefix, saved_root
        fs.clear_cache()
    return out.getvalue().replace(str(root), SHOWN_ROOT)


def windows_example(root: Path) -> str:
    from tests.envbuilder import EnvBuilder
    from tests.loader import windows_layouts as wl

    base = wl.python_org_base(root / "Python311")
    venv = EnvBuilder(root / "venv", os="windows", layout="venv", python="3.11.9")
    (venv.prefix / "pyvenv.cfg").write_text(
        f"home = {base}\ninclude-system-site-packages = false\nversion = 3.11.9\n", encoding="utf-8"
    )
    wl.install_torch(venv, "2.15.0")
    for name, version in TORCH_DEPENDENCIES.items():
        venv.dist(name, version)
    windows = wl.fake_windows(root / "Windows", extra=wl.runtime_dlls("msvc-runtime-14.34").values())
    argv = ["-p", str(venv.prefix), "--system-root", str(windows)]
    command = f"$ conda-torchcheck -p {SHOWN_ROOT}/venv --system-root {SHOWN_ROOT}/Windows\n"
    return command + _run(argv, root)


def first_contact_example(root: Path) -> str:
    from tests.envbuilder import EnvBuilder

    home = root / "home"
    tool = EnvBuilder(root / "conda-torchcheck" / ".venv", layout="venv", python="3.12.3")
    tool.dist("conda-torchcheck", "0.1.0")
    base = EnvBuilder(home / "miniforge3", layout="conda", python="3.12.8")
    (base.prefix / "condabin").mkdir()
    base.conda_record("conda", "25.1.1", "py312h7900ff3_0")
    EnvBuilder(home / "miniforge3" / "envs" / "ml", layout="conda")
    uv = EnvBuilder(home / ".local/share/uv/python/cpython-3.12.8-linux-x86_64-gnu", layout="system", python="3.12.8")
    uv.write("lib/python3.12/EXTERNALLY-MANAGED", "[externally-managed]\n")
    os.chdir(root / "conda-torchcheck")
    command = "$ .venv/bin/conda-torchcheck\n"
    return command + _run([], root, prefix=tool.prefix)


EXAMPLES: dict[str, Callable[[Path], str]] = {"windows": windows_example, "first-contact": first_contact_example}


def render(name: str) -> str:
    """The example ``name`` as README.md shows it: a fenced block of the command and what it printed."""
    cwd = os.getcwd()
    try:
        with demo_root() as root:
            text = EXAMPLES[name](root)
    finally:
        os.chdir(cwd)
    return "```\n" + text.rstrip("\n") + "\n```\n"


def rewrite(text: str, blocks: dict[str, str]) -> str:
    return _BLOCK.sub(lambda m: m.group(1) + blocks.get(m.group(2), m.group(3)) + m.group(4), text)


def block_names(text: str) -> list[str]:
    return [m.group(2) for m in _BLOCK.finditer(text)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when README.md's blocks differ")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    text = README.read_text(encoding="utf-8")
    new = rewrite(text, {name: render(name) for name in block_names(text)})
    if args.check:
        return 0 if new == text else 1
    README.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
