"""A local file channel with small fake packages (python, pytorch builds, pytorch-cuda, cpuonly, ...).

Packages are real ``.tar.bz2`` conda packages (info/index.json, info/paths.json, payload) listed in a
``repodata.json``, so conda solves, downloads (from ``file://``), extracts and links them like any other. With
``channel_alias`` pointing at the root, ``-c pytorch`` and ``-c conda-forge`` resolve to the local channels and
conda names them ``pytorch`` and ``conda-forge``.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

SITE = "lib/python3.11/site-packages"


@dataclass(frozen=True)
class FakePackage:
    channel: str
    name: str
    version: str
    build: str
    depends: tuple[str, ...] = ()
    files: dict[str, bytes] = field(default_factory=dict)
    subdir: str = "linux-64"

    @property
    def fn(self) -> str:
        return f"{self.name}-{self.version}-{self.build}.tar.bz2"


def torch_files(version: str, cuda: str | None = None) -> dict[str, bytes]:
    cuda_line = f"cuda = '{cuda}'" if cuda else "cuda = None"
    return {
        f"{SITE}/torch/__init__.py": b"# fake torch for conda-torchcheck tests\n",
        f"{SITE}/torch/version.py": f"__version__ = '{version}'\n{cuda_line}\nhip = None\n".encode(),
        f"{SITE}/torch-{version}.dist-info/METADATA": (
            f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n".encode()
        ),
        f"{SITE}/torch-{version}.dist-info/INSTALLER": b"conda\n",
    }


PACKAGES: tuple[FakePackage, ...] = (
    FakePackage("conda-forge", "python", "3.11.9", "h0000000_0_cpython", files={f"{SITE}/README.txt": b"site\n"}),
    FakePackage(
        "conda-forge",
        "pytorch",
        "2.5.1",
        "cpu_generic_py311h0000000_0",
        ("python >=3.11,<3.12",),
        torch_files("2.5.1"),
    ),
    # conda-forge's CUDA build (the variant a TC102 correction asks for with conda-forge::pytorch=*=*cuda*)
    FakePackage(
        "conda-forge",
        "pytorch",
        "2.5.1",
        "cuda126_generic_py311h0000000_200",
        ("python >=3.11,<3.12",),
        torch_files("2.5.1", cuda="12.6"),
    ),
    FakePackage(
        "conda-forge",
        "torchvision",
        "0.15.2",
        "cpu_py311h0000000_0",
        ("python >=3.11,<3.12",),
        {f"{SITE}/torchvision/__init__.py": b"# fake\n"},
    ),
    FakePackage(
        "conda-forge",
        "torchvision",
        "0.20.1",
        "cpu_py311h0000000_0",
        ("python >=3.11,<3.12",),
        {f"{SITE}/torchvision/__init__.py": b"# fake\n"},
    ),
    FakePackage("conda-forge", "zlib", "1.3.1", "h0000000_2", files={"lib/libz.so.1": b""}),
    FakePackage("conda-forge", "mkl", "2024.1.0", "h0000000_692", files={"lib/libmkl_rt.so.2": b""}),
    FakePackage(
        "pytorch",
        "pytorch",
        "2.5.1",
        "py3.11_cuda12.4_cudnn9_0",
        ("python >=3.11,<3.12",),
        torch_files("2.5.1", cuda="12.4"),
    ),
    FakePackage("pytorch", "pytorch", "2.2.2", "py3.11_cpu_0", ("python >=3.11,<3.12",), torch_files("2.2.2")),
    FakePackage("pytorch", "pytorch-cuda", "12.4", "hc786d27_7"),
    FakePackage("pytorch", "cpuonly", "2.0", "0"),
)


def _package_bytes(pkg: FakePackage) -> bytes:
    index = {
        "name": pkg.name,
        "version": pkg.version,
        "build": pkg.build,
        "build_number": 0,
        "depends": list(pkg.depends),
        "subdir": pkg.subdir,
        "license": "BSD-3-Clause",
        "timestamp": 1767225600000,
    }
    paths = [
        {"_path": rel, "path_type": "hardlink", "sha256": hashlib.sha256(data).hexdigest(), "size_in_bytes": len(data)}
        for rel, data in sorted(pkg.files.items())
    ]
    members = {
        "info/index.json": json.dumps(index).encode(),
        "info/paths.json": json.dumps({"paths": paths, "paths_version": 1}).encode(),
        "info/files": "".join(f"{rel}\n" for rel in sorted(pkg.files)).encode(),
        **pkg.files,
    }
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:bz2") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 1767225600
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def build_channels(root: Path, packages: tuple[FakePackage, ...] = PACKAGES) -> Path:
    """Write ``root/<channel>/<subdir>/`` with the packages and their repodata.json; returns ``root``."""
    repodata: dict[tuple[str, str], dict] = {}
    for pkg in packages:
        folder = root / pkg.channel / pkg.subdir
        folder.mkdir(parents=True, exist_ok=True)
        data = _package_bytes(pkg)
        (folder / pkg.fn).write_bytes(data)
        entry = repodata.setdefault((pkg.channel, pkg.subdir), {})
        entry[pkg.fn] = {
            "name": pkg.name,
            "version": pkg.version,
            "build": pkg.build,
            "build_number": 0,
            "depends": list(pkg.depends),
            "license": "BSD-3-Clause",
            "md5": hashlib.md5(data).hexdigest(),
            "sha256": hashlib.sha256(data).hexdigest(),
            "size": len(data),
            "subdir": pkg.subdir,
            "timestamp": 1767225600000,
        }
    channels = {c for c, _ in repodata}
    for channel in channels:
        for subdir in ("linux-64", "noarch"):
            folder = root / channel / subdir
            folder.mkdir(parents=True, exist_ok=True)
            doc = {
                "info": {"subdir": subdir},
                "packages": repodata.get((channel, subdir), {}),
                "packages.conda": {},
                "repodata_version": 1,
            }
            (folder / "repodata.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return root
