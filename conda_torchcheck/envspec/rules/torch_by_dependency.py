"""TC619: the file names no torch, but a package it installs depends on torch, so torch arrives unpinned as that
package's dependency: whatever the solver or pip picks that day (on PyPI a CUDA build on Linux x86_64 and the CPU
build on Windows and macOS; on conda-forge the build the solving machine's driver selects). The packages whose
recipes or wheels require torch are knowledge/env_files.toml's [conda_depends_on_pytorch] and
[pip_depends_on_torch]."""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.envspec.intent import facts
from conda_torchcheck.envspec.parse import CondaDep
from conda_torchcheck.envspec.rules._common import Rule, RuleContext, at, ev
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg


def _normal(name: str) -> str:
    return name.lower().replace("_", "-")


def torch_by_dependency(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    if i.has_torch or i.pip_vcs:
        return
    known = facts()
    conda_needs = {_normal(n) for n in known.get("conda_depends_on_pytorch", {}).get("packages", ())}
    pip_needs = {_normal(n) for n in known.get("pip_depends_on_torch", {}).get("packages", ())}
    bringers = [d for d in ctx.file.deps if d.name and _normal(d.name) in conda_needs]
    bringers += [p for p in ctx.file.pip_requirements() if p.line.name and _normal(p.line.name) in pip_needs]
    if not bringers:
        return
    names = ", ".join(sorted({(b.name if isinstance(b, CondaDep) else b.line.name) or "?" for b in bringers}))
    yield finding(
        "TC619",
        Severity.WARNING,
        packages=names,
        evidence=ev(ctx, brought_by=[at(b) for b in bringers]),
        fixes=[Fix("file", msg("TC619.fix"))],
    )


RULE = Rule.declared(__name__, torch_by_dependency, whole_file=True)
