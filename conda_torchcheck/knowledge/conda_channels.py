"""The conda channels around torch, typed (conda_channels.toml; its header explains the source keys): who builds
what on which channel, the torch family, the frozen pytorch channel, conda-forge's CUDA variants, and the names
that say CUDA was wanted. Facts stated elsewhere are read there, once: the pytorch channel's last release and
its pytorch-cuda versions from torch_releases.toml."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from conda_torchcheck.knowledge import load, release_channels, torch_releases
from conda_torchcheck.knowledge.version import release_key

SOURCE = "knowledge/conda_channels.toml"


@dataclass(frozen=True)
class PytorchChannel:
    """The pytorch conda channel, frozen since 2.5.1 [ANN]."""

    last_release: str
    pytorch_cuda: tuple[str, ...]
    mkl_ijit_bad_from: str
    mkl_ijit_platforms: tuple[str, ...]
    source: str = "[ANN] [PREV] [MKL]"


@dataclass(frozen=True)
class CondaForgeCuda:
    """The CUDA versions conda-forge builds pytorch for, by platform."""

    by_platform: dict[str, tuple[str, ...]]
    win64_since: str
    source: str = "[FS]"

    def on(self, platform: str) -> tuple[str, ...]:
        return self.by_platform.get(platform, ())


@functools.cache
def defaults_names() -> tuple[str, ...]:
    """Channel names that are Anaconda's builds: ``defaults``, ``main``, ``pkgs/main`` ... [CONDA]."""
    return tuple(load("conda_channels")["defaults"]["names"])


@functools.cache
def builders() -> dict[str, tuple[str, ...]]:
    """Builder -> the channel names it publishes on (``anaconda``: the defaults names)."""
    table = {name: tuple(channels) for name, channels in load("conda_channels")["builders"].items()}
    return {**table, "anaconda": defaults_names()}


@functools.cache
def family() -> dict[str, tuple[str, ...]]:
    """``linked_to_libtorch``, ``selectors``, ``pytorch_channel_only``: package names [F164][B823]."""
    return {k: tuple(v) for k, v in load("conda_channels")["family"].items()}


@functools.cache
def pytorch_channel() -> PytorchChannel:
    row = load("conda_channels")["pytorch_channel"]
    published: set[str] = {v for r in torch_releases() for v in r.pytorch_cuda}
    return PytorchChannel(
        last_release=release_channels().pytorch_last,
        pytorch_cuda=tuple(sorted(published, key=release_key)),
        mkl_ijit_bad_from=row["mkl_ijit_bad_from"],
        mkl_ijit_platforms=tuple(row["mkl_ijit_platforms"]),
    )


@functools.cache
def conda_forge_cuda() -> CondaForgeCuda:
    row = dict(load("conda_channels")["conda_forge_cuda"])
    since = row.pop("win64_since")
    return CondaForgeCuda({k: tuple(v) for k, v in row.items()}, since)


@functools.cache
def cuda_signals() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(conda package names, pip name prefixes) whose presence says the env was meant to use CUDA."""
    row = load("conda_channels")["cuda_signals"]
    return tuple(row["conda"]), tuple(row["pip_prefixes"])
