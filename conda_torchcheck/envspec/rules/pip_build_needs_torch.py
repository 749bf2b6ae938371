"""TC623: a pip requirement PyPI has only as a source distribution whose build imports torch (flash-attn). pip
builds an sdist in an isolated environment, which has no torch even when the same pip list or the conda part
installs one; a file conda runs cannot turn that off (--no-build-isolation is not a requirements-file option), so
the build stops with "ModuleNotFoundError: No module named 'torch'" and the whole pip step with it."""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.envspec.intent import facts
from conda_torchcheck.envspec.rules._common import Rule, RuleContext, at, ev, pip_sources_known
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg


def pip_build_needs_torch(ctx: RuleContext) -> Iterator[Finding]:
    rows = {row["name"]: row for row in facts()["pip"].get("build_imports_torch", ())}
    items = [item for item in ctx.file.pip_requirements() if item.line.name in rows and not item.line.url]
    # another index or page may serve a built wheel; the PyTorch index serves none of these
    if not items or not pip_sources_known(ctx.file.pip or (), torch_index=True):
        return
    for item in items:
        row = rows[item.line.name]
        yield finding(
            "TC623",
            Severity.ERROR,
            evidence=ev(ctx, entry=at(item), checked=", ".join(row["checked"]), source=row["source"]),
            fixes=[Fix("file", msg("TC623.fix", package=item.line.name, entry=item.text))],
            entry=item.text,
            package=item.line.name,
        )


RULE = Rule.declared(__name__, pip_build_needs_torch)
