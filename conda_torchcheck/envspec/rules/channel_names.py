"""TC616: a channel written so that conda does not read it as meant (a typo of a known name, one colon)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from conda_torchcheck.envspec.intent import facts
from conda_torchcheck.envspec.rules._common import Rule, RuleContext, at, ev
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg

# `pyg:pytorch-scatter`: a channel-looking word and ONE colon before the package name (`::` is the channel form;
# a URL has `//` after its colon and does not match)
_SINGLE_COLON = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.-]*):([A-Za-z0-9_][A-Za-z0-9_.-]*)")


def typo_of(channel: str) -> str | None:
    """The channel name ``channel`` is a known misspelling of (``default`` → ``defaults``), or None."""
    return facts().get("channel_typos", {}).get(channel.strip().lower())


def channel_names(ctx: RuleContext) -> Iterator[Finding]:
    for item in ctx.file.channels or ():
        meant = typo_of(item.text)
        if meant is not None:
            yield finding(
                "TC616",
                Severity.WARNING,
                variant="typo",
                evidence=ev(ctx, channel={"line": item.where.line, "channel": item.text}, meant=meant),
                fixes=[Fix("file", msg("TC616.typo.fix", channel=item.text, meant=meant))],
                channel=item.text,
                meant=meant,
            )
    single = []
    for dep in ctx.file.deps:
        m = _SINGLE_COLON.match(dep.text.strip())
        if m is not None and dep.spec is not None and dep.spec.channel is None and dep.spec.name == m.group(2):
            single.append(dep)
    if single:
        first = single[0].text.strip()
        yield finding(
            "TC616",
            Severity.WARNING,
            variant="single_colon",
            evidence=ev(ctx, entries=[at(d) for d in single]),
            fixes=[Fix("file", msg("TC616.single_colon.fix", entry=first, fixed=first.replace(":", "::", 1)))],
            entry=first,
            count=len(single),
        )


RULE = Rule.declared(__name__, channel_names)
