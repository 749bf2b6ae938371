"""TC608: torch / torchvision / torchaudio that do not pair."""

from __future__ import annotations

import re
from collections.abc import Iterator

from conda_torchcheck.envspec.history import release as torch_release
from conda_torchcheck.envspec.intent import build_builder, companion_for, companion_ok, torch_for_companions
from conda_torchcheck.envspec.matchspec import minor_of_spec
from conda_torchcheck.envspec.parse import CondaDep, PipItem
from conda_torchcheck.envspec.rules._common import Rule, RuleContext, at, ev
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg


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


def _dev_date(version: str) -> str | None:
    """The nightly's date (``20250824`` of ``2.9.0.dev20250824+cu128``), or None."""
    m = re.search(r"\.dev(\d{8})", version)
    return m.group(1) if m else None


def _solved_pair(torch_dep: CondaDep | PipItem | None, dep: CondaDep | PipItem) -> bool:
    return all(
        isinstance(d, CondaDep) and d.spec is not None and build_builder(d.spec.build) == "base"
        for d in (torch_dep, dep)
    )


def triple(ctx: RuleContext) -> Iterator[Finding]:
    """torchvision/torchaudio pinned to a release built for another torch. One finding for the family (the
    torchvision and torchaudio of another release are one mistake), reported on the companions' lines. The
    fix is a choice, not a rewrite: which of the two explicit pins is the wrong one only the user knows, and
    rewriting a pin to another version would not keep the file's constraint (issue 13: say so instead)."""
    i = ctx.intent
    torch_version = i.torch_version
    if not torch_version:
        yield from _companions_apart(ctx)
        return
    if torch_release(torch_version) is None:
        return
    torch_dep: CondaDep | PipItem | None = i.deps.get("pytorch") or i.misnamed_torch or i.pip.get("torch")
    pip_torch = i.pip.get("torch")
    pip_exact = pip_torch.line.exact.split("+", 1)[0] if pip_torch is not None and pip_torch.line.exact else None
    wrong: list[tuple[str, CondaDep | PipItem, str, str]] = []  # (package, entry, version, expected)
    for name in ("torchvision", "torchaudio"):
        dep: CondaDep | PipItem | None = i.deps.get(name) or i.pip.get(name)
        if dep is None:
            continue
        version = _companion_version(dep)
        if not version:
            continue
        if isinstance(dep, PipItem) and pip_exact and pip_exact != torch_version and torch_release(pip_exact):
            # a pip companion beside pip's own torch pairs with that torch: `pip install -U` puts it over conda's
            # (TC606 says so), so what ends up beside torchvision 0.24.0 is pip's torch 2.9.0, not conda's 2.5.1
            if companion_ok(name, pip_exact, version) is False:
                want_minor, want_exact = companion_for(name, pip_exact)
                wrong.append((name, dep, version, want_exact or want_minor or "?"))
            continue
        verdict = companion_ok(name, torch_version, version)
        if verdict is False and _solved_pair(torch_dep, dep):
            # both pinned to conda-build's hashed builds (an export: the solver put them together, and conda-forge's
            # torchvision 0.13.0 build accepts pytorch 1.12.1): only another minor is a real mismatch
            verdict = ".".join(version.split(".")[:2]) == (companion_for(name, torch_version)[0] or "")
        if verdict is False and "dev" in torch_version:
            # nightlies pair by minor (and date): 0.16.0.dev20230607 with 2.1.0.dev20230607; the nightly index builds
            # the family together each day, so one date is one set even where a companion's version file lagged
            # (torchaudio 2.8.0.dev20250824 beside torch 2.9.0.dev20250824)
            verdict = ".".join(version.split(".")[:2]) == (companion_for(name, torch_version)[0] or "") or (
                _dev_date(version) is not None and _dev_date(version) == _dev_date(torch_version)
            )
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
            evidence=ev(
                ctx,
                torch=at(torch_dep) if torch_dep else None,
                companions=[at(d) for _, d, _, _ in wrong],
                pairs_with=paired,
            ),
            fixes=[Fix("file", fix)],
            entries=entries,
            torch=torch_version,
            expected=expected,
        )

    yield from _bounds(ctx, torch_version, torch_dep)
    yield from _cuda_skew(ctx, torch_version)


def _companions_apart(ctx: RuleContext) -> Iterator[Finding]:
    """No torch in the file, and a torchvision and a torchaudio built for different torch releases: each
    requires its own torch (pip: ``torch==X``; conda: the build's ``pytorch X`` dependency), so no torch
    satisfies both and the solve fails (pip's ResolutionImpossible)."""
    i = ctx.intent
    pinned: list[tuple[str, CondaDep | PipItem, str, str]] = []  # (package, entry, version, the torch it is for)
    for name in ("torchvision", "torchaudio"):
        dep: CondaDep | PipItem | None = i.deps.get(name) or i.pip.get(name)
        version = _companion_version(dep) if dep is not None else None
        built_for = torch_for_companions([(name, version)]) if dep is not None and version else None
        if dep is None or version is None or built_for is None:
            return  # unpinned, or a release the tables do not know: nothing to judge
        pinned.append((name, dep, version, built_for))
    if torch_for_companions([(n, v) for n, _, v, _ in pinned]) is not None:
        return
    (vision, vision_dep, vision_version, vision_torch), (audio, audio_dep, audio_version, audio_torch) = pinned
    names = {
        "vision": f"{vision} {vision_version}",
        "audio": f"{audio} {audio_version}",
        "vision_torch": vision_torch,
        "audio_torch": audio_torch,
    }
    yield finding(
        "TC608",
        Severity.ERROR,
        variant="companions",
        evidence=ev(ctx, companions=[at(vision_dep), at(audio_dep)], pairs_with=[vision_torch, audio_torch]),
        fixes=[Fix("file", msg("TC608.companions.fix", **names))],
        **names,
    )


def _cuda_skew(ctx: RuleContext, torch_version: str) -> Iterator[Finding]:
    """pip's torch and a companion tagged for different CUDA releases (`+cu118` beside `+cu121`, in pins or in
    wheel URLs): torchvision's extension check refuses a torch of another CUDA major ("PyTorch and torchvision
    were compiled with different CUDA major versions"), and the index serves each tag's companion pinned to the
    torch of the same tag, so the set does not resolve as written."""
    i = ctx.intent
    torch = i.pip.get("torch")
    tag = torch.line.local_tag if torch is not None else None
    if torch is None or not tag or not tag.startswith("cu"):
        return
    other = [
        item
        for name in ("torchvision", "torchaudio")
        if (item := i.pip.get(name)) is not None
        and (item.line.local_tag or "").startswith("cu")
        and item.line.local_tag != tag
    ]
    if not other:
        return
    yield finding(
        "TC608",
        Severity.ERROR,
        variant="cuda",
        evidence=ev(ctx, torch=at(torch), companions=[at(d) for d in other]),
        fixes=[Fix("file", msg("TC608.cuda.fix", tag=tag))],
        entries=", ".join(d.text for d in other),
        torch=torch.text,
        tag=tag,
    )


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
            evidence=ev(
                ctx, torch=at(torch_dep) if torch_dep else None, other={"line": bound.line, "entry": bound.text}
            ),
            fixes=[Fix("file", msg("TC608.extension.fix", minor=bound.minor, entry=bound.text))],
            entry=bound.text,
            minor=bound.minor,
            torch=torch_version,
        )


RULE = Rule.declared(__name__, triple)
