"""TC604: a package without the channel that publishes it."""

from __future__ import annotations

import re
from collections.abc import Iterator

from conda_torchcheck.envspec.intent import cuda_libraries_from_base, facts
from conda_torchcheck.envspec.matchspec import version_key
from conda_torchcheck.envspec.rules._common import Rule, RuleContext, at, channels_ev, ev
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg


def _has_channel(ctx: RuleContext, channel: str) -> bool:
    if channel in ctx.file.channel_names:
        return True
    return any(d.spec is not None and d.spec.channel_name == channel for d in ctx.file.deps)


def channel_for_package(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    # pytorch-nightly / pytorch-test carry their own pytorch-cuda and cpuonly
    selector_channels = ("pytorch", "pytorch-nightly", "pytorch-test", "pytorch-lts")
    unprefixed = [d for d in i.selectors if d.spec is None or d.spec.channel_name not in selector_channels]
    # a channel-prefixed spec (pytorch::pytorch) adds its channel to the solve (conda/core/solve.py _prepare:
    # additional_channels from specs_to_add), so the selectors are found there too (blind-s s020)
    listed = any(_has_channel(ctx, c) for c in selector_channels)
    if unprefixed and not listed:
        yield finding(
            "TC604",
            Severity.ERROR,
            variant="pytorch",
            evidence=ev(ctx, entries=[at(d) for d in unprefixed], channels=channels_ev(ctx)),
            # the rewrite moves the selectors to the pytorch channel or writes them the conda-forge way; a torch
            # from Anaconda's defaults or another channel keeps its source, so there it is the user's edit
            fixes=[
                Fix("file", msg("TC604.pytorch.fix"))
                if i.era in ("defaults", "other") or i.variant == "conflict"
                else ctx.rewrite_fix("TC604.pytorch.fix")
            ],
            package=unprefixed[0].name,
        )
    pc = i.deps.get("pytorch-cuda")
    missing_pytorch = bool(unprefixed) and not listed
    # a full export that pins pytorch-cuda's CUDA libraries to a listed base channel's builds does not take
    # them from nvidia (CUDA 12+ only: the base channels have no CUDA 11 split packages)
    if (
        pc is not None
        and not missing_pytorch
        and not _has_channel(ctx, "nvidia")
        and not cuda_libraries_from_base(ctx.file)
    ):
        yield finding(
            "TC604",
            Severity.ERROR,
            variant="nvidia",
            evidence=ev(ctx, entry=at(pc), channels=channels_ev(ctx)),
            fixes=[ctx.rewrite_fix("TC604.nvidia.fix")],
        )
        return
    torch = i.deps.get("pytorch")
    cuda = _implied_pytorch_cuda(torch.spec.build if torch is not None and torch.spec is not None else None)
    if (
        torch is not None
        and pc is None
        and cuda is not None
        and i.torch_channel == "pytorch"
        and _at_least(i.torch_version, facts()["pytorch_channel"]["pytorch_cuda_from"])
        and not _has_channel(ctx, "nvidia")
        and not cuda_libraries_from_base(ctx.file)
    ):
        # the pinned CUDA build itself depends on pytorch-cuda (from 1.13), and that on nvidia's CUDA packages;
        # the channel list is the user's edit (the rewrite adds nvidia only for a pytorch-cuda entry)
        yield finding(
            "TC604",
            Severity.ERROR,
            variant="nvidia_build",
            evidence=ev(ctx, entry=at(torch), channels=channels_ev(ctx)),
            fixes=[Fix("file", msg("TC604.nvidia.fix"))],
            entry=torch.text,
            cuda=cuda,
        )


_CUDA_BUILD = re.compile(r"^py[23][.\d]*_cuda(\d+\.\d+)_")


def _implied_pytorch_cuda(build: str | None) -> str | None:
    """``py3.11_cuda11.8_cudnn8.7.0_0`` → ``11.8``: the pytorch channel's CUDA build of torch."""
    m = _CUDA_BUILD.match((build or "").lower())
    return m.group(1) if m else None


def _at_least(version: str | None, first: str) -> bool:
    have, base = version_key(".".join((version or "").split(".")[:2])), version_key(first)
    return bool(have is not None and base is not None and have >= base)


RULE = Rule.declared(__name__, channel_for_package)
