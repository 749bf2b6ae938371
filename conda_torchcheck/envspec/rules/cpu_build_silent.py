"""TC617: the file wants CUDA, but what it asks for resolves to a CPU build of torch (no selector says so)."""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.envspec.history import release
from conda_torchcheck.envspec.intent import facts, gpu_intent
from conda_torchcheck.envspec.matchspec import version_key
from conda_torchcheck.envspec.rules._common import Rule, RuleContext, at, ev
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg


def _listed(ctx: RuleContext, channel: str) -> bool:
    return channel in ctx.file.channel_names or any(
        d.spec is not None and d.spec.channel_name == channel for d in ctx.file.deps
    )


def _pypi_windows(ctx: RuleContext) -> Iterator[Finding]:
    """pip's plain torch on Windows: PyPI's win_amd64 wheels are the CPU build."""
    i = ctx.intent
    torch = i.pip.get("torch")
    if torch is None or i.has_conda_torch or torch.line.url or torch.line.local_tag or i.indexes:
        return
    if any(v == "cpu" for v, _ in i.variant_signals) or "win" not in i.oses:
        return
    signal = gpu_intent(ctx.file, include_cudatoolkit=True)
    if signal is None:
        return
    yield finding(
        "TC617",
        Severity.ERROR,
        variant="pypi_windows",
        evidence=ev(ctx, entry=at(torch), gpu_signal=signal),
        # the CUDA tag is the user's choice: advice, not a rewrite
        fixes=[Fix("file", msg("TC617.pypi_windows.fix"))],
        entry=torch.text,
        signal=signal,
    )


def cpu_build_silent(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    yield from _pypi_windows(ctx)
    torch = i.deps.get("pytorch")
    if torch is None or torch.spec is None or i.torch_channel != "pytorch":
        return
    # a selector, a variant build string or cudatoolkit: the file says what it wants and other findings read it
    if i.selectors or i.variant_signals and any(v == "cpu" for v, _ in i.variant_signals):
        return
    if torch.spec.build or "cudatoolkit" in i.deps or _listed(ctx, "nvidia"):
        return
    version = i.torch_version
    rel = release(version) if version else None
    first = version_key(facts()["pytorch_channel"]["pytorch_cuda_from"])
    have = version_key(".".join((version or "").split(".")[:2]))
    if rel is None or not rel.pytorch_cuda or have is None or first is None or have < first:
        return
    # pytorch-cuda's CUDA 11 libraries are on nvidia only; conda-forge and Anaconda's main have CUDA 12 ones (the
    # split cuda-* packages), so a 12.x release beside them could still solve a CUDA build: said only where none can
    base_has_cuda12 = any(_listed(ctx, n) for n in (*facts()["defaults"]["names"], "conda-forge"))
    if base_has_cuda12 and any((version_key(c) or version_key("0")) >= version_key("12") for c in rel.pytorch_cuda):
        return
    signal = gpu_intent(ctx.file)
    if signal is None:
        return
    cuda = rel.pytorch_cuda[-1]
    yield finding(
        "TC617",
        Severity.ERROR,
        variant="pytorch_channel",
        evidence=ev(ctx, entry=at(torch), gpu_signal=signal, pytorch_cuda_for_torch=list(rel.pytorch_cuda)),
        # two entries and a channel to add, and the CUDA version is the user's: advice, not a rewrite
        fixes=[Fix("file", msg("TC617.pytorch_channel.fix", cuda=cuda))],
        entry=torch.text,
        signal=signal,
    )


RULE = Rule.declared(__name__, cpu_build_silent)
