"""Who built a conda package's binaries, from its channel: a question the env checks (checks/) and the
environment-file rules (envspec/) both ask, answered here once. Packages of the torch family from different
builders are not ABI compatible (compilers, C++ ABI flag, library names, CUDA packaging)."""

from __future__ import annotations

import functools

PYTORCH, CONDA_FORGE, ANACONDA, NVIDIA = "pytorch", "conda-forge", "anaconda", "nvidia"


@functools.cache
def _builder_by_channel() -> dict[str, str]:
    from conda_torchcheck.knowledge import conda_channels

    # conda_channels.builders() names Anaconda's defaults under every name a file or a record gives it (pkgs/main,
    # pkgs/r, pkgs/msys2)
    table = {
        channel.lower(): builder for builder, channels in conda_channels.builders().items() for channel in channels
    }
    # the 1.8.2 LTS builds were the pytorch channel's own (previous-versions page, section v1.8.2 LTS)
    table.setdefault("pytorch-lts", PYTORCH)
    return table


def builder_of(channel: str | None) -> str | None:
    """``pytorch`` (also nightly, test, lts), ``conda-forge``, ``anaconda`` (defaults, under any of its names),
    ``nvidia``, or the channel itself for anything else; None when there is no channel."""
    if not channel:
        return None
    return _builder_by_channel().get(channel.lower(), channel)
