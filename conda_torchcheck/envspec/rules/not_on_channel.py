"""TC605: a version / package the named channel never had."""

from __future__ import annotations

import re
from collections.abc import Iterator

from conda_torchcheck.envspec.history import cuda_metapackages, cudatoolkit_builds
from conda_torchcheck.envspec.history import release as torch_release
from conda_torchcheck.envspec.intent import (
    Intent,
    before_pytorch_cuda,
    facts,
    published_pytorch_cuda,
    pytorch_channel_last,
    pytorch_channel_versions,
)
from conda_torchcheck.envspec.matchspec import version_key
from conda_torchcheck.envspec.parse import CondaDep
from conda_torchcheck.envspec.rules._common import Rule, RuleContext, at, ev, wants_pytorch_channel
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg

_OS_WORDS = {"win": "Windows", "osx": "macOS", "linux": "Linux"}


def _other_os_packages(ctx: RuleContext) -> Iterator[Finding]:
    """Packages only one OS's conda subdirs publish, in a file for another OS: an export's `_libgcc_mutex` in a
    file named for Windows, a Mac's `appnope` beside another Mac-less sign, or packages of two OSes at once (no
    platform has them all). conda env create stops with PackagesNotFoundError on the OS the file is for."""
    from conda_torchcheck.envspec.platform import named_oses, os_only_packages

    only = os_only_packages(ctx.file)
    if not only:
        return
    named = named_oses(ctx.file)
    if len(only) >= 2:
        wrong = [d for os_ in only for d in only[os_]]
        meant = ", ".join(_OS_WORDS[o] for o in only)
    elif named and not (set(only) & named):
        wrong = next(iter(only.values()))
        meant = ", ".join(_OS_WORDS[o] for o in sorted(named))
    else:
        return
    yield finding(
        "TC605",
        Severity.ERROR,
        variant="other_os_package",
        evidence=ev(
            ctx, entries=[at(d) for d in wrong], os_only={_OS_WORDS[o]: [d.text for d in v] for o, v in only.items()}
        ),
        fixes=[Fix("file", msg("TC605.other_os_package.fix"))],
        entries=", ".join(d.text for d in wrong),
        oses=meant,
    )


def not_on_channel(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    yield from _other_os_packages(ctx)
    if i.misnamed_torch is not None:
        yield finding(
            "TC605",
            Severity.ERROR,
            variant="pip_name",
            evidence=ev(ctx, entry=at(i.misnamed_torch)),
            # a line beyond the reader (`torch==2.2.2+cpu -f URL` in the conda list) is not rewritten: no claim
            fixes=[
                ctx.rewrite_fix("TC605.pip_name.fix")
                if i.misnamed_torch.spec is not None
                else Fix("file", msg("TC605.pip_name.fix"))
            ],
        )
    for c in ctx.file.channels or ():
        if c.name in facts()["pytorch_channel"]["deprecated"]:
            yield finding(
                "TC605",
                Severity.WARNING,
                variant="deprecated_channel",
                evidence=ev(
                    ctx,
                    line=c.where.line,
                    channel=c.text,
                    entries=[at(d) for d in ctx.file.deps if d.spec is not None and d.spec.channel_name == c.name],
                ),
                fixes=[Fix("file", msg("TC605.deprecated_channel.fix"))],
                channel=c.text,
            )
    torch = i.deps.get("pytorch") or i.misnamed_torch
    if i.torch_channel == "pytorch" and torch is not None and torch.spec is not None and torch.spec.version:
        on_channel = [v for v in pytorch_channel_versions() if torch.spec.allows(v) is not False]
        if not on_channel:
            # with conda's default (flexible) channel priority a later channel that publishes pytorch supplies it
            names = list(ctx.file.channel_names)
            later = names[names.index("pytorch") + 1 :] if "pytorch" in names and torch.spec.channel is None else []
            fallback = next((c for c in later if c in ("conda-forge", "defaults", "anaconda")), None)
            yield finding(
                "TC605",
                Severity.ERROR,
                variant="frozen_fallback" if fallback else "frozen",
                evidence=ev(
                    ctx,
                    entry=at(torch),
                    channel=i.torch_channel,
                    last_release=pytorch_channel_last(),
                    fallback=fallback,
                ),
                # a dated nightly has no home but the nightly channel/wheels: the rewrite cannot move it
                fixes=[
                    Fix("file", msg("TC605.deprecated_channel.fix"))
                    if "dev" in (torch.spec.exact or "")
                    else ctx.rewrite_fix("TC605.frozen.fix")
                ],
                version=torch.spec.version,
                last=pytorch_channel_last(),
                fallback=fallback or "",
            )
    pc = i.deps.get("pytorch-cuda")
    if pc is not None and pc.spec is not None and pc.spec.version:
        cuda = pc.spec.exact or pc.spec.minor
        cuda = ".".join(cuda.split(".")[:2]) if cuda else None
        published = published_pytorch_cuda()
        if cuda and cuda not in published:
            yield finding(
                "TC605",
                Severity.ERROR,
                variant="pytorch_cuda_version",
                evidence=ev(ctx, entry=at(pc), published=list(published)),
                fixes=[Fix("file", msg("TC605.pytorch_cuda_version.fix", published=", ".join(published)))],
                cuda=cuda,
            )
        elif cuda and torch is not None and torch.spec is not None:
            minor = torch.spec.minor
            release = torch_release(minor) if minor else None
            fix, built_for = None, {}
            if release is not None and release.pytorch_cuda and cuda not in release.pytorch_cuda:
                built_for = {"published_for_torch": list(release.pytorch_cuda)}
                fix = msg("TC605.pytorch_cuda_for_torch.fix", options=", ".join(release.pytorch_cuda), torch=minor)
            elif release is not None and not release.pytorch_cuda and before_pytorch_cuda(minor):
                # before 1.13 the channel selected CUDA with cudatoolkit: no build of this torch depends on
                # pytorch-cuda, so the solve fails or leaves the CUDA packages beside a build that ignores them
                built_for = {"cudatoolkit_for_torch": list(release.cudatoolkit)}
                toolkits = ", ".join(release.cudatoolkit)
                fix = msg("TC605.pytorch_cuda_for_torch.fix_cudatoolkit", options=toolkits, torch=minor)
            if fix is not None:
                yield finding(
                    "TC605",
                    Severity.ERROR,
                    variant="pytorch_cuda_for_torch",
                    evidence=ev(ctx, entries=[at(torch), at(pc)], **built_for),
                    fixes=[Fix("file", fix)],
                    cuda=cuda,
                    torch=minor,
                )

    yield from _cudatoolkit_build(ctx)
    yield from _cuda_package(ctx)


def _cuda_package(ctx: RuleContext) -> Iterator[Finding]:
    """The pre-cudatoolkit selectors (cuda80, cuda90, cuda92, cuda100) belong to torch 0.4.x and 1.0.0; with a
    release that had no such build there is nothing to select and the CPU build is installed."""
    import re

    i = ctx.intent
    torch_version = i.torch_version
    release = torch_release(torch_version) if torch_version else None
    if release is None or not wants_pytorch_channel(i):
        return
    for dep in ctx.file.deps:
        if dep.name is None or not re.fullmatch(r"cuda\d{2,3}", dep.name):
            continue
        packages = cuda_metapackages(torch_version)
        if dep.name in packages:
            continue
        builds = cudatoolkit_builds(torch_version) or ()
        options = ", ".join(packages) if packages else "cudatoolkit " + ", ".join(builds)
        yield finding(
            "TC605",
            Severity.ERROR,
            variant="cuda_package_for_torch",
            evidence=ev(ctx, entry=at(dep), torch=torch_version, built_for=options),
            fixes=[Fix("file", msg("TC605.cuda_package_for_torch.fix", options=options, torch=torch_version))],
            package=dep.name,
            torch=torch_version,
            options=options,
        )


def _other_release_has_build(i: Intent, torch: CondaDep | None, cuda: str) -> bool:
    """A torch left open (unpinned, a range) that a release the file also allows was built for ``cuda``: the
    solver can take that release's CUDA build rather than the newest one's CPU build (blind-s s022:
    `pytorch::pytorch` + `cudatoolkit=10.1` + python 3.6), so which one it installs is not decided here."""
    from conda_torchcheck.envspec.intent import release_python_ok

    spec = torch.spec if torch is not None else None
    if spec is not None and spec.exact:
        return False
    for version in pytorch_channel_versions():
        if spec is not None and spec.version and spec.allows(version) is not True:
            continue
        rel = torch_release(version)
        if rel is None or (i.python_minors and not release_python_ok(rel, i.python_minors)):
            continue
        if cuda in (cudatoolkit_builds(version) or ()):
            return True
    return False


def _cudatoolkit_build(ctx: RuleContext) -> Iterator[Finding]:
    """torch < 1.13 from the pytorch channel with a cudatoolkit that release was never built for: there is no
    CUDA build to match, and conda silently installs the CPU build (its cpu variant does not constrain
    cudatoolkit), e.g. torch 1.11 + cudatoolkit 11.1 (1.11 had 10.2, 11.3)."""
    i = ctx.intent
    dep = i.deps.get("cudatoolkit")
    if dep is None or dep.spec is None or not wants_pytorch_channel(i):
        return
    cuda = dep.spec.exact or dep.spec.minor
    torch_version = i.torch_version
    builds = cudatoolkit_builds(torch_version) if torch_version else None
    key, base = version_key(torch_version or ""), version_key(facts()["pytorch_channel"]["pytorch_cuda_from"])
    if not cuda or not builds or key is None or base is None or key >= base:
        return
    cuda = ".".join(cuda.split(".")[:2])
    if cuda in builds:
        return
    torch = i.deps.get("pytorch") or i.misnamed_torch
    build = (torch.spec.build or "").lower() if torch is not None and torch.spec is not None else ""
    if "*" not in build and re.search(rf"cuda_?{re.escape(cuda)}(?:\.|_|$)|cu{cuda.replace('.', '')}(?:_|$)", build):
        # an exact build of that CUDA (`py3.6_cuda10.0.130_cudnn7.6.3_0`, an export's): the channel had it, even
        # where the install page lists other CUDA versions for the release
        return
    if _other_release_has_build(i, torch, cuda):
        return
    yield finding(
        "TC605",
        Severity.ERROR,
        variant="cudatoolkit_for_torch",
        evidence=ev(ctx, entries=[at(d) for d in (torch, dep) if d is not None], built_for=list(builds)),
        fixes=[Fix("file", msg("TC605.cudatoolkit_for_torch.fix", options=", ".join(builds), torch=torch_version))],
        cuda=cuda,
        torch=torch_version,
        options=", ".join(builds),
    )


RULE = Rule.declared(__name__, not_on_channel)
