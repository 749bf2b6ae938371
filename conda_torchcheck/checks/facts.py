"""Facts about the torch family that several TC1xx/TC2xx checks share (computed once per run via ctx.memo)."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from conda_torchcheck.builders import builder_of
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.inventory import fs
from conda_torchcheck.inventory.fs import find_path
from conda_torchcheck.inventory.model import CondaRecord, Distribution, Environment
from conda_torchcheck.inventory.torch import conda_owner, cuda_from_build, metadata_dirs_of, variant_from_build
from conda_torchcheck.knowledge import conda_channels
from conda_torchcheck.records import Record

PIP_FAMILY = ("torch", "torchvision", "torchaudio", "torchtext")


def builder(channel: str | None) -> str:
    """Who built a record's binaries (conda_torchcheck.builders), ``unknown`` for a record without a channel."""
    return builder_of(channel) or "unknown"


def channel_label(rec: CondaRecord) -> str:
    return rec.channel if rec.channel != "unknown" else (rec.channel_url or "unknown")


class BuildVariant(Record):
    __slots__ = ("variant", "cuda")

    def __init__(self, variant: str | None, cuda: str | None) -> None:
        #: cuda, cpu, rocm, None (the build string does not say)
        self.variant = variant
        self.cuda = cuda


def record_variant(rec: CondaRecord) -> BuildVariant:
    """What a torch-family or selector record says about cpu vs cuda."""
    if rec.name == "cpuonly" or rec.name == "pytorch-cpu":
        return BuildVariant("cpu", None)
    if rec.name == "pytorch-cuda":
        return BuildVariant("cuda", ".".join(rec.version.split(".")[:2]))
    if rec.name == "pytorch-gpu":
        return BuildVariant("cuda", cuda_from_build(rec.build))
    variant = variant_from_build(rec.build)
    return BuildVariant(variant, cuda_from_build(rec.build) if variant == "cuda" else None)


def dist_variant(dist: Distribution) -> BuildVariant:
    """From a pip local version: ``+cpu`` → cpu, ``+cu121`` → cuda 12.1, ``+rocm6.2`` → rocm."""
    local = (dist.local_version or "").lower()
    if local == "cpu":
        return BuildVariant("cpu", None)
    if local.startswith("cu") and local[2:].isdigit() and len(local) >= 5:
        return BuildVariant("cuda", f"{local[2:-1]}.{local[-1]}")
    if local.startswith("rocm"):
        return BuildVariant("rocm", None)
    if local.startswith("xpu"):
        return BuildVariant("xpu", None)
    return BuildVariant(None, None)


def python_dependents(env: Environment) -> frozenset[str]:
    """Names of records that depend on ``python`` directly or through other records (conda's PrefixGraph
    descendants of python: the records its pip-interoperability loader inspects)."""
    depends = {rec.name: {d.split()[0].split("[")[0] for d in rec.depends if d.strip()} for rec in env.conda_records}
    found: set[str] = set()
    frontier = {"python"}
    while frontier:
        new = {name for name, deps in depends.items() if deps & frontier and name not in found}
        found |= new
        frontier = new
    return frozenset(found)


def conda_site_short_path(env: Environment) -> str | None:
    """conda's ``get_python_site_packages_short_path`` for the env's python record."""
    rec = env.record("python")
    if rec is None:
        return None
    if env.is_windows:
        return "Lib/site-packages"
    mm = ".".join(rec.version.split(".")[:2])
    return f"lib/python{mm}{'t' if env.python.free_threaded else ''}/site-packages"


class CondaAnchor(Record):
    """The metadata folder a conda record installed into site-packages, and what is there now."""

    __slots__ = ("record", "rel_path", "path", "present", "installer")

    def __init__(self, record: CondaRecord, rel_path: str, path: Path, present: bool, installer: str | None) -> None:
        self.record = record
        #: prefix-relative, as conda-meta writes it
        self.rel_path = rel_path
        self.path = path
        self.present = present
        #: INSTALLER of the folder now on disk (None when absent / unreadable)
        self.installer = installer


def conda_anchor(env: Environment, rec: CondaRecord) -> CondaAnchor | None:
    """The shortest metadata folder of ``rec`` (conda's anchor choice), with its current state on disk."""
    dirs = metadata_dirs_of(env, rec)
    if not dirs:
        return None
    rel = sorted(dirs, key=len)[0]
    parts = PurePosixPath(rel).parts
    found = find_path(env.prefix, *parts, case_insensitive=env.is_windows)
    present = found is not None
    path = found if found is not None else env.prefix.joinpath(*parts)
    installer = None
    if present and fs.is_dir(path):
        try:
            installer = fs.read_text(path / "INSTALLER", fs.SMALL_LIMIT).strip() or None
        except OSError:
            installer = None
    return CondaAnchor(rec, rel, path, present, installer)


class TorchInstalls(Record):
    """Every torch metadata folder reachable from sys.path, split by the manager that put it there."""

    __slots__ = ("dists", "conda_owned", "foreign", "record", "anchor")

    def __init__(
        self,
        dists: tuple[Distribution, ...],
        conda_owned: tuple[Distribution, ...],
        foreign: tuple[Distribution, ...],
        record: CondaRecord | None,
        anchor: CondaAnchor | None,
    ) -> None:
        #: all torch dist-info / egg-info, sys.path order
        self.dists = dists
        self.conda_owned = conda_owned
        #: not named in any conda record's files (pip, uv, a copy ...)
        self.foreign = foreign
        #: conda's pytorch
        self.record = record
        self.anchor = anchor


def torch_installs(ctx: CheckContext) -> TorchInstalls:
    def build() -> TorchInstalls:
        env = ctx.env
        dists = env.dists("torch")
        owned = tuple(d for d in dists if conda_owner(env, d) is not None)
        foreign = tuple(d for d in dists if d not in owned)
        record = env.record("pytorch")
        anchor = conda_anchor(env, record) if record is not None else None
        return TorchInstalls(dists, owned, foreign, record, anchor)

    return ctx.memo("torch_installs", build)


def manager_of(env: Environment, dist: Distribution) -> str:
    """``conda`` when a conda record owns the folder (or INSTALLER says conda), else ``pip``."""
    if conda_owner(env, dist) is not None or (dist.installer or "").lower() == "conda":
        return "conda"
    return "pip"


def conda_state_vars(env: Environment) -> dict[str, str]:
    """Variables set by ``conda env config vars`` (``conda-meta/state``), applied when the env is activated."""
    try:
        data = fs.parse_json(fs.read_text(env.prefix / "conda-meta" / "state", fs.SMALL_LIMIT, errors="strict"))
    except (OSError, ValueError):
        return {}
    found = data.get("env_vars") if isinstance(data, dict) else None
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def family_records(env: Environment) -> list[CondaRecord]:
    family = conda_channels.family()
    names = ("pytorch", *family["linked_to_libtorch"], *family["selectors"])
    return [rec for name in names if (rec := env.record(name)) is not None]
