"""TC620: `python==3.7` (or `python 3.7`) in the conda list. conda's `==` is an exact match with no padding of
later components (conda 26.7.1's VersionSpec: `==3.7` matches 3.7 and 3.7.0, not 3.7.12), so the env gets the first
release of that Python, never its bug-fix and security releases, and the solve fails where X.Y.0 is not on the
channels."""

from __future__ import annotations

import re
from collections.abc import Iterator

from conda_torchcheck.envspec.rules._common import Rule, RuleContext, at, ev
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg

_MINOR = re.compile(r"^(\d+\.\d+)$")


def exact_python(ctx: RuleContext) -> Iterator[Finding]:
    dep = ctx.file.dep("python")
    if dep is None or dep.spec is None or dep.spec.version is None or dep.spec.build:
        return
    # `python==3.7` and `python 3.7` both parse to the exact version 3.7 (`python=3.7` is 3.7*)
    m = _MINOR.match(dep.spec.version.strip())
    if m is None or dep.spec.exact != m.group(1):
        return
    minor = m.group(1)
    yield finding(
        "TC620",
        Severity.WARNING,
        evidence=ev(ctx, python=at(dep), matches=f"{minor}.0"),
        fixes=[Fix("file", msg("TC620.fix", minor=minor))],
        entry=dep.text,
        minor=minor,
    )


RULE = Rule.declared(__name__, exact_python)
