"""Small envs with one of every file the inventory reads, and ways to spoil each of them."""

from __future__ import annotations

import os
from pathlib import Path

from tests.checks.tc_helpers import PY_DEP
from tests.envbuilder import EnvBuilder

# what replaces a file: a FIFO (open() blocks), links to endless devices, a sparse 4 GB file, a folder
SPOILERS = ("fifo", "dev-zero", "dev-urandom", "sparse-4gb", "folder")


def build(root: Path, layout: str) -> EnvBuilder:
    """A conda env with conda's pytorch, or a venv with pip's torch; numpy's dist-info with every optional file."""
    b = EnvBuilder(root, layout=layout)
    if layout == "conda":
        b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0000000_100", depends=PY_DEP)
    else:
        b.pip_torch("2.5.1")
    numpy = b.dist("numpy", "2.1.0", wheel_tag="cp311-cp311-linux_x86_64")
    (numpy / "direct_url.json").write_text('{"url": "file:///tmp/numpy.whl"}', encoding="utf-8")
    b.write(f"{b.site_rel}/extra.pth", f"{root}/lib\n")
    return b


def readers(b: EnvBuilder) -> dict[str, Path]:
    """Every file the inventory opens in ``b``, by a short name."""
    sp = b.site_packages
    numpy = sp / "numpy-2.1.0.dist-info"
    found = {
        "METADATA": sp / "torch-2.5.1.dist-info" / "METADATA",
        "RECORD": sp / "torch-2.5.1.dist-info" / "RECORD",
        "INSTALLER": numpy / "INSTALLER",
        "WHEEL": numpy / "WHEEL",
        "direct_url.json": numpy / "direct_url.json",
        ".pth": sp / "extra.pth",
        "torch/version.py": sp / "torch" / "version.py",
        "torch/__init__.py": sp / "torch" / "__init__.py",
        "python": b.prefix / "bin" / "python3",
    }
    if b.layout == "venv":
        found["pyvenv.cfg"] = b.prefix / "pyvenv.cfg"
    else:
        found["conda-meta record"] = next((b.prefix / "conda-meta").glob("pytorch-*.json"))
    return found


def spoil(path: Path, how: str) -> None:
    if path.is_symlink() or path.exists():
        path.unlink()
    if how == "fifo":
        os.mkfifo(path)
    elif how == "dev-zero":
        path.symlink_to("/dev/zero")
    elif how == "dev-urandom":
        path.symlink_to("/dev/urandom")
    elif how == "sparse-4gb":
        with open(path, "wb") as fh:
            fh.truncate(4 << 30)
    elif how == "folder":
        path.mkdir()
    else:  # pragma: no cover
        raise ValueError(how)
