"""TC610: Python outside what that torch supports."""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.envspec.history import release as torch_release
from conda_torchcheck.envspec.intent import release_python_ok
from conda_torchcheck.envspec.rules._common import Rule, RuleContext, at, ev
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg


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
            evidence=ev(ctx, python=at(i.python), newest_match=res.without_python),
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
        evidence=ev(
            ctx, python=at(i.python), torch=at(torch_dep) if torch_dep else None, supported=list(release.python)
        ),
        fixes=[Fix("file", msg("TC610.fix", low=release.python[0], high=release.python[1]))],
        python=i.python.spec.version if i.python.spec else i.python.text,
        torch=torch_version,
        low=release.python[0],
        high=release.python[1],
    )


RULE = Rule.declared(__name__, python_range)
