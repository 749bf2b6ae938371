"""TC619: the file names no torch, but a package it installs depends on torch, so torch arrives unpinned as that
package's dependency: whatever the solver or pip picks that day (on PyPI a CUDA build on Linux x86_64 and the CPU
build on Windows and macOS; on conda-forge the build the solving machine's driver selects). The packages whose
recipes or wheels require torch are knowledge/torch_dependents.toml's rows (knowledge.torch_dependents), read from
the packages' own metadata: PyPI's Requires-Dist and the conda-forge feedstocks' run requirements."""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.envspec.parse import CondaDep
from conda_torchcheck.envspec.rules._common import Rule, RuleContext, at, ev
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.knowledge.torch_dependents import conda_dependent, pip_dependent
from conda_torchcheck.messages import msg


def torch_by_dependency(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    if i.has_torch or i.pip_vcs:
        return
    bringers: list = [d for d in ctx.file.deps if conda_dependent(d.name) is not None]
    bringers += [p for p in ctx.file.pip_requirements() if pip_dependent(p.line.name) is not None]
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
