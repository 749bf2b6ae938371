"""TC612: torch family from different builders."""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.builders import builder_of
from conda_torchcheck.envspec.intent import PYTORCH_PUBLISHERS, build_builder, facts, pure_python_companion
from conda_torchcheck.envspec.parse import CondaDep
from conda_torchcheck.envspec.rules._common import Rule, RuleContext, at, ev, wants_pytorch_channel
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg


def family_channels(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    # the channel the solver takes torch from: the first listed publisher, unless the pin's build string names
    # the pytorch channel's build (then that channel supplies it whatever comes first: blind-t t008)
    torch_dep = i.deps.get("pytorch")
    pinned_build = build_builder(torch_dep.spec.build) if torch_dep is not None and torch_dep.spec is not None else None
    torch_channel = i.torch_supplier if pinned_build == "pytorch" and i.torch_supplier else i.torch_channel
    torch_builder = builder_of(torch_channel)
    # a torch prefixed with its channel, or pinned to a build string only the pytorch channel has
    # (`pytorch=2.3.1=py3.9_cuda12.1_cudnn8.9.2_0`: blind-t t008): its companions still follow the channel order
    torch_prefixed = (
        torch_dep is not None
        and torch_dep.spec is not None
        and (torch_dep.spec.channel is not None or pinned_build == "pytorch")
    )
    by_order = next((c for c in ctx.file.channel_names if c in PYTORCH_PUBLISHERS), None)
    mixed: list[tuple[str, CondaDep, str]] = []
    by_build: list[CondaDep] = []
    reverse: list[CondaDep] = []
    if torch_builder is not None:
        for name in ("torchvision", "torchaudio", "libtorch"):
            dep = i.deps.get(name)
            if dep is None or dep.spec is None:
                continue
            if pure_python_companion(name, dep.spec.exact or dep.spec.minor):
                continue  # torchvision < 0.3 has no compiled code: no builder's libtorch to mismatch
            built = build_builder(dep.spec.build)
            # a torch pinned to a hashed build is itself conda-forge's/Anaconda's, whatever the order says
            torch_built = build_builder(torch_dep.spec.build) if torch_dep is not None and torch_dep.spec else None
            if dep.spec.channel_name is None and torch_built == "base" and built == "pytorch":
                # the reverse: Anaconda's/conda-forge's torch (`cpu_py310h4f03144_0`) beside the pytorch channel's
                # companion build (`py310_cpu`): each build string names its own builder
                reverse.append(dep)
                continue
            if (
                dep.spec.channel_name is None
                # the file takes (or, with pytorch-cuda/cpuonly, asks for) the pytorch channel's torch
                and (torch_builder == "pytorch" or wants_pytorch_channel(i))
                and torch_built != "base"
                and built == "base"
            ):
                # `torchvision=0.15.2=cpu_py310h83e0c9b_0`: a hashed build is conda-forge's or Anaconda's,
                # whatever the channel order says; the pytorch channel has no build of that name
                by_build.append(dep)
                continue
            if dep.spec.channel_name is not None:
                other = builder_of(dep.spec.channel_name)
                mismatch = other != torch_builder
                channel = dep.spec.channel_name
            elif torch_prefixed and by_order is not None:
                # unprefixed, it comes from the first listed channel that has it; a nightly torch needs the
                # nightly companions, and another builder's ones do not load into this torch
                channel = by_order
                mismatch = by_order != torch_channel and (
                    builder_of(by_order) != torch_builder or "nightly" in (torch_channel or "") + by_order
                )
            else:
                continue
            if mismatch:
                mixed.append((name, dep, channel))
        if mixed:
            # one finding for the family: torchvision and torchaudio from the wrong builder are one mistake
            torch = i.deps.get("pytorch")
            packages = ", ".join(n for n, _, _ in mixed)
            yield finding(
                "TC612",
                Severity.ERROR,
                variant="family",
                evidence=ev(
                    ctx,
                    torch=at(torch) if torch else None,
                    others=[at(d) for _, d, _ in mixed],
                    torch_channel=torch_channel,
                ),
                fixes=[ctx.rewrite_fix("TC612.family.fix", package=packages, torch_channel=torch_channel)],
                package=packages,
                channel=mixed[0][2],
                torch_channel=torch_channel,
            )
        if by_build:
            torch = i.deps.get("pytorch")
            packages = ", ".join(d.text for d in by_build)
            yield finding(
                "TC612",
                Severity.ERROR,
                variant="build",
                evidence=ev(
                    ctx,
                    torch=at(torch) if torch else None,
                    others=[at(d) for d in by_build],
                    torch_channel=torch_channel,
                ),
                # the build string names another builder's package: only the user can say which build to keep
                fixes=[Fix("file", msg("TC612.build.fix", package=packages, torch_channel=torch_channel))],
                package=packages,
                torch_channel=torch_channel,
            )
        if reverse and torch_dep is not None:
            packages = ", ".join(d.text for d in reverse)
            yield finding(
                "TC612",
                Severity.ERROR,
                variant="pytorch_build",
                evidence=ev(ctx, torch=at(torch_dep), others=[at(d) for d in reverse]),
                # which of the two builders to keep is the user's call: both pins are exact builds
                fixes=[Fix("file", msg("TC612.pytorch_build.fix", package=packages, torch=torch_dep.text))],
                package=packages,
                torch=torch_dep.text,
            )
    yield from _pyg_beside_base_torch(ctx, torch_channel, pinned_build)
    # a file that needs pytorch-cuda needs nvidia too (TC602 asks to put pytorch first): never say "drop it"
    names = list(ctx.file.channel_names)
    # nvidia after conda-forge only supplies what conda-forge lacks (cuda-nvtx 11.8 ...): intended, silent;
    # before it (or as nvidia::) it replaces the CUDA libraries conda-forge's torch is built against
    nvidia_first = "nvidia" in names and "conda-forge" in names and names.index("nvidia") < names.index("conda-forge")
    prefixed = any(d.spec is not None and d.spec.channel_name == "nvidia" for d in ctx.file.deps)
    if i.era == "conda-forge" and (nvidia_first or prefixed) and not wants_pytorch_channel(i):
        where = [{"line": c.where.line, "channel": c.text} for c in ctx.file.channels or () if c.name == "nvidia"]
        where += [at(d) for d in ctx.file.deps if d.spec is not None and d.spec.channel_name == "nvidia"]
        yield finding(
            "TC612",
            Severity.WARNING,
            variant="nvidia",
            evidence=ev(ctx, nvidia=where),
            fixes=[ctx.rewrite_fix("TC612.nvidia.fix")],
        )


def _pyg_beside_base_torch(ctx: RuleContext, torch_channel: str | None, pinned_build: str | None) -> Iterator[Finding]:
    """The pyg channel's compiled extensions (pytorch-scatter, pytorch-sparse ...) are built against the pytorch
    channel's torch [PYG]; beside conda-forge's or Anaconda's torch they load into another builder's libtorch.
    conda-forge's own builds have other names (pytorch_scatter), so an unprefixed hyphenated name is the pyg
    channel's wherever that channel is listed (blind-s s006)."""
    if builder_of(torch_channel) not in ("conda-forge", "anaconda") or pinned_build == "pytorch":
        # `pytorch=1.11.0=py3.10_cpu_0`: the build string is the pytorch channel's, whatever the order says
        return
    compiled = set(facts()["co_constraints"]["pyg_channel"]) - {"pyg"}  # pyg itself is Python code
    pyg_listed = "pyg" in ctx.file.channel_names
    found = [
        d
        for d in ctx.file.deps
        if d.name in compiled
        and d.spec is not None
        and (d.spec.channel_name == "pyg" or (d.spec.channel_name is None and pyg_listed))
    ]
    if not found:
        return
    torch = ctx.intent.deps.get("pytorch")
    packages = ", ".join(d.text for d in found)
    yield finding(
        "TC612",
        Severity.ERROR,
        variant="pyg",
        evidence=ev(ctx, torch=at(torch) if torch else None, others=[at(d) for d in found]),
        # pytorch channel torch (<= 2.4 for pyg) or conda-forge's own extension builds: the user's choice
        fixes=[Fix("file", msg("TC612.pyg.fix", package=packages, torch_channel=torch_channel))],
        package=packages,
        torch_channel=torch_channel,
    )


RULE = Rule.declared(__name__, family_channels)
