"""TC606: conda torch and pip torch in one file."""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.envspec.intent import CONDA_TORCH, pure_python_companion
from conda_torchcheck.envspec.parse import CondaDep, PipItem
from conda_torchcheck.envspec.rules._common import Rule, RuleContext, at, ev
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.knowledge.torch_dependents import conda_dependent
from conda_torchcheck.messages import msg


def _pip_satisfied_by(item: PipItem, version: str | None) -> bool:
    """Would pip, running ``install -U``, leave a conda-installed torch ``version`` alone?"""
    exact = item.line.exact
    return bool(version and exact and exact == version)


def conda_and_pip(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    conda_names = [n for n in CONDA_TORCH if n in i.deps]
    torch_meta = i.torch_metapackage
    if not conda_names and i.misnamed_torch is None and torch_meta is None:
        yield from _conda_dependency(ctx)
        return
    if "pytorch" not in i.deps and i.misnamed_torch is None and "torch" in i.pip:
        # conda's torchvision / torchaudio builds depend on conda's pytorch: the solve installs one, which pip's torch
        # then replaces under them (blind-i i001: torchvision=0.15.2=py38_cpu beside pip's torch==2.0.0)
        yield from _conda_dependency(ctx, companions=True)
    pairs = {"pytorch": "torch", "torchvision": "torchvision", "torchaudio": "torchaudio"}
    torch_conda = i.deps.get("pytorch") or i.misnamed_torch or torch_meta
    # one finding per kind for the whole family (torch, torchvision and torchaudio twice are one mistake)
    grouped: dict[bool, list[tuple[CondaDep, PipItem]]] = {True: [], False: []}
    for conda_name, pip_name in pairs.items():
        dep = i.deps.get(conda_name) if conda_name != "pytorch" else torch_conda
        item = i.pip.get(pip_name)
        if dep is None or item is None:
            continue
        conda_version = dep.spec.exact if dep.spec is not None else None
        if conda_name == "pytorch" and conda_version is None and i.resolution is not None:
            conda_version = i.resolution.version
        grouped[_pip_satisfied_by(item, conda_version)].append((dep, item))
    for redundant in (False, True):
        found = grouped[redundant]
        if not found:
            continue
        yield finding(
            "TC606",
            Severity.WARNING if redundant else Severity.ERROR,
            variant="redundant" if redundant else "conflict",
            evidence=ev(ctx, conda=[at(d) for d, _ in found], pip=[at(p) for _, p in found]),
            # with CPU and CUDA both asked for (a conda CPU build beside pip's +cu111), which torch to keep is the
            # user's choice, and spec fix leaves it (rewrite.plan_fix: variant_conflict)
            fixes=[
                Fix("file", msg("TC606.fix_choose", pip=", ".join(p.text for _, p in found)))
                if i.variant == "conflict"
                else ctx.rewrite_fix("TC606.fix", pip=", ".join(p.text for _, p in found))
            ],
            conda=", ".join(d.text for d, _ in found),
            pip=", ".join(p.text for _, p in found),
        )
    # torchvision / torchaudio from the other manager than torch: one finding for the file, every entry in it
    if torch_conda is not None:
        others = []
        for name in ("torchvision", "torchaudio"):
            if name in i.deps:
                continue
            # pip's wheel, or a build from source (git+https://github.com/pytorch/vision) against whatever torch
            # pip sees, whose torch requirement can pull a PyPI torch over conda's
            item = i.pip.get(name) or i.pip_vcs.get(name)
            if item is not None and pure_python_companion(name, item.line.exact):
                continue  # torchvision 0.2.x: pure Python, no torch ABI and no exact torch pin to pull in
            if item is not None and "torch" in i.pip:
                continue  # pip installs its own torch over conda's (the conflict above): the companion goes with it
            if item is not None:
                others.append((name, item))
        if others:
            names = ", ".join(n for n, _ in others)
            yield finding(
                "TC606",
                Severity.WARNING,
                variant="cross",
                evidence=ev(ctx, torch=at(torch_conda), others=[at(item) for _, item in others]),
                fixes=[Fix("file", msg("TC606.cross.fix", package=names))],
                package=names,
                torch_manager="conda",
                other_manager="pip",
            )


def _conda_dependency(ctx: RuleContext, *, companions: bool = False) -> Iterator[Finding]:
    """torch from pip, and a conda package that depends on pytorch (pytorch-lightning, torchmetrics ..., and with
    ``companions`` conda's own torchvision/torchaudio): the solve installs a conda pytorch for it, then
    `pip install -U` puts PyPI's torch over conda's files."""
    i = ctx.intent
    item = i.pip.get("torch")
    if item is None:
        return
    if companions:
        deps = [d for d in ctx.file.deps if d.name in ("torchvision", "torchaudio")]
    else:  # knowledge/torch_dependents.toml's conda rows: the recipes that run-require pytorch
        deps = [d for d in ctx.file.deps if d.name not in CONDA_TORCH and conda_dependent(d.name) is not None]
    if not deps:
        return
    # every such entry: each brings the conda pytorch, and each is part of the fix
    names = ", ".join(dict.fromkeys(d.name for d in deps))
    yield finding(
        "TC606",
        Severity.ERROR,
        variant="conda_dependency",
        evidence=ev(ctx, conda=[at(d) for d in deps], pip=at(item)),
        fixes=[Fix("file", msg("TC606.conda_dependency.fix", package=names, pip=item.text))],
        package=names,
        pip=item.text,
    )


RULE = Rule.declared(__name__, conda_and_pip)
