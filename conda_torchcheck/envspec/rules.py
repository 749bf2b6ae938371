"""TC6xx: what is wrong with an environment file, torch-wise, found without any environment.

Each rule reads the :class:`~conda_torchcheck.envspec.intent.Intent` (how the file will be solved) and yields
findings with the lines that prove them and a fix that fits this file. A rule stays silent when the file
does not say enough to be sure (an unpinned version, a channel it does not know): accuracy over volume.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from conda_torchcheck.envspec.history import cuda_metapackages, cudatoolkit_builds, example_pin
from conda_torchcheck.envspec.history import release as torch_release
from conda_torchcheck.envspec.intent import (
    CONDA_TORCH,
    PIP_TORCH,
    PYTORCH_PUBLISHERS,
    Intent,
    analyse,
    build_builder,
    builder_of,
    companion_for,
    companion_ok,
    cuda_libraries_from_base,
    facts,
    on_pytorch_channel,
    published_pytorch_cuda,
    pytorch_channel_last,
    pytorch_channel_versions,
    release_python_ok,
    torch_for_companions,
)
from conda_torchcheck.envspec.matchspec import cuda_of_tag, minor_of_spec, torch_index, version_key
from conda_torchcheck.envspec.parse import CondaDep, EnvFile, PipItem
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg

IDS = tuple(f"TC6{n:02d}" for n in range(1, 15))


@dataclass(frozen=True)
class RuleContext:
    intent: Intent
    #: how the user runs the tool: ``conda-torchcheck`` or ``conda torchcheck``
    command: str = "conda-torchcheck"

    @property
    def file(self) -> EnvFile:
        return self.intent.file

    def fix_command(self) -> str:
        return f"{self.command} spec fix {shlex.quote(self.file.path)} --write"

    def rewrite_fix(self, key: str, **params: Any) -> Fix:
        return Fix("file", msg(key, **params), (self.fix_command(),), safe_automatic=True)


def _at(dep: CondaDep | PipItem) -> dict[str, Any]:
    return {"line": dep.where.line, "entry": dep.text}


def _ev(ctx: RuleContext, **extra: Any) -> dict[str, Any]:
    return {"file": ctx.file.path, **extra}


def _channels_ev(ctx: RuleContext) -> list[dict[str, Any]]:
    return [{"line": c.where.line, "channel": c.text} for c in ctx.file.channels or ()]


def _channel_build(build: str | None) -> bool:
    """``py3.11_cuda12.4_cudnn9_0`` / ``py3.9_cpu_0``: a build string of the pytorch channel."""
    import re

    return bool(build) and re.match(r"py[23](?:\.\d+|\d+)_(?:cuda|cu\d|cpu|rocm)", build.lower()) is not None


def _pytorch_cuda_major(i: Intent) -> int | None:
    dep = i.deps.get("pytorch-cuda")
    if dep is None or dep.spec is None:
        return None
    head = (dep.spec.exact or dep.spec.minor or "").split(".")[0]
    return int(head) if head.isdigit() else None


def defaults_first(i: Intent) -> Any:
    """The classic CPU-build file: Anaconda's defaults listed before the pytorch channel, an unprefixed
    pytorch and the old CUDA selector (cudatoolkit): conda takes pytorch from defaults, which had builds for
    a few CUDA versions only, so a cudatoolkit pin it has no build for gets defaults' CPU pytorch. Returns the
    channel item listed first, or None."""
    names = list(i.file.channel_names)
    torch = i.deps.get("pytorch") or i.misnamed_torch  # `torch=1.9` is read (and fixed) as pytorch
    if "pytorch" not in names or "cudatoolkit" not in i.deps or i.selectors:
        return None
    if torch is None or torch.spec is None or torch.spec.channel is not None:
        return None
    defaults = set(facts()["defaults"]["names"])
    first = next((c for c in i.file.channels or () if c.name in defaults), None)
    if first is None or names.index(first.name) > names.index("pytorch"):
        return None
    return first


def wants_pytorch_channel(i: Intent) -> bool:
    """The file's torch is the pytorch channel's: it comes from there, or the file asks for that channel's
    build (pytorch-cuda/cpuonly with the channel listed, or the classic defaults-first cudatoolkit file)."""
    if i.era == "pytorch":
        return True
    names = i.file.channel_names
    return bool((i.selectors or i.cuda_packages) and "pytorch" in names) or defaults_first(i) is not None


# ------------------------------------------------------------------------------------------------------------
# TC601 channels missing


def channels_missing(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    if not i.has_conda_torch and i.misnamed_torch is None:
        return
    if ctx.file.channels:
        return
    torch = i.deps.get("pytorch")
    if torch is not None and torch.spec is not None and torch.spec.channel:
        return
    if i.selectors:  # they exist only on the pytorch channel: TC604 says it more precisely
        return
    entries = [_at(d) for d in ctx.file.deps if d.name in CONDA_TORCH]
    yield finding(
        "TC601",
        Severity.WARNING,
        evidence=_ev(ctx, channels=None, entries=entries),
        fixes=[
            Fix("file", msg("TC601.fix"), (f"{ctx.command} spec fix {shlex.quote(ctx.file.path)} -p <env> --write",))
        ],
        file=ctx.file.path,
    )


# ------------------------------------------------------------------------------------------------------------
# TC602 channel order


def channel_order(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    names = list(ctx.file.channel_names)
    wants_pytorch_channel = (
        bool(i.selectors or i.cuda_packages) or i.torch_channel == "pytorch" and i.torch_channel_how == "prefix"
    )
    if wants_pytorch_channel and "pytorch" in names:
        torch = i.deps.get("pytorch")
        prefixed = torch is not None and torch.spec is not None and torch.spec.channel_name == "pytorch"
        # `pytorch=1.11.0=py3.10_cpu_0` names a build only the pytorch channel has: the order cannot pick another
        prefixed = prefixed or bool(torch is not None and torch.spec is not None and _channel_build(torch.spec.build))
        first = next((c for c in ctx.file.channels or () if c.name in ("conda-forge", "defaults", "anaconda")), None)
        if not prefixed and first is not None and names.index(first.name) < names.index("pytorch"):
            yield finding(
                "TC602",
                Severity.ERROR,
                variant="pytorch",
                evidence=_ev(
                    ctx, channels=_channels_ev(ctx), selectors=[_at(d) for d in (*i.selectors, *i.cuda_packages)]
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
            evidence=_ev(
                ctx,
                channels=_channels_ev(ctx),
                torch=_at(i.deps.get("pytorch") or i.misnamed_torch),  # type: ignore[arg-type]
                cudatoolkit=_at(dep),
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
    if "pytorch-cuda" in i.deps and "nvidia" in names and "conda-forge" in names and _pytorch_cuda_major(i) != 11:
        if names.index("conda-forge") < names.index("nvidia"):
            yield finding(
                "TC602",
                Severity.WARNING,
                variant="nvidia",
                evidence=_ev(ctx, channels=_channels_ev(ctx), entry=_at(i.deps["pytorch-cuda"])),
                fixes=[ctx.rewrite_fix("TC602.nvidia.fix")],
            )


# ------------------------------------------------------------------------------------------------------------
# TC603 nodefaults


def nodefaults(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    if not i.has_torch or ctx.file.channels is None:
        return
    names = set(ctx.file.channel_names)
    defaults_like = names & set(facts()["defaults"]["names"])
    if "conda-forge" in names and defaults_like:
        yield finding(
            "TC603",
            Severity.WARNING,
            variant="mixed",
            evidence=_ev(ctx, channels=_channels_ev(ctx)),
            fixes=[ctx.rewrite_fix("TC603.mixed.fix")]
            if i.era == "conda-forge"
            else [Fix("file", msg("TC603.mixed.fix_manual"))],
        )
        return
    if "nodefaults" in names or defaults_like or i.era not in ("conda-forge", "pytorch", "pip"):
        return
    # nodefaults needs a base channel for python and the rest; with none listed the choice between Anaconda's
    # defaults (what the pytorch channel's builds were made with; Anaconda's terms apply) and conda-forge is
    # the user's: offered, never made silently
    has_base = "conda-forge" in names or i.era == "conda-forge"
    yield finding(
        "TC603",
        Severity.WARNING,
        variant="missing",
        evidence=_ev(ctx, channels=_channels_ev(ctx)),
        fixes=[ctx.rewrite_fix("TC603.missing.fix")]
        if has_base
        else [
            Fix(
                "file",
                msg("TC603.missing.fix_choose"),
                (
                    f"{ctx.command} spec fix {shlex.quote(ctx.file.path)} --base-channel defaults --write",
                    f"{ctx.command} spec fix {shlex.quote(ctx.file.path)} --base-channel conda-forge --write",
                ),
            )
        ],
    )


# ------------------------------------------------------------------------------------------------------------
# TC604 a package without the channel that publishes it


def _has_channel(ctx: RuleContext, channel: str) -> bool:
    if channel in ctx.file.channel_names:
        return True
    return any(d.spec is not None and d.spec.channel_name == channel for d in ctx.file.deps)


def channel_for_package(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    # pytorch-nightly / pytorch-test carry their own pytorch-cuda and cpuonly
    selector_channels = ("pytorch", "pytorch-nightly", "pytorch-test", "pytorch-lts")
    unprefixed = [d for d in i.selectors if d.spec is None or d.spec.channel_name not in selector_channels]
    listed = any(c in ctx.file.channel_names for c in selector_channels)
    if unprefixed and not listed:
        yield finding(
            "TC604",
            Severity.ERROR,
            variant="pytorch",
            evidence=_ev(ctx, entries=[_at(d) for d in unprefixed], channels=_channels_ev(ctx)),
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
            evidence=_ev(ctx, entry=_at(pc), channels=_channels_ev(ctx)),
            fixes=[ctx.rewrite_fix("TC604.nvidia.fix")],
        )


# ------------------------------------------------------------------------------------------------------------
# TC605 a version / package the named channel never had


def not_on_channel(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    if i.misnamed_torch is not None:
        yield finding(
            "TC605",
            Severity.ERROR,
            variant="pip_name",
            evidence=_ev(ctx, entry=_at(i.misnamed_torch)),
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
                evidence=_ev(
                    ctx,
                    line=c.where.line,
                    channel=c.text,
                    entries=[_at(d) for d in ctx.file.deps if d.spec is not None and d.spec.channel_name == c.name],
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
                evidence=_ev(
                    ctx,
                    entry=_at(torch),
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
                evidence=_ev(ctx, entry=_at(pc), published=list(published)),
                fixes=[Fix("file", msg("TC605.pytorch_cuda_version.fix", published=", ".join(published)))],
                cuda=cuda,
            )
        elif cuda and torch is not None and torch.spec is not None:
            minor = torch.spec.minor
            release = torch_release(minor) if minor else None
            if release is not None and release.pytorch_cuda and cuda not in release.pytorch_cuda:
                yield finding(
                    "TC605",
                    Severity.ERROR,
                    variant="pytorch_cuda_for_torch",
                    evidence=_ev(ctx, entries=[_at(torch), _at(pc)], published_for_torch=list(release.pytorch_cuda)),
                    fixes=[
                        Fix(
                            "file",
                            msg(
                                "TC605.pytorch_cuda_for_torch.fix", options=", ".join(release.pytorch_cuda), torch=minor
                            ),
                        )
                    ],
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
            evidence=_ev(ctx, entry=_at(dep), torch=torch_version, built_for=options),
            fixes=[Fix("file", msg("TC605.cuda_package_for_torch.fix", options=options, torch=torch_version))],
            package=dep.name,
            torch=torch_version,
            options=options,
        )


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
    yield finding(
        "TC605",
        Severity.ERROR,
        variant="cudatoolkit_for_torch",
        evidence=_ev(ctx, entries=[_at(d) for d in (torch, dep) if d is not None], built_for=list(builds)),
        fixes=[Fix("file", msg("TC605.cudatoolkit_for_torch.fix", options=", ".join(builds), torch=torch_version))],
        cuda=cuda,
        torch=torch_version,
        options=", ".join(builds),
    )


# ------------------------------------------------------------------------------------------------------------
# TC606 conda torch and pip torch in one file


def _pip_satisfied_by(item: PipItem, version: str | None) -> bool:
    """Would pip, running ``install -U``, leave a conda-installed torch ``version`` alone?"""
    exact = item.line.exact
    return bool(version and exact and exact == version)


def conda_and_pip(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    conda_names = [n for n in CONDA_TORCH if n in i.deps]
    if not conda_names and i.misnamed_torch is None:
        yield from _conda_dependency(ctx)
        return
    pairs = {"pytorch": "torch", "torchvision": "torchvision", "torchaudio": "torchaudio"}
    torch_conda = i.deps.get("pytorch") or i.misnamed_torch
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
            evidence=_ev(ctx, conda=[_at(d) for d, _ in found], pip=[_at(p) for _, p in found]),
            fixes=[ctx.rewrite_fix("TC606.fix", pip=", ".join(p.text for _, p in found))],
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
            if item is not None:
                others.append((name, item))
        if others:
            names = ", ".join(n for n, _ in others)
            yield finding(
                "TC606",
                Severity.WARNING,
                variant="cross",
                evidence=_ev(ctx, torch=_at(torch_conda), others=[_at(item) for _, item in others]),
                fixes=[Fix("file", msg("TC606.cross.fix", package=names))],
                package=names,
                torch_manager="conda",
                other_manager="pip",
            )


def _conda_dependency(ctx: RuleContext) -> Iterator[Finding]:
    """torch from pip, and a conda package that depends on pytorch (pytorch-lightning, torchmetrics ...): the
    solve installs a conda pytorch for it, then `pip install -U` puts PyPI's torch over conda's files."""
    i = ctx.intent
    item = i.pip.get("torch")
    if item is None:
        return
    needs = set(facts().get("conda_depends_on_pytorch", {}).get("packages", ()))
    dep = next((d for d in ctx.file.deps if d.name in needs), None)
    if dep is None:
        return
    yield finding(
        "TC606",
        Severity.ERROR,
        variant="conda_dependency",
        evidence=_ev(ctx, conda=_at(dep), pip=_at(item)),
        fixes=[Fix("file", msg("TC606.conda_dependency.fix", package=dep.name, pip=item.text))],
        package=dep.name,
        pip=item.text,
    )


# ------------------------------------------------------------------------------------------------------------
# TC607 pip CUDA torch and the wheel index


def _carried(name: str) -> bool:
    pip = facts()["pip"]
    return name in pip["index_carries"] or name.startswith(tuple(pip["index_carries_prefixes"]))


def pip_index(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    if not i.pip:
        return
    indexes = [(item, index) for item, index in i.indexes]
    find_links_all = any(index.tag is None for _, index in indexes)
    tags = {index.tag for _, index in indexes if index.tag}
    tagged = [item for item in i.pip.values() if item.line.local_tag and not item.line.url]
    if tagged and not indexes:
        tag = tagged[0].line.local_tag
        offered = pip_tags_offered(i)
        # two variants asked for (torch +cu121, torchvision +cu118): one index would leave the other a mismatch
        several = len({item.line.local_tag for item in tagged}) > 1
        conflict = several or (
            offered is not None and bool(tag) and any(t.line.local_tag not in offered for t in tagged)
        )
        yield finding(
            "TC607",
            Severity.ERROR,
            variant="missing",
            evidence=_ev(ctx, entries=[_at(item) for item in tagged]),
            # a tag the file's torch was never built for (torchaudio==0.13.0+cu117 beside torch==2.4.1): adding its
            # index would only move the error (TC607 not_offered); which release to keep is the user's choice
            fixes=[
                Fix(
                    "file",
                    msg(
                        "TC607.missing.fix_several",
                        tags=", ".join(sorted({f"+{t.line.local_tag}" for t in tagged})),
                    ),
                )
                if several
                else Fix(
                    "file",
                    msg("TC607.missing.fix_conflict", tag=tag, torch=i.torch_version, offered=", ".join(offered or ())),
                )
                if conflict
                else ctx.rewrite_fix("TC607.missing.fix", url=f"https://download.pytorch.org/whl/{tag}")
            ],
            requirement=", ".join(item.text for item in tagged),
            tag=tag,
        )
    for item in i.pip.values():
        tag = item.line.local_tag
        if item.line.url or not indexes:
            continue
        if tag and tags and tag not in tags and not find_links_all:
            first_item, first_index = indexes[0]
            # the rewrite points the index at the pins' tag: only when they agree on one that torch has
            variants = {t.line.local_tag for t in tagged}
            offered = pip_tags_offered(i)
            choice = len(variants) > 1 or (offered is not None and tag not in offered)
            yield finding(
                "TC607",
                Severity.ERROR,
                variant="mismatch",
                evidence=_ev(ctx, entry=_at(item), index=_at(first_item)),
                fixes=[
                    Fix("file", msg("TC607.missing.fix_several", tags=", ".join(sorted(f"+{v}" for v in variants))))
                    if choice
                    else ctx.rewrite_fix("TC607.mismatch.fix", tag=tag)
                ],
                requirement=item.text,
                tag=tag,
                index_tag=first_index.tag,
            )
    torch_version = i.torch_version
    release = torch_release(torch_version) if torch_version else None
    if release is None and "torch" in i.pip:
        yield from _range_not_offered(ctx, indexes)
    if release is not None and "torch" in i.pip:
        for item, index in indexes:
            if (
                index.tag
                and index.tag.startswith("cu")
                and not index.nightly
                and release.offers_pip_cuda(index.tag) is False
            ):
                yield finding(
                    "TC607",
                    Severity.ERROR,
                    variant="not_offered",
                    evidence=_ev(ctx, index=_at(item), torch=_at(i.pip["torch"]), offered=list(release.pip_cuda)),
                    fixes=[Fix("file", msg("TC607.not_offered.fix", offered=", ".join(release.pip_cuda)))],
                    tag=index.tag,
                    torch=torch_version,
                )
    main_index = [(item, index) for item, index in indexes if item.line.option == "--index-url"]
    # `--extra-index-url https://pypi.org/simple` (or any non-torch index) next to it gives PyPI back
    other_extra = [
        item
        for item in ctx.file.pip or ()
        if item.line.kind == "option"
        and item.line.option == "--extra-index-url"
        and torch_index(item.line.value) is None
    ]
    if main_index:
        others = [p for p in ctx.file.pip_requirements() if p.line.name and not _carried(p.line.name)]
        if others and not other_extra:
            item, _ = main_index[0]
            yield finding(
                "TC607",
                Severity.WARNING,
                variant="hides_pypi",
                evidence=_ev(ctx, index=_at(item), others=[_at(p) for p in others]),
                fixes=[ctx.rewrite_fix("TC607.hides_pypi.fix")],
                packages=", ".join(p.line.name or p.text for p in others[:5]),
            )
    extra = [(item, index) for item, index in indexes if item.line.option == "--extra-index-url" and index.tag]
    if not (extra and not main_index) and main_index and other_extra and main_index[0][1].tag:
        extra = main_index[:1]  # the torch index is the main one, PyPI an extra: the same race for the version
    if extra and (not main_index or other_extra):
        # an exact pin is enough: pip prefers 2.5.1+cu124 over PyPI's 2.5.1 for ==2.5.1 (local versions sort higher)
        loose = [item for item in i.pip.values() if not item.line.url and not item.line.exact]
        if loose:
            item, index = extra[0]
            yield finding(
                "TC607",
                Severity.WARNING,
                variant="unpinned_extra",
                evidence=_ev(ctx, index=_at(item), entries=[_at(p) for p in loose]),
                fixes=[Fix("file", msg("TC607.unpinned_extra.fix", tag=index.tag, example=_example(index.tag)))],
                tag=index.tag,
            )


def pip_tags_offered(i: Intent) -> tuple[str, ...] | None:
    """The wheel tags download.pytorch.org has for the torch the file pins exactly (cu118, rocm6.1, cpu ...):
    the conda torch when there is one, else the pip torch; None when torch is not pinned exactly or unknown."""
    item = i.pip.get("torch")
    conda = i.deps.get("pytorch") or i.misnamed_torch
    if conda is not None and conda.spec is not None:
        # pip companions beside a conda torch pair with that one (the fix removes a pip duplicate of it), pinned
        # as written or as the frozen channel resolves it (what the fix writes)
        version = conda.spec.exact or (i.resolution.version if i.resolution is not None else None)
    elif item is not None and item.line.exact:
        version = item.line.exact.split("+", 1)[0]
    else:
        version = None
    return tags_offered(version) if version else None


def tags_offered(version: str) -> tuple[str, ...] | None:
    """The wheel tags download.pytorch.org has for torch ``version`` (exact), None when its release is unknown."""
    from conda_torchcheck.envspec.history import rocm_tags

    release = torch_release(version)
    if release is None or not release.pip_cuda_known:
        return None
    try:
        from conda_torchcheck.knowledge import releases

        tags = set(releases.pip_index_tags(version))
    except (ImportError, KeyError, OSError):  # pragma: no cover - shipped with the package
        tags = set()
    tags |= set(release.pip_cuda) | set(release.pip_rocm) | set(rocm_tags(version)) | {"cpu"}
    return tuple(sorted(tags))


def _range_not_offered(ctx: RuleContext, indexes) -> Iterator[Finding]:
    """A ranged pip torch (``torch>=2.7.0``) with a CUDA index no release in that range was built for
    (2.7 has cu118/cu126/cu128, not cu121): "No matching distribution found"."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from conda_torchcheck.envspec.history import known_minors

    item = ctx.intent.pip["torch"]
    spec = item.line.version_spec
    if not spec or item.line.url:
        return
    try:
        allowed = SpecifierSet(spec)
    except InvalidSpecifier:
        return
    minors = [m for m in known_minors() if allowed.contains(f"{m}.0") or allowed.contains(f"{m}.1")]
    releases = [torch_release(m) for m in minors]
    if not minors or any(r is None or not r.pip_cuda for r in releases):
        return
    for opt, index in indexes:
        tag = index.tag
        if not tag or not tag.startswith("cu") or index.nightly:
            continue
        if any(r.offers_pip_cuda(tag) is not False for r in releases if r is not None):
            continue
        offered = sorted({t for r in releases if r is not None for t in r.pip_cuda})
        yield finding(
            "TC607",
            Severity.ERROR,
            variant="not_offered",
            evidence=_ev(ctx, index=_at(opt), torch=_at(item), offered=offered),
            fixes=[Fix("file", msg("TC607.not_offered.fix", offered=", ".join(offered)))],
            tag=tag,
            torch=item.line.specifier,
        )


def _example(tag: str | None) -> str:
    """A pin that exists for ``tag`` (the newest release whose wheels carry it), for the fix text."""
    return (example_pin(tag) if tag else None) or f"torch==<version>+{tag}"


# ------------------------------------------------------------------------------------------------------------
# TC608 torch / torchvision / torchaudio that do not pair


def _companion_version(dep: CondaDep | PipItem) -> str | None:
    if isinstance(dep, CondaDep):
        if dep.spec is None:
            return None
        return dep.spec.exact or dep.spec.minor
    exact = dep.line.exact
    if exact:
        return exact.split("+", 1)[0]
    spec = dep.line.version_spec
    return minor_of_spec(spec.lstrip("=")) if spec.startswith("==") else None


def triple(ctx: RuleContext) -> Iterator[Finding]:
    """torchvision/torchaudio pinned to a release built for another torch. One finding for the family (the
    torchvision and torchaudio of another release are one mistake), reported on the companions' lines. The
    fix is a choice, not a rewrite: which of the two explicit pins is the wrong one only the user knows, and
    rewriting a pin to another version would not keep the file's constraint (issue 13: say so instead)."""
    i = ctx.intent
    torch_version = i.torch_version
    if not torch_version or torch_release(torch_version) is None:
        return
    torch_dep: CondaDep | PipItem | None = i.deps.get("pytorch") or i.misnamed_torch or i.pip.get("torch")
    wrong: list[tuple[str, CondaDep | PipItem, str, str]] = []  # (package, entry, version, expected)
    for name in ("torchvision", "torchaudio"):
        dep: CondaDep | PipItem | None = i.deps.get(name) or i.pip.get(name)
        if dep is None:
            continue
        version = _companion_version(dep)
        if not version:
            continue
        verdict = companion_ok(name, torch_version, version)
        if verdict is False and "dev" in torch_version:
            # nightlies pair by minor (and date): 0.16.0.dev20230607 with 2.1.0.dev20230607
            verdict = ".".join(version.split(".")[:2]) == (companion_for(name, torch_version)[0] or "")
        if verdict is False:
            want_minor, want_exact = companion_for(name, torch_version, conda=isinstance(dep, CondaDep))
            wrong.append((name, dep, version, want_exact or want_minor or "?"))
    if wrong:
        entries = ", ".join(f"{n} {v}" for n, _, v, _ in wrong)
        expected = ", ".join(f"{n} {e}" for n, _, _, e in wrong)
        paired = torch_for_companions([(n, v) for n, _, v, _ in wrong]) if "dev" not in torch_version else None
        fix = (
            msg("TC608.fix_choose", expected=expected, torch=torch_version, entries=entries, paired=paired)
            if paired
            else msg("TC608.fix", expected=expected, torch=torch_version)
        )
        yield finding(
            "TC608",
            Severity.ERROR,
            evidence=_ev(
                ctx,
                torch=_at(torch_dep) if torch_dep else None,
                companions=[_at(d) for _, d, _, _ in wrong],
                pairs_with=paired,
            ),
            fixes=[Fix("file", fix)],
            entries=entries,
            torch=torch_version,
            expected=expected,
        )

    yield from _bounds(ctx, torch_version, torch_dep)


def _bounds(ctx: RuleContext, torch_version: str, torch_dep: CondaDep | PipItem | None) -> Iterator[Finding]:
    """Entries built for one torch (pyg channel packages, +pt24cu121 wheels, a find-links page named for one
    torch release) against the torch the file pins: they cannot load into another torch's ABI."""
    i = ctx.intent
    for bound in i.bounds:
        if bound.allows(torch_version):
            continue
        yield finding(
            "TC608",
            Severity.ERROR,
            variant="extension" if bound.kind == "minor" else "extension_max",
            evidence=_ev(
                ctx, torch=_at(torch_dep) if torch_dep else None, other={"line": bound.line, "entry": bound.text}
            ),
            fixes=[Fix("file", msg("TC608.extension.fix", minor=bound.minor, entry=bound.text))],
            entry=bound.text,
            minor=bound.minor,
            torch=torch_version,
        )


# ------------------------------------------------------------------------------------------------------------
# TC609 CPU and CUDA at once


def _located(ctx: RuleContext, text: str) -> dict[str, Any]:
    """An entry's text with the line it is on (the first one written so)."""
    for item in (*ctx.file.deps, *(ctx.file.pip or ())):
        if item.text == text:
            return _at(item)
    return {"line": 0, "entry": text}


def cpu_and_cuda(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    if i.variant != "conflict":
        return
    cpu = [e for v, e in i.variant_signals if v == "cpu"]
    cuda = [e for v, e in i.variant_signals if v == "cuda"]
    yield finding(
        "TC609",
        Severity.ERROR,
        evidence=_ev(ctx, cpu=[_located(ctx, e) for e in cpu], cuda=[_located(ctx, e) for e in cuda]),
        fixes=[Fix("file", msg("TC609.fix", cpu=", ".join(cpu), cuda=", ".join(cuda)))],
        cpu=cpu[0],
        cuda=cuda[0],
    )


# ------------------------------------------------------------------------------------------------------------
# TC610 Python outside what that torch supports


def python_range(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    if i.python is None or not i.python_minors:
        return
    res = i.resolution
    if res is not None and res.version is None and res.without_python is not None:
        yield finding(
            "TC610",
            Severity.ERROR,
            variant="frozen",
            evidence=_ev(ctx, python=_at(i.python), newest_match=res.without_python),
            fixes=[Fix("file", msg("TC610.frozen.fix", version=res.without_python or "?"))],
            python=i.python.spec.version if i.python.spec else i.python.text,
            version=res.without_python or "?",
        )
        return
    torch_version = i.torch_version
    release = torch_release(torch_version) if torch_version else None
    if release is None:
        return
    if release_python_ok(release, i.python_minors):
        return
    torch_dep = i.deps.get("pytorch") or i.misnamed_torch or i.pip.get("torch")
    yield finding(
        "TC610",
        Severity.ERROR,
        evidence=_ev(
            ctx, python=_at(i.python), torch=_at(torch_dep) if torch_dep else None, supported=list(release.python)
        ),
        fixes=[Fix("file", msg("TC610.fix", low=release.python[0], high=release.python[1]))],
        python=i.python.spec.version if i.python.spec else i.python.text,
        torch=torch_version,
        low=release.python[0],
        high=release.python[1],
    )


# ------------------------------------------------------------------------------------------------------------
# TC611 unpinned torch family


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
    pip_loose: list[PipItem] = []
    for name in PIP_TORCH:
        item = i.pip.get(name)
        if item is None or item.line.url or item.line.specifier:
            continue
        if name != "torch" and ("torch" in i.pip or conda_pytorch):
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
            evidence=_ev(ctx, entries=[_at(d) for d in conda_loose], resolves_to=i.resolution.version),
            fixes=[ctx.rewrite_fix("TC611.frozen.fix", version=i.resolution.version)],
            packages=", ".join(d.spec.name for d in conda_loose if d.spec),
            version=i.resolution.version,
        )
        conda_loose = []
    loose: list[CondaDep | PipItem] = [*conda_loose, *pip_loose]
    if loose:
        names = ", ".join(d.spec.name if isinstance(d, CondaDep) and d.spec else (d.line.name or d.text) for d in loose)
        yield finding(
            "TC611",
            Severity.WARNING,
            evidence=_ev(ctx, entries=[_at(d) for d in loose]),
            fixes=[fix_with_env],
            packages=names,
        )


# ------------------------------------------------------------------------------------------------------------
# TC612 torch family from different builders


def family_channels(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    torch_builder = builder_of(i.torch_channel)
    torch_dep = i.deps.get("pytorch")
    torch_prefixed = torch_dep is not None and torch_dep.spec is not None and torch_dep.spec.channel is not None
    by_order = next((c for c in ctx.file.channel_names if c in PYTORCH_PUBLISHERS), None)
    mixed: list[tuple[str, CondaDep, str]] = []
    by_build: list[CondaDep] = []
    if torch_builder is not None:
        for name in ("torchvision", "torchaudio", "libtorch"):
            dep = i.deps.get(name)
            if dep is None or dep.spec is None:
                continue
            built = build_builder(dep.spec.build)
            # a torch pinned to a hashed build is itself conda-forge's/Anaconda's, whatever the order says
            torch_built = build_builder(torch_dep.spec.build) if torch_dep is not None and torch_dep.spec else None
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
                mismatch = by_order != i.torch_channel and (
                    builder_of(by_order) != torch_builder or "nightly" in (i.torch_channel or "") + by_order
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
                evidence=_ev(
                    ctx,
                    torch=_at(torch) if torch else None,
                    others=[_at(d) for _, d, _ in mixed],
                    torch_channel=i.torch_channel,
                ),
                fixes=[ctx.rewrite_fix("TC612.family.fix", package=packages, torch_channel=i.torch_channel)],
                package=packages,
                channel=mixed[0][2],
                torch_channel=i.torch_channel,
            )
        if by_build:
            torch = i.deps.get("pytorch")
            packages = ", ".join(d.text for d in by_build)
            yield finding(
                "TC612",
                Severity.ERROR,
                variant="build",
                evidence=_ev(
                    ctx,
                    torch=_at(torch) if torch else None,
                    others=[_at(d) for d in by_build],
                    torch_channel=i.torch_channel,
                ),
                # the build string names another builder's package: only the user can say which build to keep
                fixes=[Fix("file", msg("TC612.build.fix", package=packages, torch_channel=i.torch_channel))],
                package=packages,
                torch_channel=i.torch_channel,
            )
    # a file that needs pytorch-cuda needs nvidia too (TC602 asks to put pytorch first): never say "drop it"
    names = list(ctx.file.channel_names)
    # nvidia after conda-forge only supplies what conda-forge lacks (cuda-nvtx 11.8 ...): intended, silent;
    # before it (or as nvidia::) it replaces the CUDA libraries conda-forge's torch is built against
    nvidia_first = "nvidia" in names and "conda-forge" in names and names.index("nvidia") < names.index("conda-forge")
    prefixed = any(d.spec is not None and d.spec.channel_name == "nvidia" for d in ctx.file.deps)
    if i.era == "conda-forge" and (nvidia_first or prefixed) and not wants_pytorch_channel(i):
        where = [{"line": c.where.line, "channel": c.text} for c in ctx.file.channels or () if c.name == "nvidia"]
        where += [_at(d) for d in ctx.file.deps if d.spec is not None and d.spec.channel_name == "nvidia"]
        yield finding(
            "TC612",
            Severity.WARNING,
            variant="nvidia",
            evidence=_ev(ctx, nvidia=where),
            fixes=[ctx.rewrite_fix("TC612.nvidia.fix")],
        )


# ------------------------------------------------------------------------------------------------------------
# TC613 cudatoolkit where the torch uses something else


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
    if not versions:
        return False
    cudas = releases.conda_forge_builds(versions[-1]).get("linux-64", ())
    return any(_major(c) is not None and (_major(c) or 0) >= 12 for c in cudas if c != "cpu")


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


def cudatoolkit(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    dep = i.deps.get("cudatoolkit")
    if dep is None or dep.spec is None:
        return
    version = dep.spec.exact or dep.spec.minor or ""
    major = _major(version)
    if wants_pytorch_channel(i):
        torch_version = i.torch_version
        from_minor = facts()["pytorch_channel"]["pytorch_cuda_from"]
        key, base = version_key(torch_version or ""), version_key(from_minor)
        if key is None or base is None or key < base:
            return  # before 1.13 cudatoolkit is the selector (TC605 checks the build existed)
        if "pytorch-cuda" in i.deps:
            # both selectors: pytorch-cuda decides, cudatoolkit only adds a second CUDA copy
            yield finding(
                "TC613",
                Severity.WARNING,
                variant="redundant",
                evidence=_ev(ctx, entry=_at(dep), pytorch_cuda=_at(i.deps["pytorch-cuda"]), torch=torch_version),
                fixes=[ctx.rewrite_fix("TC613.redundant.fix")],
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
            evidence=_ev(ctx, entry=_at(dep), torch=torch_version, pytorch_cuda_for_torch=options),
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
        last = facts()["conda_forge"]["cudatoolkit_last_major"]
        cuda_dep = i.deps.get("cuda-version") or i.deps.get("pytorch-cuda")
        cuda_major = None
        if cuda_dep is not None and cuda_dep.spec is not None:
            cuda_major = _major(cuda_dep.spec.exact or cuda_dep.spec.minor or (cuda_dep.spec.version or "").strip("=*"))
        if major is not None and major > last:
            yield finding(
                "TC613",
                Severity.ERROR,
                variant="conda_forge",
                evidence=_ev(ctx, entry=_at(dep)),
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
                evidence=_ev(ctx, entry=_at(dep), torch=_at(i.deps["pytorch"]) if "pytorch" in i.deps else None),
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
                evidence=_ev(ctx, entry=_at(dep), cuda=_at(cuda_dep)),
                fixes=[ctx.rewrite_fix("TC613.conda_forge.fix")],
                version=version or "*",
            )


# ------------------------------------------------------------------------------------------------------------
# TC614 the conda-forge variant chosen by the machine


def variant_implicit(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    torch = i.deps.get("pytorch")
    if i.era != "conda-forge" or torch is None or torch.spec is None:
        return
    if torch.spec.build or "pytorch-gpu" in i.deps or "pytorch-cpu" in i.deps:
        return
    if i.selectors:  # pytorch-cuda / cpuonly on conda-forge: TC604 already says what to write instead
        return
    if i.variant == "cuda":
        signal = next(e for v, e in i.variant_signals if v == "cuda")
        yield finding(
            "TC614",
            Severity.WARNING,
            variant="cuda_not_forced",
            evidence=_ev(ctx, entry=_at(torch), cuda_signal=signal),
            fixes=[ctx.rewrite_fix("TC614.cuda_not_forced.fix")],
            signal=signal,
        )
    # no variant signal at all: conda-forge then picks the build from the solving machine's __cuda, which is
    # conda-forge's design for "whatever this machine can run" — a choice, not a defect: silent


RULES: tuple[Callable[[RuleContext], Iterator[Finding]], ...] = (
    channels_missing,
    channel_order,
    nodefaults,
    channel_for_package,
    not_on_channel,
    conda_and_pip,
    pip_index,
    triple,
    cpu_and_cuda,
    python_range,
    unpinned,
    family_channels,
    cudatoolkit,
    variant_implicit,
)


def check_file(file: EnvFile, *, command: str = "conda-torchcheck") -> list[Finding]:
    """Every TC6xx finding for ``file``, errors first, in file order within a severity."""
    intent = analyse(file)
    if not intent.has_torch:
        return []
    ctx = RuleContext(intent, command)
    found: list[Finding] = []
    for rule in RULES:
        for f in rule(ctx):
            found.append(f if f.check else _with_check(f, rule.__name__))
    return sorted(found, key=lambda f: (f.severity.rank, _first_line(f), f.id))


def _with_check(f: Finding, name: str) -> Finding:
    from dataclasses import replace

    return replace(f, check=f"envspec.{name}")


def _first_line(f: Finding) -> int:
    lines: list[int] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if isinstance(value.get("line"), int):
                lines.append(value["line"])
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(dict(f.evidence))
    return min(lines) if lines else 0


def cuda_tag_version(tag: str | None) -> str | None:  # re-exported for the rewriter
    return cuda_of_tag(tag)
