"""TC615: mkl that can resolve to 2024.1 or newer beside a pytorch-channel torch (the spec side of TC105)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from conda_torchcheck.builders import builder_of
from conda_torchcheck.envspec.intent import facts
from conda_torchcheck.envspec.matchspec import version_key
from conda_torchcheck.envspec.parse import CondaDep
from conda_torchcheck.envspec.rules._common import Rule, RuleContext, at, ev
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.knowledge.conda_channels import pytorch_channel
from conda_torchcheck.messages import msg


def _allows(dep: CondaDep | None, bad_from: str) -> bool:
    """Whether the file's mkl entry lets the solver take ``bad_from`` or newer (absent or unpinned: yes)."""
    if dep is None or dep.spec is None or dep.spec.version is None:
        return True
    bad = version_key(bad_from)
    pinned = dep.spec.exact or dep.spec.minor
    if pinned is not None:
        have = version_key(pinned)
        return have is None or bad is None or have >= bad
    upper = re.match(r"^\s*<(=?)\s*([0-9][0-9.]*)", dep.spec.version)
    if upper is not None and bad is not None:
        top = version_key(upper.group(2))
        return top is None or top > bad or (top == bad and upper.group(1) == "=")
    return True  # a lower bound only


def _linux_file(ctx: RuleContext) -> bool:
    """The breakage is Linux's (dynamic MKL on linux-64); a file that says it is for another OS is left out."""
    return not (ctx.intent.oses - {"linux"})


def mkl_ijit(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    torch = i.deps.get("pytorch")
    if torch is None or torch.spec is None:
        return
    if builder_of(i.torch_supplier) != "pytorch":
        return  # conda-forge's and Anaconda's torch use their own blas; pip wheels link MKL statically
    version = i.torch_version
    table = facts()["mkl_ijit"]
    first, fixed_from = version_key(table["reported_from"]), version_key(table["pytorch_pins_mkl_from"])
    have = version_key(".".join(version.split(".")[:2])) if version else None
    if have is None or first is None or fixed_from is None or not first <= have < fixed_from:
        return  # unknown torch (say nothing), a release not reported, or one whose builds cap mkl themselves
    # mkl >= 2024.1 has to be on offer: conda-forge's mkl (listed, or named with conda-forge::)
    mkl = ctx.file.dep("mkl")
    offered = "conda-forge" in ctx.file.channel_names or (
        mkl is not None and mkl.spec is not None and mkl.spec.channel_name == "conda-forge"
    )
    bad_from = pytorch_channel().mkl_ijit_bad_from
    if not offered or not _allows(mkl, bad_from) or not _linux_file(ctx):
        return
    yield finding(
        "TC615",
        Severity.WARNING,
        evidence=ev(ctx, torch=at(torch), mkl=at(mkl) if mkl is not None else None, bad_from=bad_from),
        # the cap is one added line; written by hand, since it adds a package the file did not name
        fixes=[Fix("file", msg("TC615.fix", bad_from=bad_from))],
        torch=torch.text,
        bad_from=bad_from,
    )


RULE = Rule.declared(__name__, mkl_ijit)
