"""TC602: channel order."""

from __future__ import annotations

import re
from collections.abc import Iterator

from conda_torchcheck.envspec.intent import Intent, before_pytorch_cuda, build_builder, facts, on_pytorch_channel
from conda_torchcheck.envspec.rules._common import (
    Rule,
    RuleContext,
    at,
    channels_ev,
    defaults_first,
    ev,
    wants_pytorch_channel,
)
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg


def _pytorch_cuda_major(i: Intent) -> int | None:
    dep = i.deps.get("pytorch-cuda")
    if dep is None or dep.spec is None:
        return None
    head = (dep.spec.exact or dep.spec.minor or "").split(".")[0]
    return int(head) if head.isdigit() else None


def channel_order(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    names = list(ctx.file.channel_names)
    # the order decides where conda's torch comes from: with no conda torch in the solve (torch from pip, beside a
    # leftover pytorch-cuda or pytorch-mutex: blind-p p007) it decides nothing about torch
    reordered = False  # TC602.pytorch's fix puts pytorch and nvidia first: the nvidia order is part of it
    asks_pytorch_channel = i.installs_conda_torch and (
        bool(i.selectors or i.cuda_packages) or i.torch_channel == "pytorch" and i.torch_channel_how == "prefix"
    )
    if asks_pytorch_channel and "pytorch" in names:
        torch = i.deps.get("pytorch")
        prefixed = torch is not None and torch.spec is not None and torch.spec.channel_name == "pytorch"
        # `pytorch=1.11.0=py3.10_cpu_0` names a build only the pytorch channel has: the order cannot pick another
        prefixed = prefixed or bool(
            torch is not None and torch.spec is not None and build_builder(torch.spec.build) == "pytorch"
        )
        first = next((c for c in ctx.file.channels or () if c.name in ("conda-forge", "defaults", "anaconda")), None)
        if not prefixed and first is not None and names.index(first.name) < names.index("pytorch"):
            reordered = True
            yield finding(
                "TC602",
                Severity.ERROR,
                variant="pytorch",
                evidence=ev(
                    ctx,
                    channels=channels_ev(ctx),
                    selectors=[at(d) for d in (*i.selectors, *i.cuda_packages)],
                    # the entries that come from the wrong channel, and that the fix prefixes
                    entries=[at(i.deps[n]) for n in ("pytorch", "torchvision", "torchaudio") if n in i.deps],
                ),
                fixes=[ctx.rewrite_fix("TC602.pytorch.fix", channel=first.text)],
                channel=first.text,
            )
    first_default = defaults_first(i)
    if first_default is not None:
        dep = i.deps["cudatoolkit"]
        yield finding(
            "TC602",
            Severity.ERROR,
            variant="defaults_cpu",
            evidence=ev(
                ctx,
                channels=channels_ev(ctx),
                torch=at(i.deps.get("pytorch") or i.misnamed_torch),  # type: ignore[arg-type]
                cudatoolkit=at(dep),
            ),
            # reordering only helps a torch the pytorch channel had (≤ 2.5.1); else which torch is meant is open
            fixes=[
                ctx.rewrite_fix("TC602.defaults_cpu.fix", channel=first_default.text)
                if on_pytorch_channel(i.deps.get("pytorch"))
                else Fix("file", msg("TC602.defaults_cpu.fix", channel=first_default.text))
            ],
            channel=first_default.text,
            cudatoolkit=dep.text,
        )
    # conda-forge has the split CUDA packages from 12.0 only; for pytorch-cuda 11.x they come from nvidia anyway
    if (
        i.installs_conda_torch
        and "pytorch-cuda" in i.deps
        and "nvidia" in names
        and "conda-forge" in names
        and _pytorch_cuda_major(i) != 11
        # a torch older than pytorch-cuda (1.13) has no build that uses it: TC605 says so, the order decides nothing
        and not before_pytorch_cuda(i.torch_version)
        # pytorch-cuda's libraries matter for the pytorch channel's torch only (a conda-forge torch beside it takes
        # none of them: blind-u u013), and TC602.pytorch's reorder already covers them (blind-u u023)
        and wants_pytorch_channel(i)
        and not reordered
    ):
        if names.index("conda-forge") < names.index("nvidia") and not _cuda_pinned_to_nvidia_builds(ctx):
            yield finding(
                "TC602",
                Severity.WARNING,
                variant="nvidia",
                evidence=ev(ctx, channels=channels_ev(ctx), entry=at(i.deps["pytorch-cuda"])),
                fixes=[ctx.rewrite_fix("TC602.nvidia.fix")],
            )


def _cuda_pinned_to_nvidia_builds(ctx: RuleContext) -> bool:
    """pytorch-cuda's CUDA runtime packages pinned to the nvidia channel's builds (an export's `cuda-cudart=12.1.105=0`:
    nvidia's build strings are a bare build number, conda-forge's are hashed): only nvidia has those, whichever
    channel is listed first."""
    names = set(facts().get("pytorch_cuda_libraries", {}).get("names", ()))
    pinned = [d for d in ctx.file.deps if d.name in names and d.spec is not None and d.spec.exact and d.spec.build]
    return bool(pinned) and all(re.fullmatch(r"\d+", d.spec.build or "") for d in pinned)


RULE = Rule.declared(__name__, channel_order)
