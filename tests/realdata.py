"""Real wheels from PyPI (or this machine's wheel folder), downloaded once into a cache outside the repo,
checked against pinned sha256 digests, with only the needed members extracted. From wheels too large to download
(nvidia-cudnn-cu12 is 680 MB) single members are read with HTTP range requests: the central directory, then only
that member's bytes (:func:`member`), each checked against its own pinned digest.

Cache (about 0.8 GB downloaded, 2.6 GB on disk with the extracted members): ``$TORCHCHECK_TESTDATA``, else
``conda-torchcheck-testdata`` under ``$XDG_CACHE_HOME``, else under ``$HOME/.cache`` (see :func:`cache_folder`).
Set ``TORCHCHECK_SKIP_REALDATA=1`` to skip (not fail) tests whose wheel cannot be fetched.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest


def _real_home() -> str:
    """The user's home from the password database: tests redirect HOME, the cache must not follow."""
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError):  # Windows, or a uid without an entry
        return os.path.expanduser("~")


_REAL_HOME = _real_home()
_CACHE_NAME = "conda-torchcheck-testdata"


def cache_folder(environ: Mapping[str, str] = os.environ, real_home: str = _REAL_HOME) -> Path:
    """Where the test data lives: ``$TORCHCHECK_TESTDATA``; else under ``$XDG_CACHE_HOME``; else under
    ``$HOME/.cache``. One fallback keeps a cache already downloaded from being fetched again: with
    XDG_CACHE_HOME unset and no cache under ``$HOME/.cache`` yet (CI runs with HOME set to a fresh folder), the
    one under the password database's home is used when it is there. Read once, at import: tests that move
    HOME later do not move the cache."""
    if environ.get("TORCHCHECK_TESTDATA"):
        return Path(environ["TORCHCHECK_TESTDATA"])
    if environ.get("XDG_CACHE_HOME"):
        return Path(environ["XDG_CACHE_HOME"]) / _CACHE_NAME
    home = environ.get("HOME") or real_home
    chosen = Path(home) / ".cache" / _CACHE_NAME
    passwd = Path(real_home) / ".cache" / _CACHE_NAME
    if not chosen.is_dir() and passwd.is_dir():
        return passwd
    return chosen


CACHE = cache_folder()
LOCAL_WHEEL_DIRS = (Path("/opt/wheels"),)


@dataclass(frozen=True)
class Wheel:
    filename: str
    sha256: str
    spec: str  # what pip downloads: "torch==2.3.0"
    platform: str | None = None  # pip --platform
    python: str | None = "3.11"


# Pins from the files themselves (see ../shared/reference/real-test-data.md for what each is good for).
WHEELS: dict[str, Wheel] = {
    "torch-2.3.0-win": Wheel(
        "torch-2.3.0-cp311-cp311-win_amd64.whl",
        "729804e97b7cf19ae9ab4181f91f5e612af07956f35c8b2c8e9d9f3596a8e877",
        "torch==2.3.0",
        "win_amd64",
    ),
    "torch-2.4.0-win": Wheel(
        "torch-2.4.0-cp311-cp311-win_amd64.whl",
        "97730014da4c57ffacb3c09298c6ce05400606e890bd7a05008d13dd086e46b1",
        "torch==2.4.0",
        "win_amd64",
    ),
    "torch-2.13.0-win": Wheel(
        "torch-2.13.0-cp311-cp311-win_amd64.whl",
        "a0d8b11f16a48d60e2015d8213aa0390744cbebb98e58b62b3514dddc656e330",
        "torch==2.13.0",
        "win_amd64",
    ),
    "torch-2.15.0-win": Wheel(
        "torch-2.15.0-cp311-cp311-win_amd64.whl",
        "d2c5938f593a47cf6d151a16d130a3cc3f0c105df1b905a571efc00b01e38c1f",
        "torch==2.15.0",
        "win_amd64",
    ),
    "msvc-runtime-14.34": Wheel(
        "msvc_runtime-14.34.31931-cp311-cp311-win_amd64.whl",
        "21a7d75e98e8197e708b1ba95bce35cdc351f304e7f1326ae9f427d43fd9a728",
        "msvc-runtime==14.34.31931",
        "win_amd64",
    ),
    "msvc-runtime-14.42": Wheel(
        "msvc_runtime-14.42.34433-cp311-cp311-win_amd64.whl",
        "60ab9e5ca8ef3e230ead1a3db66340628aafc25f0c10d0195ced8f5a2e24883f",
        "msvc-runtime==14.42.34433",
        "win_amd64",
    ),
    "msvc-runtime-14.44": Wheel(
        "msvc_runtime-14.44.35112-cp311-cp311-win_amd64.whl",
        "aba7fbe71897d25ed53fbb7f391e9f50289378a8a9ae218ba18530c663448391",
        "msvc-runtime==14.44.35112",
        "win_amd64",
    ),
    "msvc-runtime-14.51-arm64": Wheel(
        "msvc_runtime-14.51.36231-cp313-cp313-win_arm64.whl",
        "52f9fd6e089eac9d72607d3ac4ffebcd5f0d6f940fca83db8a9c12ca11b1c26c",
        "msvc-runtime==14.51.36231",
        "win_arm64",
        "3.13",
    ),
    "intel-openmp-2021.4-win64": Wheel(
        "intel_openmp-2021.4.0-py2.py3-none-win_amd64.whl",
        "eef4c8bcc8acefd7f5cd3b9384dbf73d59e2c99fc56545712ded913f43c4a94f",
        "intel-openmp==2021.4.0",
        "win_amd64",
    ),
    "intel-openmp-2021.4-win32": Wheel(
        "intel_openmp-2021.4.0-py2.py3-none-win32.whl",
        "6e863d8fd3d7e8ef389d52cf97a50fe2afe1a19247e8c0d168ce021546f96fc9",
        "intel-openmp==2021.4.0",
        "win32",
    ),
    # macOS (issue 15): arm64 torch for current releases, the last x86_64 one, and other wheels' dylibs
    "torch-2.5.1-macos-arm64": Wheel(
        "torch-2.5.1-cp311-none-macosx_11_0_arm64.whl",
        "31f8c39660962f9ae4eeec995e3049b5492eb7360dd4f07377658ef4d728fa4c",
        "torch==2.5.1",
        "macosx_11_0_arm64",
    ),
    "torch-2.4.1-macos-arm64": Wheel(
        "torch-2.4.1-cp311-none-macosx_11_0_arm64.whl",
        "ddddbd8b066e743934a4200b3d54267a46db02106876d21cf31f7da7a96f98ea",
        "torch==2.4.1",
        "macosx_11_0_arm64",
    ),
    "torch-2.2.2-macos-x86_64": Wheel(
        "torch-2.2.2-cp311-none-macosx_10_9_x86_64.whl",
        "95b9b44f3bcebd8b6cd8d37ec802048c872d9c567ba52c894bba90863a439059",
        "torch==2.2.2",
        "macosx_10_9_x86_64",
    ),
    "scikit-learn-1.5.2-macos-arm64": Wheel(
        "scikit_learn-1.5.2-cp311-cp311-macosx_12_0_arm64.whl",
        "1ff45e26928d3b4eb767a8f14a9a6efbf1cbff7c05d1fb0f95f211a89fd4f5de",
        "scikit-learn==1.5.2",
        "macosx_12_0_arm64",
    ),
    "lightgbm-4.5.0-macos-arm64": Wheel(
        "lightgbm-4.5.0-py3-none-macosx_12_0_arm64.whl",
        "1301aa853e1fe4bf318539aa132f373862b04aa537af502508711ce03dffff09",
        "lightgbm==4.5.0",
        "macosx_14_0_arm64",
    ),
    "ninja-1.11.1.1-macos-universal2": Wheel(
        "ninja-1.11.1.1-py2.py3-none-macosx_10_9_universal2.macosx_10_9_x86_64.macosx_11_0_arm64.macosx_11_0_universal2.whl",
        "376889c76d87b95b5719fdd61dd7db193aa7fd4432e5d52d2e44e4c497bdbbee",
        "ninja==1.11.1.1",
        "macosx_10_9_universal2",
    ),
    # issue 14: another package's copies of DLLs in torch's closure. PyQt5-Qt5 5.15.2 ships msvcp140.dll
    # 14.26.28720.3 (and vcruntime140*.dll) in PyQt5/Qt5/bin (pytorch/pytorch#166628)
    "pyqt5-qt5-5.15.2-win": Wheel(
        "PyQt5_Qt5-5.15.2-py3-none-win_amd64.whl",
        "750b78e4dba6bdf1607febedc08738e318ea09e9b10aea9ff0d73073f11f6962",
        "PyQt5-Qt5==5.15.2",
        "win_amd64",
    ),
    # nvidia/cuda_runtime/bin/cudart64_12.dll, FileVersion 6.14.11.12040 (CUDA 12.4), 0.9 MB
    "nvidia-cuda-runtime-cu12-12.4-win": Wheel(
        "nvidia_cuda_runtime_cu12-12.4.127-py3-none-win_amd64.whl",
        "09c2e35f48359752dfa822c09918211844a3d93c100a715d79b59591130c5e1e",
        "nvidia-cuda-runtime-cu12==12.4.127",
        "win_amd64",
    ),
    "torch-2.13.0-linux-cpu": Wheel(
        "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
        "6746dbcbeb526eb61330b76b41ff1b4eb848951103a892eeb080dfa2b264667b",
        "torch==2.13.0+cpu",
        "manylinux_2_28_x86_64",
    ),
}


@dataclass(frozen=True)
class Member:
    """One file of a large wheel on PyPI, read without downloading the wheel."""

    url: str
    wheel_sha256: str  # PyPI's digest of the whole wheel (for reference: the wheel itself is never downloaded)
    path: str  # the member's path in the wheel
    sha256: str  # the member's own digest, checked after reading


_CUDNN_91 = (
    "https://files.pythonhosted.org/packages/3f/d0/f90ee6956a628f9f04bf467932c0a25e5a7e706a684b896593c06c82f460/"
    "nvidia_cudnn_cu12-9.1.0.70-py3-none-win_amd64.whl"
)
_CUDNN_91_SHA = "6278562929433d68365a07a4a1546c237ba2849852c0d4b2262a486e805b977a"

# issue 14: nvidia-cudnn-cu12 9.1.0.70 win_amd64 (680 MB). cudnn64_9.dll: FileVersion 9.1.0.70, imports only
# KERNEL32.dll (its sub-libraries load on first use); cudnn_graph64_9.dll has no version resource.
MEMBERS: dict[str, Member] = {
    "cudnn-9.1.0.70-win/cudnn64_9.dll": Member(
        _CUDNN_91,
        _CUDNN_91_SHA,
        "nvidia/cudnn/bin/cudnn64_9.dll",
        "c07cc47f2fa4a566593c7af4aa7e57edf09a985a0fddd14cb8d6f456e252af05",
    ),
    "cudnn-9.1.0.70-win/cudnn_graph64_9.dll": Member(
        _CUDNN_91,
        _CUDNN_91_SHA,
        "nvidia/cudnn/bin/cudnn_graph64_9.dll",
        "df730314816b59890db41428745c860b2be0112ed296892bbcc426296822aa54",
    ),
}


def _ranged(url: str, spec: str) -> tuple[bytes, str | None]:
    import urllib.request

    request = urllib.request.Request(url, headers={"Range": f"bytes={spec}"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.read(), response.headers.get("Content-Range")


def _read_member(spec: Member) -> bytes:
    """The central directory from the wheel's tail, then the member's local header and compressed bytes."""
    import struct
    import zlib

    tail, content_range = _ranged(spec.url, "-262144")
    total = int(str(content_range).rsplit("/", 1)[1])
    base = total - len(tail)
    end = tail.rfind(b"PK\x05\x06")
    if end < 0:
        raise OSError("no end of central directory in the last 256 KiB")
    size, offset = struct.unpack_from("<II", tail, end + 12)
    if offset < base:
        tail, _ = _ranged(spec.url, f"{offset}-{offset + size - 1}")
        directory = tail
    else:
        directory = tail[offset - base : offset - base + size]
    pos = 0
    while pos + 46 <= len(directory) and struct.unpack_from("<I", directory, pos)[0] == 0x02014B50:
        (method,) = struct.unpack_from("<H", directory, pos + 10)
        compressed, plain = struct.unpack_from("<II", directory, pos + 20)
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", directory, pos + 28)
        (local,) = struct.unpack_from("<I", directory, pos + 42)
        name = directory[pos + 46 : pos + 46 + name_len].decode("utf-8")
        pos += 46 + name_len + extra_len + comment_len
        if name != spec.path:
            continue
        header, _ = _ranged(spec.url, f"{local}-{local + 29}")
        skip = 30 + sum(struct.unpack_from("<HH", header, 26))
        data, _ = _ranged(spec.url, f"{local + skip}-{local + skip + compressed - 1}")
        raw = zlib.decompress(data, -15) if method == 8 else data
        if len(raw) != plain:
            raise OSError(f"{name}: {len(raw)} bytes, the central directory says {plain}")
        return raw
    raise OSError(f"{spec.path} is not in the wheel")


def member(key: str) -> Path:
    """Path of the cached, verified member ``key`` of a large wheel (read with range requests on first use)."""
    spec = MEMBERS[key]
    target = CACHE / "members" / key
    if target.is_file() and _sha256(target) == spec.sha256:
        return target
    try:
        raw = _read_member(spec)
    except OSError as exc:
        _unavailable(f"cannot read {spec.path} from {spec.url.rsplit('/', 1)[1]}: {exc}")
    digest = hashlib.sha256(raw).hexdigest()
    if digest != spec.sha256:
        pytest.fail(f"{key}: sha256 {digest} does not match the pinned {spec.sha256}")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".part")
    tmp.write_bytes(raw)
    tmp.rename(target)
    return target


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _unavailable(reason: str):
    if os.environ.get("TORCHCHECK_SKIP_REALDATA"):
        pytest.skip(reason)
    pytest.fail(reason + " (set TORCHCHECK_SKIP_REALDATA=1 to skip instead)")


def wheel(key: str) -> Path:
    """Path of the cached, verified wheel ``key`` (downloading it on first use)."""
    spec = WHEELS[key]
    CACHE.mkdir(parents=True, exist_ok=True)
    target = CACHE / spec.filename
    if target.is_file() and _sha256(target) == spec.sha256:
        return target
    for folder in LOCAL_WHEEL_DIRS:
        local = folder / spec.filename
        if local.is_file() and _sha256(local) == spec.sha256:
            return local
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "-d",
            tmp,
            "--disable-pip-version-check",
            "-q",
            spec.spec,
        ]
        if spec.platform:
            cmd += ["--platform", spec.platform]
        if spec.python:
            cmd += ["--python-version", spec.python]
        env = dict(os.environ, PIP_CONSTRAINT="/dev/null", HOME=_REAL_HOME)
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
        got = Path(tmp) / spec.filename
        if proc.returncode != 0 or not got.is_file():
            _unavailable(f"cannot download {spec.filename}: {proc.stderr.strip()[-500:]}")
        digest = _sha256(got)
        if digest != spec.sha256:
            pytest.fail(f"{spec.filename}: sha256 {digest} does not match the pinned {spec.sha256}")
        shutil.move(str(got), target)
    return target


def extract(key: str, patterns: tuple[str, ...]) -> Path:
    """Extract the members of wheel ``key`` matching any glob in ``patterns``; returns the extraction root.

    Extraction happens once per (wheel, patterns); the result is shared read-only by the tests.
    """
    digest = hashlib.sha256("\n".join(sorted(patterns)).encode()).hexdigest()[:12]
    root = CACHE / "extracted" / f"{key}-{digest}"
    marker = root / ".complete"
    if marker.exists():
        return root
    whl = wheel(key)
    tmp = Path(tempfile.mkdtemp(dir=CACHE, prefix="extract-"))
    # other extractions of the same (verified) wheel: a member they hold is linked, not written again (the
    # extracted trees are shared read-only; tests copy before they change a file)
    siblings = [p for p in sorted((CACHE / "extracted").glob(f"{key}-*")) if (p / ".complete").exists()]
    try:
        with zipfile.ZipFile(whl) as zf:
            for info in zf.infolist():
                if any(fnmatch.fnmatch(info.filename, p) for p in patterns):
                    if not _link_from(siblings, info, tmp):
                        zf.extract(info, tmp)
        (tmp / ".complete").write_text("ok")
        root.parent.mkdir(parents=True, exist_ok=True)
        if root.exists():
            shutil.rmtree(root)
        tmp.rename(root)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return root


def _link_from(siblings: list[Path], info: zipfile.ZipInfo, dest: Path) -> bool:
    """Hard-link ``info``'s member from an earlier extraction of the same wheel into ``dest``, if one has it."""
    if info.is_dir():
        return False
    for sibling in siblings:
        source = sibling / info.filename
        try:
            if source.is_file() and source.stat().st_size == info.file_size:
                target = dest / info.filename
                target.parent.mkdir(parents=True, exist_ok=True)
                os.link(source, target)
                return True
        except OSError:
            continue
    return False
