"""TC601: channels missing."""

from __future__ import annotations

import shlex
from collections.abc import Iterator

from conda_torchcheck.envspec.intent import CONDA_TORCH
from conda_torchcheck.envspec.rules._common import Rule, RuleContext, at, ev
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg


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
    entries = [at(d) for d in ctx.file.deps if d.name in CONDA_TORCH]
    yield finding(
        "TC601",
        Severity.WARNING,
        evidence=ev(ctx, channels=None, entries=entries),
        fixes=[
            Fix("file", msg("TC601.fix"), (f"{ctx.command} spec fix {shlex.quote(ctx.file.path)} -p <env> --write",))
        ],
        file=ctx.file.path,
    )


RULE = Rule.declared(__name__, channels_missing)
