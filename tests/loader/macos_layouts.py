"""macOS layouts for loader and check tests, examined from Linux: the real torch wheels (2.5.1 arm64, 2.2.2
x86_64) laid out as a conda env or a venv (hard links into the shared extraction), a real Mach-O executable from
a wheel standing in for python's header, other wheels' OpenMP runtimes, and a SystemVersion.plist root."""

from __future__ import annotations

import plistlib
from pathlib import Path

from conda_torchcheck.inventory.model import HostFacts
from tests.envbuilder import EnvBuilder
from tests.loader.linux_layouts import link_tree

TORCH_PATTERNS = (
    "torch/lib/*",
    "torch/_C*.so",
    "torch/*.py",  # every Python file the RECORD lists (a layout missing some is a broken one: TC211)
    "torchgen/*.py",
    "functorch/*.py",
    "torch/bin/torch_shm_manager",
    "torch-*.dist-info/*",
)
X86_PATTERNS = (
    "torch/lib/*",
    "functorch/.dylibs/*",
    "torch/_C*.so",
    "torch/*.py",
    "torchgen/*.py",
    "functorch/*.py",
    "torch-*.dist-info/*",
)
# what torch's METADATA requires, so that a healthy layout is healthy for the other checks too
TORCH_REQUIREMENTS = {
    "filelock": "3.16.1", "typing-extensions": "4.12.2", "networkx": "3.4.2", "jinja2": "3.1.4",
    "fsspec": "2024.10.0", "sympy": "1.13.1",
}  # fmt: skip


def torch_root(arch: str = "arm64") -> Path:
    from tests.realdata import extract

    if arch == "arm64":
        return extract("torch-2.5.1-macos-arm64", TORCH_PATTERNS)
    return extract("torch-2.2.2-macos-x86_64", X86_PATTERNS)


def real_python_header(arch: str = "arm64") -> bytes:
    """A real Mach-O executable from a wheel as python's header: the thin ``arch`` slice of ninja's universal2
    binary (it links only libc++ and libSystem, as a python does that has libpython built in)."""
    from conda_torchcheck.binaries.macho import read_macho
    from tests.realdata import extract

    nj = extract("ninja-1.11.1.1-macos-universal2", ("ninja/data/bin/ninja",)) / "ninja" / "data" / "bin" / "ninja"
    sl = read_macho(nj).slice_for(arch)
    return nj.read_bytes()[sl.offset : sl.offset + sl.size]


def mac_env(tmp: Path, *, layout: str = "conda", python_arch: str = "arm64", real_python: bool = True) -> EnvBuilder:
    builder = EnvBuilder(tmp, os="darwin", layout=layout, arch=python_arch)
    if real_python:
        exe = builder.prefix / "bin" / "python3.11"
        exe.unlink()
        exe.write_bytes(real_python_header(python_arch))
    return builder


def install_real_torch(builder: EnvBuilder, arch: str = "arm64") -> Path:
    """The real macOS torch wheel's files in site-packages as pip puts them (dist-info with RECORD)."""
    root = torch_root(arch)
    link_tree(root / "torch", builder.site_packages / "torch")
    # 2.2.2 x86_64: libiomp5.dylib is delocated into functorch/.dylibs
    for package in ("functorch", "torchgen"):
        if (root / package).is_dir():
            link_tree(root / package, builder.site_packages / package)
    for info in root.glob("torch-*.dist-info"):
        link_tree(info, builder.site_packages / info.name)
    for name, version in TORCH_REQUIREMENTS.items():
        builder.dist(name, version, files={f"{name.replace('-', '_')}/__init__.py": b""})
    return builder.site_packages / "torch"


def install_sklearn_openmp(builder: EnvBuilder) -> Path:
    from tests.realdata import extract

    root = extract("scikit-learn-1.5.2-macos-arm64", ("sklearn/.dylibs/*",))
    link_tree(root / "sklearn", builder.site_packages / "sklearn")
    builder.dist("scikit-learn", "1.5.2", files={"sklearn/__init__.py": b""})
    return builder.site_packages / "sklearn" / ".dylibs" / "libomp.dylib"


def system_root(tmp: Path, version: str = "14.5") -> Path:
    """A folder holding System/Library/CoreServices/SystemVersion.plist, as ``--system-root DIR`` takes."""
    plist = tmp / "System" / "Library" / "CoreServices" / "SystemVersion.plist"
    plist.parent.mkdir(parents=True, exist_ok=True)
    plist.write_bytes(plistlib.dumps({"ProductName": "macOS", "ProductVersion": version}))
    (tmp / "usr" / "local" / "lib").mkdir(parents=True, exist_ok=True)
    return tmp


def host(*, system_root: Path | None = None, **environ: str) -> HostFacts:
    return HostFacts(live=False, environ=dict(environ), system_root=system_root)
