"""TC614: the conda-forge variant chosen by the machine."""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.envspec.intent import channel_has_pytorch, gpu_intent
from conda_torchcheck.envspec.rules._common import Rule, RuleContext, at, ev
from conda_torchcheck.findings import Finding, Severity, finding


def variant_implicit(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    torch = i.deps.get("pytorch")
    if i.era != "conda-forge" or torch is None or torch.spec is None:
        return
    if torch.spec.build or "pytorch-gpu" in i.deps or "pytorch-cpu" in i.deps:
        return
    if i.selectors:  # pytorch-cuda / cpuonly on conda-forge: TC604 already says what to write instead
        return
    if i.torch_supplier != "conda-forge" and channel_has_pytorch("conda-forge", torch) is False:
        # conda-forge never had the release (pytorch==1.3.1: its builds skip 1.2-1.5): another channel supplies it,
        # and `=cuda*` would leave nothing to install (blind-u u022)
        return
    if i.variant == "cuda":
        signal = next(e for v, e in i.variant_signals if v == "cuda")
        # the entry that says CUDA is part of the finding too (the fix may be there: cudatoolkit=10 on a file that
        # means the pytorch channel's build)
        signal_dep = next((d for d in ctx.file.deps if d.text == signal), None)
        yield finding(
            "TC614",
            Severity.WARNING,
            variant="cuda_not_forced",
            evidence=ev(ctx, entry=at(torch), cuda_signal=signal, cuda_entry=at(signal_dep) if signal_dep else None),
            fixes=[ctx.rewrite_fix("TC614.cuda_not_forced.fix")],
            signal=signal,
        )
    elif i.variant is None and not i.cuda_packages and (named := gpu_intent(ctx.file)) is not None:
        # no entry says CUDA, but the file's name or a CUDA library it installs does (environment_gpu.yml beside an
        # environment_cpu.yml: blind-s s006, s026): the machine that solves it still picks the build
        yield finding(
            "TC614",
            Severity.WARNING,
            variant="cuda_not_forced",
            evidence=ev(ctx, entry=at(torch), cuda_signal=named),
            fixes=[ctx.rewrite_fix("TC614.cuda_not_forced.fix")],
            signal=named,
        )
    # no sign of CUDA at all: conda-forge then picks the build from the solving machine's __cuda, which is
    # conda-forge's design for "whatever this machine can run" — a choice, not a defect: silent


RULE = Rule.declared(__name__, variant_implicit)
