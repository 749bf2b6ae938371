"""Build realistic fixture environments on disk: conda-meta records shaped as conda writes them,
dist-info folders with INSTALLER/RECORD, Windows and Linux layouts, conda and venv.

Binaries here are header-only stand-ins (enough for architecture sniffing); tests that need real DLLs or
shared objects take them from real wheels (tests/realdata.py) or tests/fixtures/.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
from collections.abc import Iterable, Mapping
from pathlib import Path

PE_MACHINE = {"x86_64": 0x8664, "x86": 0x014C, "arm64": 0xAA64}
ELF_MACHINE = {"x86_64": 0x3E, "aarch64": 0xB7}


def pe_stub(arch: str = "x86_64") -> bytes:
    """A PE header with the right machine field and nothing else (not loadable)."""
    dos = bytearray(64)
    dos[0:2] = b"MZ"
    struct.pack_into("<I", dos, 0x3C, 64)
    coff = struct.pack("<HHIIIHH", PE_MACHINE[arch], 0, 0, 0, 0, 0xF0, 0x22)
    magic = struct.pack("<H", 0x10B if arch == "x86" else 0x20B)
    return bytes(dos) + b"PE\0\0" + coff + magic + bytes(200)


def elf_stub(arch: str = "x86_64") -> bytes:
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
    return ident + struct.pack("<HHI", 3, ELF_MACHINE[arch], 1) + bytes(40)


def macho_stub(arch: str = "arm64") -> bytes:
    """A Mach-O executable as conda-forge's python: LC_RPATH @loader_path/../lib, libSystem (not loadable)."""
    from tests.binaries.machogen import image

    return image(arch, "execute", dylibs=["/usr/lib/libSystem.B.dylib"], rpaths=["@loader_path/../lib"])


def record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


class EnvBuilder:
    """``EnvBuilder(tmp_path / "env", os="windows", layout="conda")`` then add records and dists."""

    def __init__(
        self,
        prefix: Path,
        *,
        os: str = "linux",
        layout: str = "conda",
        python: str = "3.11.9",
        arch: str = "x86_64",
        python_channel: str = "conda-forge",
        pyvenv_extra: str = "",
    ) -> None:
        self.prefix = prefix
        self.os = os
        self.layout = layout
        self.python_version = python
        self.arch = arch
        prefix.mkdir(parents=True, exist_ok=True)
        mm = ".".join(python.split(".")[:2])
        self.subdir = {
            ("windows", "x86_64"): "win-64",
            ("windows", "x86"): "win-32",
            ("windows", "arm64"): "win-arm64",
            ("linux", "x86_64"): "linux-64",
            ("linux", "aarch64"): "linux-aarch64",
            ("darwin", "arm64"): "osx-arm64",
            ("darwin", "x86_64"): "osx-64",
        }[(os, arch)]
        if os == "windows":
            self.site_packages = prefix / "Lib" / "site-packages"
            exe = prefix / ("Scripts/python.exe" if layout == "venv" else "python.exe")
            exe.parent.mkdir(parents=True, exist_ok=True)
            exe.write_bytes(pe_stub(arch))
            if layout == "embedded":
                self._embeddable(mm.replace(".", ""), arch)
            elif layout != "venv":
                (prefix / f"python{mm.replace('.', '')}.dll").write_bytes(pe_stub(arch))
                if layout not in ("store", "system"):
                    (prefix / "Library" / "bin").mkdir(parents=True, exist_ok=True)
                (prefix / "DLLs").mkdir(exist_ok=True)
        else:
            self.site_packages = prefix / "lib" / f"python{mm}" / "site-packages"
            (prefix / "bin").mkdir(parents=True, exist_ok=True)
            stub = macho_stub(arch) if os == "darwin" else elf_stub(arch)
            (prefix / "bin" / f"python{mm}").write_bytes(stub)
            (prefix / "bin" / "python3").symlink_to(f"python{mm}")
        self.site_packages.mkdir(parents=True, exist_ok=True)
        if layout == "venv":
            home = "C:\\Python311" if os == "windows" else "/usr/bin"
            (prefix / "pyvenv.cfg").write_text(
                f"home = {home}\ninclude-system-site-packages = false\nversion = {python}\n{pyvenv_extra}",
                encoding="utf-8",
            )
        elif layout in ("embedded", "store", "system"):
            pass  # an interpreter installation of its own: no conda-meta, no pyvenv.cfg
        else:
            (prefix / "conda-meta").mkdir(exist_ok=True)
            (prefix / "conda-meta" / "history").write_text("==> 2026-01-01 00:00:00 <==\n", encoding="utf-8")
            self.conda_record("python", python, "h0000000_0_cpython", channel=python_channel)

    def _embeddable(self, tag: str, arch: str) -> None:
        """python.org's embeddable package as ComfyUI's portable build ships it (python_embeded): the files of
        python-3.X.Y-embed-amd64.zip (python.exe, pythonXY.dll, python3.dll, the stdlib as pythonXY.zip, the
        extension modules as top-level .pyd, no Lib and no DLLs folder) and its ``._pth`` after ComfyUI's release
        workflow (.github/workflows/windows_release_package.yml: ``../ComfyUI`` first, ``import site`` enabled,
        pip from get-pip.py into Lib\\site-packages)."""
        import zipfile

        for name in (f"python{tag}.dll", "python3.dll", "pythonw.exe", "vcruntime140.dll", "vcruntime140_1.dll"):
            (self.prefix / name).write_bytes(pe_stub(arch))
        for name in ("_ctypes.pyd", "_socket.pyd", "select.pyd", "libffi-8.dll"):
            (self.prefix / name).write_bytes(pe_stub(arch))
        with zipfile.ZipFile(self.prefix / f"python{tag}.zip", "w") as zf:
            zf.writestr("os.pyc", b"")
        self.path_file = self.prefix / f"python{tag}._pth"
        self.path_file.write_text(
            f"../ComfyUI\npython{tag}.zip\n.\n\n"
            "# Uncomment to run site.main() automatically\n#import site\nimport site\n",
            encoding="utf-8",
        )
        (self.prefix.parent / "ComfyUI").mkdir(exist_ok=True)

    # --- relative paths --------------------------------------------------------------------------------
    @property
    def site_rel(self) -> str:
        return self.site_packages.relative_to(self.prefix).as_posix()

    def write(self, rel: str, data: bytes | str = b"") -> Path:
        path = self.prefix / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        return path

    # --- conda -----------------------------------------------------------------------------------------
    def conda_record(
        self,
        name: str,
        version: str,
        build: str,
        *,
        channel: str = "conda-forge",
        build_number: int | None = None,
        depends: Iterable[str] = (),
        files: Mapping[str, bytes] | None = None,
        requested_spec: str | None = None,
        subdir: str | None = None,
        noarch: bool = False,
    ) -> Path:
        """Write ``conda-meta/<name>-<version>-<build>.json`` (and the files it lists) as conda does."""
        subdir = subdir or ("noarch" if noarch else self.subdir)
        if channel == "defaults":
            base = "https://repo.anaconda.com/pkgs/main"
        elif "://" in channel:
            base = channel
        else:
            base = f"https://conda.anaconda.org/{channel}"
        fn = f"{name}-{version}-{build}.conda"
        paths = []
        for rel, data in (files or {}).items():
            self.write(rel, data)
            paths.append(
                {
                    "_path": rel,
                    "path_type": "hardlink",
                    "sha256": hashlib.sha256(data).hexdigest(),
                    "size_in_bytes": len(data),
                }
            )
        if build_number is None:
            digits = build.rsplit("_", 1)[-1]
            build_number = int(digits) if digits.isdigit() else 0
        record = {
            "name": name,
            "version": version,
            "build": build,
            "build_number": build_number,
            "channel": f"{base}/{subdir}",
            "subdir": subdir,
            "fn": fn,
            "url": f"{base}/{subdir}/{fn}",
            "md5": "0" * 32,
            "sha256": "0" * 64,
            "depends": list(depends),
            "constrains": [],
            "license": "BSD-3-Clause",
            "timestamp": 1767225600000,
            "size": 1234,
            "files": [p["_path"] for p in paths],
            "paths_data": {"paths_version": 1, "paths": paths},
            "link": {"source": f"/pkgs/{name}-{version}-{build}", "type": 1},
            "requested_specs": [requested_spec] if requested_spec else [],
        }
        if requested_spec:
            record["requested_spec"] = requested_spec
        path = self.prefix / "conda-meta" / f"{name}-{version}-{build}.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(record, indent=2), encoding="utf-8")
        return path

    # --- pip -------------------------------------------------------------------------------------------
    def dist(
        self,
        name: str,
        version: str,
        *,
        installer: str | None = "pip",
        files: Mapping[str, bytes] | None = None,
        requires: Iterable[str] = (),
        site: Path | None = None,
        record: bool = True,
        wheel_tag: str | None = None,
    ) -> Path:
        """A dist-info folder in ``site`` (default: the env's site-packages) and the files its RECORD lists."""
        site = site or self.site_packages
        site.mkdir(parents=True, exist_ok=True)
        folder = site / f"{name.replace('-', '_')}-{version}.dist-info"
        folder.mkdir(parents=True, exist_ok=True)
        meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        meta += "".join(f"Requires-Dist: {r}\n" for r in requires)
        (folder / "METADATA").write_text(meta, encoding="utf-8")
        rows = []
        if installer is not None:
            (folder / "INSTALLER").write_text(installer + "\n", encoding="utf-8")
        if wheel_tag:
            (folder / "WHEEL").write_text(
                f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {wheel_tag}\n", encoding="utf-8"
            )
        for rel, data in (files or {}).items():
            target = site / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            rows.append(f"{rel},{record_hash(data)},{len(data)}")
        if record:
            rows.append(f"{folder.name}/METADATA,,")
            rows.append(f"{folder.name}/RECORD,,")
            (folder / "RECORD").write_text("\n".join(rows) + "\n", encoding="utf-8")
        return folder

    def torch_package(self, version: str, *, cuda: str | None = None, site: Path | None = None) -> Path:
        """A minimal importable-looking ``torch`` package with a version.py as torch writes it."""
        site = site or self.site_packages
        pkg = site / "torch"
        pkg.mkdir(parents=True, exist_ok=True)
        (pkg / "__init__.py").write_text("# stand-in\n", encoding="utf-8")
        cuda_line = f"cuda: Optional[str] = '{cuda}'" if cuda else "cuda: Optional[str] = None"
        (pkg / "version.py").write_text(
            "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
            f"__version__ = '{version}'\ndebug = False\n{cuda_line}\ngit_version = 'abc'\n"
            "hip: Optional[str] = None\nxpu: Optional[str] = None\n",
            encoding="utf-8",
        )
        return pkg

    def pip_torch(
        self,
        version: str,
        *,
        cuda: str | None = None,
        site: Path | None = None,
        installer: str = "pip",
        requires: Iterable[str] = (),
    ) -> Path:
        site = site or self.site_packages
        pkg = self.torch_package(version, cuda=cuda, site=site)
        files = {f"torch/{p.name}": p.read_bytes() for p in pkg.iterdir() if p.is_file()}
        return self.dist("torch", version, installer=installer, files=files, site=site, requires=requires)

    def conda_python_package(
        self,
        name: str,
        version: str,
        build: str,
        *,
        channel: str = "conda-forge",
        import_name: str | None = None,
        dist_name: str | None = None,
        depends: Iterable[str] = ("python",),
    ) -> Path:
        """A conda record for a Python package: ``<sp>/<import_name>/__init__.py`` plus a dist-info with
        INSTALLER ``conda`` (torchvision, torchaudio, numpy …), as conda-forge ships them."""
        import_name = import_name or name.replace("-", "_")
        dist_name = (dist_name or name).replace("-", "_")
        info = f"{self.site_rel}/{dist_name}-{version}.dist-info"
        files = {
            f"{self.site_rel}/{import_name}/__init__.py": f"__version__ = '{version}'\n".encode(),
            f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {dist_name}\nVersion: {version}\n".encode(),
            f"{info}/INSTALLER": b"conda\n",
            f"{info}/RECORD": b"",
        }
        return self.conda_record(name, version, build, channel=channel, depends=depends, files=files)

    def conda_pytorch(
        self,
        version: str,
        build: str,
        *,
        channel: str = "conda-forge",
        depends: Iterable[str] = (),
        cuda: str | None = None,
        requested_spec: str | None = None,
    ) -> Path:
        """A conda ``pytorch`` record owning torch/ and its dist-info (INSTALLER conda), as conda-forge ships it."""
        pkg = self.torch_package(version.split("+")[0], cuda=cuda)
        files = {f"{self.site_rel}/torch/{p.name}": p.read_bytes() for p in pkg.iterdir() if p.is_file()}
        info = f"{self.site_rel}/torch-{version}.dist-info"
        files[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n".encode()
        files[f"{info}/INSTALLER"] = b"conda\n"
        files[f"{info}/RECORD"] = b""
        return self.conda_record(
            "pytorch", version, build, channel=channel, depends=depends, files=files, requested_spec=requested_spec
        )
