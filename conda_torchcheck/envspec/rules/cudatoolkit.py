"""TC613: cudatoolkit where the torch uses something else."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from conda_torchcheck.envspec.history import release as torch_release
from conda_torchcheck.envspec.intent import Intent, build_builder, facts
from conda_torchcheck.envspec.matchspec import version_key
from conda_torchcheck.envspec.rules._common import (
    Rule,
    RuleContext,
    at,
    cudatoolkit_unpublished,
    ev,
    wants_pytorch_channel,
)
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg


def _major(version: str | None) -> int | None:
    key = version_key(version or "")
    return key.major if key is not None else None


def _conda_forge_has_cuda12(i: Intent) -> bool:
    """Does the newest conda-forge pytorch the file allows have CUDA 12+ builds (linux-64)?"""
    try:
        from conda_torchcheck.knowledge import releases
    except ImportError:  # pragma: no cover - shipped with the package
        return False
    torch = i.deps.get("pytorch")
    versions = list(releases.conda_forge_versions())
    if torch is not None and torch.spec is not None and torch.spec.version:
        versions = [v for v in versions if torch.spec.allows(v) is True]
    if i.python_minors:
        # the file's Python caps the releases too (python=3.7: none with CUDA 12 builds)
        from conda_torchcheck.envspec.intent import release_python_ok

        versions = [v for v in versions if (r := torch_release(v)) is None or release_python_ok(r, i.python_minors)]
    if not versions:
        return False
    cudas = releases.conda_forge_builds(versions[-1]).get("linux-64", ())
    return any(_major(c) is not None and (_major(c) or 0) >= 12 for c in cudas if c != "cpu")


_CUDA_BUILD = re.compile(r"(?:^|_)cuda_?\d")


def _other_cuda_builds(ctx: RuleContext) -> list[str]:
    """Entries outside the torch family pinned to a build for one CUDA (faiss-gpu `py3.8_h28a55e0_0_cuda11.3`,
    conda-forge's `cuda112py39h...`): their CUDA runtime is cudatoolkit, so it is not a copy nothing uses."""
    from conda_torchcheck.envspec.intent import FAMILY

    return [
        d.text
        for d in ctx.file.deps
        if d.name not in FAMILY and d.spec is not None and d.spec.build and _CUDA_BUILD.search(d.spec.build.lower())
    ]


def pytorch_cuda_for_cudatoolkit(spec: Any, torch_version: str | None) -> str | None:
    """The pytorch-cuda a ``cudatoolkit`` entry stands for with torch ≥ 1.13 on the pytorch channel: the newest
    one that release had which the entry's constraint allows (no version: the newest, as the solver picks);
    None when the release had none that fits (then only the user can choose)."""
    release = torch_release(torch_version) if torch_version else None
    if release is None or not release.pytorch_cuda:
        return None
    for cuda in reversed(release.pytorch_cuda):
        if spec.version in (None, "*") or spec.allows(cuda) is True or spec.allows(f"{cuda}.0") is True:
            return cuda
    return None


def pip_torch_cuda(ctx: RuleContext) -> tuple[str, str] | None:
    """(CUDA version or "cpu", how) of the wheel the file's pip torch installs: its ``+cuXXX`` tag, the torch
    index it names, or PyPI's own Linux build for that release (the install page's plain `pip install torch`
    line); None when the file does not decide (no exact pin, the all-variants find-links page, a Windows file,
    whose PyPI wheels TC617 covers)."""
    from conda_torchcheck.envspec.matchspec import cuda_of_tag
    from conda_torchcheck.knowledge import releases

    item = ctx.intent.pip.get("torch")
    if item is None or not item.line.exact:
        return None
    tag = item.line.local_tag
    how = "tag"
    if not tag:
        tags = {index.tag for _, index in ctx.intent.indexes}
        if len(tags) > 1 or None in tags:
            return None
        if tags:
            tag, how = next(iter(tags)), "index"
        else:
            if "win" in ctx.intent.oses:
                return None
            tag, how = releases.pypi_default_cuda(item.line.exact.split("+", 1)[0]), "pypi"
    if tag == "cpu":
        return "cpu", how
    cuda = cuda_of_tag(tag)
    return (cuda, how) if cuda else None


def _beside_pip_torch(ctx: RuleContext, dep: Any, version: str) -> Iterator[Finding]:
    """A conda cudatoolkit next to a pip torch: the wheel carries its own CUDA (bundled, or nvidia-* wheels) and
    never loads the toolkit; when the two CUDA versions differ, the file's CUDA is not the one torch runs on."""
    built = pip_torch_cuda(ctx)
    if built is None or not version:
        return
    cuda, how = built
    if cuda != "cpu" and version_key(cuda) == version_key(".".join(version.split(".")[:2])):
        return  # the same CUDA: a spare copy, harmless to torch
    item = ctx.intent.pip["torch"]
    yield finding(
        "TC613",
        Severity.INFO,
        variant="pip",
        evidence=ev(ctx, entry=at(dep), torch=at(item), torch_cuda=cuda, decided_by=how),
        fixes=[Fix("file", msg("TC613.pip.fix", torch=item.line.exact.split("+", 1)[0], version=version))],
        entry=dep.text,
        torch=item.text,
        cuda=cuda,
    )


def _conda_solve_torch(i: Intent) -> str | None:
    """The torch the conda solve itself installs, which is what cudatoolkit can select: with no conda pytorch entry
    but a pip torch, that is the pytorch conda's own torchvision/torchaudio pins bring (torchvision 0.9.1 → 1.8.1,
    whose selector cudatoolkit still is), not pip's, which comes after the solve; None when they do not decide."""
    if "pytorch" in i.deps or i.misnamed_torch is not None or not i.has_pip_torch:
        return i.torch_version
    from conda_torchcheck.envspec.intent import torch_for_companions

    pinned = [
        (name, dep.spec.exact)
        for name in ("torchvision", "torchaudio")
        if (dep := i.deps.get(name)) is not None and dep.spec is not None and dep.spec.exact
    ]
    return torch_for_companions(pinned) if pinned else None


def cudatoolkit(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    dep = i.deps.get("cudatoolkit")
    if dep is None or dep.spec is None:
        return
    version = dep.spec.exact or dep.spec.minor or ""
    if not i.installs_conda_torch and i.has_pip_torch:
        yield from _beside_pip_torch(ctx, dep, ".".join(version.split(".")[:2]))
        return
    last = facts()["conda_forge"]["cudatoolkit_last_major"]
    if cudatoolkit_unpublished(dep) and i.era not in ("pytorch", "conda-forge"):
        # neither Anaconda's defaults nor conda-forge published a cudatoolkit after 11.8 [CFCUDA]: the solve stops at
        # this line; the CUDA 12 way depends on the builder
        yield finding(
            "TC613",
            Severity.ERROR,
            variant="no_such_toolkit",
            evidence=ev(ctx, entry=at(dep)),
            fixes=[Fix("file", msg("TC613.no_such_toolkit.fix"))],
            version=version,
        )
        return
    if wants_pytorch_channel(i):
        torch_version = _conda_solve_torch(i)
        from_minor = facts()["pytorch_channel"]["pytorch_cuda_from"]
        key, base = version_key(torch_version or ""), version_key(from_minor)
        if key is None or base is None or key < base:
            return  # before 1.13 cudatoolkit is the selector (TC605 checks the build existed)
        torch = i.deps.get("pytorch")
        if _other_cuda_builds(ctx) or (torch is not None and torch.spec and build_builder(torch.spec.build) == "base"):
            # the runtime of another package's CUDA build, or of conda-forge's own CUDA 11 torch build
            # (`cuda112py39hb0b7ed5_200` depends on cudatoolkit): neither a spare copy nor the torch's selector
            return
        if "pytorch-cuda" in i.deps:
            # both selectors: pytorch-cuda decides, cudatoolkit only adds a second CUDA copy
            yield finding(
                "TC613",
                Severity.WARNING,
                variant="redundant",
                evidence=ev(ctx, entry=at(dep), pytorch_cuda=at(i.deps["pytorch-cuda"]), torch=torch_version),
                # spec fix removes it beside a torch the file names (rewrite._resolve_torch_version); with torch
                # only as a pip package's dependency (blind-r r024) it has no torch to judge the selector against
                fixes=[
                    ctx.rewrite_fix("TC613.redundant.fix")
                    if torch is not None
                    or i.misnamed_torch is not None
                    or any(n in i.deps for n in ("torchvision", "torchaudio"))
                    else Fix("file", msg("TC613.redundant.fix"))
                ],
                torch=torch_version,
            )
            return
        cuda = pytorch_cuda_for_cudatoolkit(dep.spec, torch_version)
        release = torch_release(torch_version)
        options = ", ".join(release.pytorch_cuda) if release is not None else ""
        yield finding(
            "TC613",
            Severity.WARNING,
            variant="pytorch",
            evidence=ev(ctx, entry=at(dep), torch=torch_version, pytorch_cuda_for_torch=options),
            # the rewrite converts it for the frozen pytorch channel only (the nightly channels are left as they are)
            fixes=[
                ctx.rewrite_fix("TC613.pytorch.fix", cuda=cuda)
                if cuda and i.torch_channel not in ("pytorch-nightly", "pytorch-test", "pytorch-lts")
                else Fix("file", msg("TC613.pytorch.fix", cuda=cuda))
                if cuda
                else Fix("file", msg("TC613.pytorch.fix_choose", options=options, torch=torch_version))
            ],
            torch=torch_version,
        )
    elif i.era == "conda-forge":
        cuda_dep = i.deps.get("cuda-version") or i.deps.get("pytorch-cuda")
        cuda_major = None
        if cuda_dep is not None and cuda_dep.spec is not None:
            cuda_major = _major(cuda_dep.spec.exact or cuda_dep.spec.minor or (cuda_dep.spec.version or "").strip("=*"))
        if cudatoolkit_unpublished(dep):
            yield finding(
                "TC613",
                Severity.ERROR,
                variant="conda_forge",
                evidence=ev(ctx, entry=at(dep)),
                fixes=[ctx.rewrite_fix("TC613.conda_forge.fix")],
                version=version or "?",
            )
        elif cuda_dep is None and _conda_forge_has_cuda12(i):
            # cudatoolkit is the CUDA 11 runtime: alone it restricts the solve to pytorch's CUDA 11 builds
            # (older releases, or none) where the release has CUDA 12 ones; which CUDA is the user's choice
            yield finding(
                "TC613",
                Severity.WARNING,
                variant="conda_forge_cuda11",
                evidence=ev(ctx, entry=at(dep), torch=at(i.deps["pytorch"]) if "pytorch" in i.deps else None),
                fixes=[Fix("file", msg("TC613.conda_forge_cuda11.fix"))],
                entry=dep.text,
            )
        elif cuda_major is not None and cuda_major > last:
            # conda-forge's CUDA 11 convention (cudatoolkit + cuda-version=11.x) is right and stays silent;
            # next to CUDA 12+ cudatoolkit is a second, older CUDA the torch build does not use
            yield finding(
                "TC613",
                Severity.WARNING,
                variant="conda_forge",
                evidence=ev(ctx, entry=at(dep), cuda=at(cuda_dep)),
                fixes=[ctx.rewrite_fix("TC613.conda_forge.fix")],
                version=version or "*",
            )


RULE = Rule.declared(__name__, cudatoolkit)
