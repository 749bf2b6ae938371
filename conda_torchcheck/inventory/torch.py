"""What torch is installed, from where, which variant: read from files, never by importing it."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from conda_torchcheck.inventory import fs
from conda_torchcheck.inventory.fs import find_child
from conda_torchcheck.inventory.model import CondaRecord, Distribution, Environment
from conda_torchcheck.records import Record

TORCH_FAMILY_CONDA = (
    "pytorch",
    "libtorch",
    "torchvision",
    "torchaudio",
    "pytorch-cuda",
    "cpuonly",
    "pytorch-mutex",
    "pytorch-cpu",
    "pytorch-gpu",
)

#: conda packages whose record, when it cannot be read, leaves open whether torch itself is installed
TORCH_ITSELF_CONDA = ("pytorch", "pytorch-cpu", "pytorch-gpu", "libtorch")


def unreadable_torch_record(env: Environment) -> Path | None:
    """The conda-meta file of torch itself (``pytorch-2.5.1-<build>.json``) that could not be read, if any: with
    it, "torch is not installed" cannot be said; what can be said is that its record is damaged."""
    for problem in env.problems:
        path = Path(problem.path)
        if path.parent.name != "conda-meta" or path.suffix != ".json":
            continue
        parts = path.name.removesuffix(".json").rsplit("-", 2)
        if len(parts) == 3 and parts[0] in TORCH_ITSELF_CONDA:
            return path
    return None


_VERSION_RE = re.compile(r"""^__version__\s*(?::\s*\w+\s*)?=\s*['"]([^'"]+)['"]""", re.M)
_CUDA_RE = re.compile(r"""^cuda\s*(?::\s*[\w\[\], ]+\s*)?=\s*(None|['"]([^'"]*)['"])""", re.M)
_HIP_RE = re.compile(r"""^hip\s*(?::\s*[\w\[\], ]+\s*)?=\s*(None|['"]([^'"]*)['"])""", re.M)
_XPU_RE = re.compile(r"""^xpu\s*(?::\s*[\w\[\], ]+\s*)?=\s*(None|['"]([^'"]*)['"])""", re.M)


class VersionPy(Record):
    __slots__ = ("version", "cuda", "hip", "xpu")

    def __init__(self, version: str | None, cuda: str | None, hip: str | None, xpu: str | None) -> None:
        self.version = version
        self.cuda = cuda
        self.hip = hip
        self.xpu = xpu


class TorchInfo(Record):
    """The torch that ``import torch`` would pick up in this env, and how it got there."""

    __slots__ = (
        "version",
        "source",
        "variant",
        "cuda_version",
        "package_dir",
        "dist",
        "conda_record",
        "libtorch_record",
        "version_py",
    )

    def __init__(
        self,
        version: str | None,
        source: str,
        variant: str,
        cuda_version: str | None,
        package_dir: Path | None,
        dist: Distribution | None,
        conda_record: CondaRecord | None,
        libtorch_record: CondaRecord | None,
        version_py: VersionPy | None,
    ) -> None:
        self.version = version
        #: "pip", "conda", "pip-over-conda", "none"
        self.source = source
        #: "cpu", "cuda", "rocm", "xpu", "unknown"
        self.variant = variant
        self.cuda_version = cuda_version
        #: <site>/torch
        self.package_dir = package_dir
        self.dist = dist
        #: pytorch
        self.conda_record = conda_record
        self.libtorch_record = libtorch_record
        self.version_py = version_py

    @property
    def installed(self) -> bool:
        return self.package_dir is not None or self.conda_record is not None or self.dist is not None

    @property
    def lib_dir(self) -> Path | None:
        return self.package_dir / "lib" if self.package_dir is not None else None

    @property
    def channel(self) -> str | None:
        if self.conda_record is not None and self.source != "pip":
            return self.conda_record.channel
        if self.source == "conda":
            return None  # installed by conda, but its record is gone or unreadable
        return "pypi" if self.dist is not None else None

    def to_dict(self) -> dict[str, object]:
        return {
            "version": self.version,
            "source": self.source,
            "variant": self.variant,
            "cuda": self.cuda_version,
            "location": str(self.package_dir) if self.package_dir else None,
            "channel": self.channel,
            "conda_build": self.conda_record.build if self.conda_record else None,
        }


def read_version_py(package_dir: Path) -> VersionPy | None:
    try:
        text = fs.read_text(package_dir / "version.py", fs.SMALL_LIMIT)
    except OSError:
        return None

    def grab(pattern: re.Pattern[str]) -> str | None:
        m = pattern.search(text)
        if not m or m.group(1) == "None":
            return None
        return m.group(2) or None

    m = _VERSION_RE.search(text)
    return VersionPy(m.group(1) if m else None, grab(_CUDA_RE), grab(_HIP_RE), grab(_XPU_RE))


# keyed by id() of the records tuple (hashing records would hash every file list); the tuple is kept alive
# in the value so an id is never reused while cached
_OWNED_CACHE: dict[int, tuple[tuple[CondaRecord, ...], dict[str, CondaRecord]]] = {}


def _owned_metadata_dirs(records: tuple[CondaRecord, ...]) -> dict[str, CondaRecord]:
    """Lower-cased prefix-relative metadata folder (``lib/python3.11/site-packages/torch-2.5.1.dist-info``) →
    the conda record whose files list names it."""
    cached = _OWNED_CACHE.get(id(records))
    if cached is not None and cached[0] is records:
        return cached[1]
    owned: dict[str, CondaRecord] = {}
    for rec in records:
        for f in rec.files:
            if ".dist-info/" not in f and ".egg-info" not in f:
                continue
            parts = PurePosixPath(f.replace("\\", "/")).parts
            for i, part in enumerate(parts):
                if part.endswith((".dist-info", ".egg-info")):
                    owned.setdefault("/".join(parts[: i + 1]).lower(), rec)
                    break
    if len(_OWNED_CACHE) > 16:
        _OWNED_CACHE.clear()
    _OWNED_CACHE[id(records)] = (records, owned)
    return owned


def metadata_dirs_of(env: Environment, record: CondaRecord) -> tuple[str, ...]:
    """The prefix-relative ``*.dist-info`` / ``*.egg-info`` paths a conda record installed (usually one)."""
    owned = _owned_metadata_dirs(env.conda_records)
    seen: list[str] = []
    for f in record.files:
        if ".dist-info/" not in f and ".egg-info" not in f:
            continue
        parts = PurePosixPath(f.replace("\\", "/")).parts
        for i, part in enumerate(parts):
            if part.endswith((".dist-info", ".egg-info")):
                rel = "/".join(parts[: i + 1])
                if rel not in seen and owned.get(rel.lower()) is record:
                    seen.append(rel)
                break
    return tuple(seen)


def conda_owner(env: Environment, dist: Distribution) -> CondaRecord | None:
    """The conda record that installed this dist-info folder, if any (the folder is in its files list)."""
    try:
        rel = dist.metadata_dir.relative_to(env.prefix)
    except ValueError:
        return None
    return _owned_metadata_dirs(env.conda_records).get(rel.as_posix().lower())


def variant_from_build(build: str) -> str | None:
    """``cuda`` / ``cpu`` / ``rocm`` from a conda build string of the torch family, None when it says nothing.

    pytorch channel ``py3.11_cuda12.4_cudnn9_0`` / ``py3.11_cpu_0``, torchvision ``py311_cu121``; conda-forge
    ``cuda126_mkl_py311_h…_300`` / ``cpu_mkl_py311_h…_100`` (older ``cuda118py310h…``); defaults
    ``gpu_cuda130_py311h…`` / ``cpu_py311h…``; pytorch-mutex ``cuda`` / ``cpu``.
    """
    return _variant_from_build(build)


def cuda_from_build(build: str) -> str | None:
    """``12.4`` from ``py3.11_cuda12.4_cudnn9_0``, ``cuda126_mkl…``, ``gpu_cuda130_…`` or ``py311_cu121``."""
    found = _cuda_from_build(build)
    if found is None:
        m = re.search(r"(?:^|_)cu(\d{2})(\d)(?:_|$)", build)
        found = f"{m.group(1)}.{m.group(2)}" if m else None
    return found


def _variant_from_build(build: str) -> str | None:
    b = build.lower()
    if "cuda" in b or b.startswith("gpu_") or "_cu1" in b:
        return "cuda"
    if b.startswith("cpu") or "_cpu" in b or "cpu_" in b:
        return "cpu"
    if "rocm" in b:
        return "rocm"
    return None


def _cuda_from_build(build: str) -> str | None:
    m = re.search(r"cuda(\d+)\.(\d+)", build) or re.search(r"cuda_?(\d{2})(\d)(?!\d)", build)
    if m:
        return f"{m.group(1)}.{m.group(2)}"
    m = re.search(r"cuda(\d{2})(\d)", build)
    return f"{m.group(1)}.{m.group(2)}" if m else None


def _cuda_from_local(local: str | None) -> str | None:
    if local and re.fullmatch(r"cu\d{3}", local):
        return f"{local[2:4]}.{local[4]}"
    return None


def find_torch(env: Environment) -> TorchInfo:
    package_dir = None
    for site in env.site_dirs:
        if not site.active:
            continue
        candidate = find_child(site.path, "torch", case_insensitive=env.is_windows)
        if candidate is not None and fs.is_dir(candidate) and fs.exists(candidate / "__init__.py"):
            package_dir = candidate
            break
    dist = None
    if package_dir is not None:
        for d in env.dists("torch"):
            if d.site == package_dir.parent:
                dist = d
                break
    if dist is None:
        dist = env.dist("torch")
    record = env.record("pytorch")
    libtorch = env.record("libtorch")
    version_py = read_version_py(package_dir) if package_dir is not None else None
    if record is not None and dist is not None:
        owner = conda_owner(env, dist)
        # conda's own folder with pip's INSTALLER: `pip install --force-reinstall` rewrote the files in place
        rewritten = (dist.installer or "conda").lower() != "conda"
        source = "conda" if owner is not None and not rewritten else "pip-over-conda"
    elif record is not None:
        source = "conda"
    elif dist is not None and (dist.installer or "").lower() == "conda":
        source = "conda"  # conda's record is missing or unreadable (a TC901 says which)
    elif dist is not None or package_dir is not None:
        source = "pip"
    else:
        source = "none"
    version = (
        (version_py.version if version_py else None)
        or (dist.version if dist else None)
        or (record.version if record else None)
    )
    variant = "unknown"
    cuda = None
    if version_py is not None:
        if version_py.cuda:
            variant, cuda = "cuda", version_py.cuda
        elif version_py.hip:
            variant = "rocm"
        elif version_py.xpu:
            variant = "xpu"
        else:
            variant = "cpu"
    else:
        local = dist.local_version if dist else None
        if local:
            variant = (
                "cpu"
                if local == "cpu"
                else ("cuda" if local.startswith("cu") else "rocm" if local.startswith("rocm") else "unknown")
            )
            cuda = _cuda_from_local(local)
        elif source == "conda" and record is not None:
            variant = _variant_from_build(record.build) or "unknown"
            cuda = _cuda_from_build(record.build) if variant == "cuda" else None
    if source == "conda" and record is not None and variant == "cuda" and cuda is None:
        cuda = _cuda_from_build(record.build)
    return TorchInfo(
        version=version,
        source=source,
        variant=variant,
        cuda_version=cuda,
        package_dir=package_dir,
        dist=dist,
        conda_record=record,
        libtorch_record=libtorch,
        version_py=version_py,
    )
