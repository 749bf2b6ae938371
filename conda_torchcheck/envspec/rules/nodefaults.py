"""TC603: nodefaults — channel hygiene: one note per file, below every torch problem (info)."""

from __future__ import annotations

import shlex
from collections.abc import Iterator

from conda_torchcheck.envspec.intent import facts
from conda_torchcheck.envspec.rules._common import Rule, RuleContext, channels_ev, ev, wants_pytorch_channel
from conda_torchcheck.envspec.rules.channel_names import typo_of
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg


def nodefaults(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    if not i.has_torch or ctx.file.channels is None:
        return
    names = set(ctx.file.channel_names)
    defaults_like = names & set(facts()["defaults"]["names"])
    if "conda-forge" in names and defaults_like:
        # `spec fix` drops defaults only where it moves the file to conda-forge; a file it keeps on the pytorch
        # channel (pytorch-cuda, cpuonly) keeps its defaults, so the rewrite would not end the mix: not claimed
        yield finding(
            "TC603",
            Severity.INFO,
            variant="mixed",
            evidence=ev(ctx, channels=channels_ev(ctx)),
            fixes=[ctx.rewrite_fix("TC603.mixed.fix")]
            if i.era == "conda-forge" and not wants_pytorch_channel(i)
            else [Fix("file", msg("TC603.mixed.fix_manual"))],
        )
        return
    if "nodefaults" in names or defaults_like or i.era not in ("conda-forge", "pytorch", "pip"):
        return
    if any(typo_of(n) for n in names):
        return  # `default` for `defaults`: TC616 names the typo, which is what leaves the list without a base

    # nodefaults needs a base channel for python and the rest; with none listed the choice between Anaconda's
    # defaults (what the pytorch channel's builds were made with; Anaconda's terms apply) and conda-forge is
    # the user's: offered, never made silently
    has_base = "conda-forge" in names or i.era == "conda-forge"
    yield finding(
        "TC603",
        Severity.INFO,
        variant="missing",
        evidence=ev(ctx, channels=channels_ev(ctx)),
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


RULE = Rule.declared(__name__, nodefaults)
