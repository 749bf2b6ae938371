"""TC609: CPU and CUDA at once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from conda_torchcheck.envspec.rules._common import Rule, RuleContext, at, ev
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg


def _located(ctx: RuleContext, text: str) -> dict[str, Any]:
    """An entry's text with the line it is on (the first one written so)."""
    for item in (*ctx.file.deps, *(ctx.file.pip or ())):
        if item.text == text:
            return at(item)
    return {"line": 0, "entry": text}


def cpu_and_cuda(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    if i.variant != "conflict":
        return
    signals = list(i.variant_signals)
    if not any(n in i.deps for n in ("pytorch", "torchvision", "torchaudio", "libtorch")):
        # conda's selectors (cpuonly, pytorch-mutex, cudatoolkit) choose between builds of a conda torch: with
        # torch from pip alone they select nothing, and only the pip entries say which build is installed
        pip_texts = {p.text for p in ctx.file.pip or ()}
        signals = [(v, e) for v, e in signals if e in pip_texts]
    cpu = [e for v, e in signals if v == "cpu"]
    cuda = [e for v, e in signals if v == "cuda"]
    if not cpu or not cuda:
        return
    pip_texts = {p.text for p in ctx.file.pip or ()}
    conda_cpu, pip_cuda = not set(cpu) & pip_texts, set(cuda) <= pip_texts
    pip_cpu, conda_cuda = set(cpu) <= pip_texts, not set(cuda) & pip_texts
    if i.installs_conda_torch and i.has_pip_torch and ((conda_cpu and pip_cuda) or (pip_cpu and conda_cuda)):
        # one build from conda, the other from pip: one torch over the other, which TC606 reports (blind-t t024)
        return
    yield finding(
        "TC609",
        Severity.ERROR,
        evidence=ev(ctx, cpu=[_located(ctx, e) for e in cpu], cuda=[_located(ctx, e) for e in cuda]),
        fixes=[Fix("file", msg("TC609.fix", cpu=", ".join(cpu), cuda=", ".join(cuda)))],
        cpu=cpu[0],
        cuda=cuda[0],
    )


RULE = Rule.declared(__name__, cpu_and_cuda)
