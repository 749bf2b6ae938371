"""Knowledge tables (TOML data files beside this module, each with its sources noted inside)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conda_torchcheck.knowledge.version import base_version, cuda_tag_version, release_key
from conda_torchcheck.knowledge.version import minor_of as minor_of
from conda_torchcheck.knowledge.version import parse_version as parse_version
from conda_torchcheck.parsed_copy import read_parsed


@functools.cache
def load(name: str) -> dict[str, Any]:
    """The parsed table ``<name>.toml``."""
    return read_table(Path(__file__).resolve().parent / f"{name}.toml")


def read_table(path: Path) -> dict[str, Any]:
    """``path`` parsed as TOML, through its parsed copy (conda_torchcheck.parsed_copy): importing tomllib and
    parsing the tables costs more than the rest of a small ``check`` run's start."""
    return read_parsed(path, _parse_table)


def _parse_table(path: str) -> dict[str, Any]:
    from conda_torchcheck._toml import load_toml_text

    return load_toml_text(Path(path).read_text(encoding="utf-8"))


@dataclass(frozen=True)
class TorchRelease:
    """One torch minor release of torch_releases.toml: its companions, Pythons and CUDA builds."""

    minor: str
    torchvision: str
    torchaudio: str
    python: tuple[str, str]
    pip_cuda: tuple[str, ...]
    pytorch_cuda: tuple[str, ...]
    raw: dict[str, Any]
    source: str = ""
    #: pip_cuda lists every download.pytorch.org CUDA variant (False: only those its sources name, pip_cuda_partial)
    pip_cuda_known: bool = True

    #: with pip_cuda_known False: the oldest CUDA build the release before it had (releases drop CUDA versions,
    #: never add back older ones: tests/knowledge checks it over every complete row)
    pip_cuda_floor: str | None = None
    #: ROCm wheel tags (Linux only) [PREV]
    pip_rocm: tuple[str, ...] = ()
    #: Python versions outside [min, max] (2.7 for rows up to 1.4) [VIS]
    python_extra: tuple[str, ...] = ()
    #: CUDA versions the install matrix selects with cudatoolkit=X (<= 1.12)
    cudatoolkit: tuple[str, ...] = ()
    #: torch patch -> its exact companions, where they break the numbering (2.15.0 -> torchvision 0.29.2)
    torchvision_patch: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    torchaudio_patch: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def from_row(cls, minor: str, data: Mapping[str, Any], *, pip_cuda_floor: str | None = None) -> TorchRelease:
        """A row of torch_releases.toml (or one in its shape: envspec's older releases)."""
        return cls(
            minor=minor,
            torchvision=data["torchvision"],
            torchaudio=data.get("torchaudio") or "",
            python=tuple(data["python"]),  # type: ignore[arg-type]
            pip_cuda=tuple(data.get("pip_cuda", ())),
            pytorch_cuda=tuple(data.get("pytorch_cuda", ())),
            raw=dict(data),
            source=data.get("source", ""),
            pip_cuda_known=not data.get("pip_cuda_partial", False),
            pip_cuda_floor=pip_cuda_floor,
            pip_rocm=tuple(data.get("pip_rocm", ())),
            python_extra=tuple(data.get("python_extra", ())),
            cudatoolkit=tuple(data.get("cudatoolkit", ())),
            torchvision_patch={k: tuple(v) for k, v in data.get("torchvision_patch", {}).items()},
            torchaudio_patch={k: tuple(v) for k, v in data.get("torchaudio_patch", {}).items()},
        )

    def offers_pip_cuda(self, tag: str) -> bool | None:
        """Does download.pytorch.org/whl/<tag> have this release? None when the tables cannot tell."""
        if tag in self.pip_cuda:
            return True
        if self.pip_cuda_known:
            return False
        if self.pip_cuda_floor and _cuda_tag_key(tag) < _cuda_tag_key(self.pip_cuda_floor):
            return False
        return None

    def torchvision_for(self, torch_version: str) -> tuple[str, ...]:
        """Acceptable torchvision versions (exact patches where the table says so, else the minor)."""
        patch = self.torchvision_patch.get(base_version(torch_version))
        return tuple(patch) if patch else (self.torchvision,)

    def torchaudio_for(self, torch_version: str) -> tuple[str, ...]:
        patch = self.torchaudio_patch.get(base_version(torch_version))
        return tuple(patch) if patch else (self.torchaudio,)

    def supports_python(self, major_minor: tuple[int, int]) -> bool:
        # rows up to 1.4 also support 2.7, outside their [min, max] 3.x range ("python_extra")
        if any(release_key(extra) == tuple(major_minor) for extra in self.python_extra):
            return True
        return release_key(self.python[0]) <= tuple(major_minor) <= release_key(self.python[1])


def _cuda_tag_key(tag: str) -> tuple[int, ...]:
    return release_key(cuda_tag_version(tag))


def torch_release(version: str | None) -> TorchRelease | None:
    minor = minor_of(version)
    if minor is None:
        return None
    rows = load("torch_releases")["releases"]
    data = rows.get(minor)
    if data is None:
        return None
    floor = None
    if data.get("pip_cuda_partial"):
        before = [m for m in known_torch_minors() if release_key(m) < release_key(minor) and rows[m].get("pip_cuda")]
        if before:
            floor = min(rows[before[-1]]["pip_cuda"], key=_cuda_tag_key)
    return TorchRelease.from_row(minor, data, pip_cuda_floor=floor)


@dataclass(frozen=True)
class ReleaseChannels:
    """Where torch releases are published, beside the per-minor rows (torch_releases.toml [channels])."""

    #: the frozen pytorch conda channel's last release [ANN]
    pytorch_last: str
    #: the last with osx-64 conda builds on the pytorch channel [ANA]
    pytorch_osx64_last: str
    #: torchaudio releases from this one on work with every later torch [AUD]
    torchaudio_stable_abi_from: str
    pip_cuda_index: str
    pip_cpu_index: str
    source: str = "[ANN] [ANA] [AUD] [757]"


@functools.cache
def release_channels() -> ReleaseChannels:
    row = load("torch_releases")["channels"]
    return ReleaseChannels(
        pytorch_last=row["pytorch_last"],
        pytorch_osx64_last=row.get("pytorch_osx64_last", "2.2.2"),
        torchaudio_stable_abi_from=row["torchaudio_stable_abi_from"],
        pip_cuda_index=row["pip_cuda_index"],
        pip_cpu_index=row["pip_cpu_index"],
    )


def torch_releases() -> tuple[TorchRelease, ...]:
    """Every row of the release table, oldest first."""
    return tuple(r for r in (torch_release(m) for m in known_torch_minors()) if r is not None)


def beyond_tables(version: str | None) -> str | None:
    """The newest minor the release table knows, when ``version`` is newer than all of it (2.16.0 -> "2.15",
    and 2.16's nightlies too); None for a release the table has, an older one, or no version."""
    v = parse_version(base_version(version)) if version else None
    if v is None:
        return None
    newest = known_torch_minors()[-1]
    return newest if (v.major, v.minor) > release_key(newest) else None


def known_torch_minors() -> list[str]:
    return sorted(load("torch_releases")["releases"], key=release_key)
