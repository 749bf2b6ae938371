"""TC611: unpinned torch family."""

from __future__ import annotations

import shlex
from collections.abc import Iterator

from conda_torchcheck.envspec.intent import CONDA_TORCH, PIP_TORCH, companion_for, pure_python_companion
from conda_torchcheck.envspec.matchspec import version_key
from conda_torchcheck.envspec.parse import CondaDep, PipItem
from conda_torchcheck.envspec.rules._common import Rule, RuleContext, at, ev
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg


def _pure_python_pair(i, name: str) -> bool:
    """The pip torch is one whose companion release was pure Python (torch 0.2-0.4: torchvision 0.2.x), whose
    wheels name no torch version: an unpinned one is PyPI's newest, which requires a much newer torch."""
    torch = i.pip.get("torch")
    version = torch.line.exact.split("+", 1)[0] if torch is not None and torch.line.exact else None
    if version is None:
        return False
    minor = companion_for(name, version)[0]
    if minor is None:
        # before the tables' first row (torch 0.4): torchvision 0.1-0.2, pure Python, no torch version named
        key, first = version_key(version), version_key("0.4")
        return name == "torchvision" and key is not None and first is not None and key < first
    return pure_python_companion(name, minor)


def unpinned(ctx: RuleContext) -> Iterator[Finding]:
    """Entries of the torch family with no version at all. A range (``pytorch>=1.8``) is a constraint the user
    chose, not "unpinned"; a conda torchvision/torchaudio beside a conda pytorch follows it (each of their
    conda builds depends on one exact pytorch), so only pytorch itself needs the pin there."""
    i = ctx.intent
    conda_loose: list[CondaDep] = []
    # pytorch-gpu / pytorch-cpu (conda-forge's metapackages) pin pytorch as well: the companions follow them
    conda_pytorch = any(n in i.deps for n in ("pytorch", "pytorch-gpu", "pytorch-cpu")) or i.misnamed_torch is not None
    for name in CONDA_TORCH:
        dep = i.deps.get(name)
        if dep is None or dep.spec is None or dep.spec.version not in (None, "*"):
            continue
        if name != "pytorch" and conda_pytorch:
            continue
        conda_loose.append(dep)
    meta_loose: list[CondaDep] = []
    # the package standing for pytorch with no version: conda-forge's metapackage (`pytorch-gpu` alone), or on the
    # pytorch channel `pytorch-cpu`, its 0.4-1.1 CPU package itself; the frozen channel's resolution of pytorch
    # does not tell which release either brings
    meta = i.torch_metapackage
    if meta is not None and meta.spec is not None and meta.spec.version in (None, "*"):
        meta_loose.append(meta)
    pip_loose: list[PipItem] = []
    for name in PIP_TORCH:
        item = i.pip.get(name)
        if item is None or item.line.url or item.line.specifier:
            continue
        if name == "torch" and i.installs_conda_torch:
            # a pip torch beside conda's is TC606's: the fix removes one of them, not pins this one (blind-s s003)
            continue
        if name != "torch" and ("torch" in i.pip or conda_pytorch) and not _pure_python_pair(i, name):
            # pip's resolver pairs an unpinned torchvision with the torch it installs (each wheel pins one
            # torch); beside a conda torch TC606 (cross) says what is wrong with it
            continue
        pip_loose.append(item)
    fix_with_env = Fix(
        "file", msg("TC611.fix"), (f"{ctx.command} spec fix {shlex.quote(ctx.file.path)} -p <env> --write",)
    )
    if conda_loose and i.era == "pytorch" and i.resolution is not None and i.resolution.version:
        yield finding(
            "TC611",
            Severity.WARNING,
            variant="frozen",
            evidence=ev(ctx, entries=[at(d) for d in conda_loose], resolves_to=i.resolution.version),
            fixes=[ctx.rewrite_fix("TC611.frozen.fix", version=i.resolution.version)],
            packages=", ".join(d.spec.name for d in conda_loose if d.spec),
            version=i.resolution.version,
        )
        conda_loose = []
    loose: list[CondaDep | PipItem] = [*conda_loose, *meta_loose, *pip_loose]
    if loose:
        names = ", ".join(d.spec.name if isinstance(d, CondaDep) and d.spec else (d.line.name or d.text) for d in loose)
        yield finding(
            "TC611",
            Severity.WARNING,
            evidence=ev(ctx, entries=[at(d) for d in loose]),
            fixes=[fix_with_env],
            packages=names,
        )


RULE = Rule.declared(__name__, unpinned)
