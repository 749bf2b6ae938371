"""TC420: two OpenMP runtimes (or two copies of one) mapped into the process that imports torch."""

from __future__ import annotations

import os
from collections.abc import Iterator

from conda_torchcheck.checks import Check
from conda_torchcheck.checks import linux_common as common
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.knowledge.linux import openmp_families
from conda_torchcheck.loader import linux
from conda_torchcheck.messages import msg


def family_of(name: str) -> str | None:
    for family, prefixes in openmp_families().items():
        for prefix in prefixes:
            if name == prefix or name.startswith((prefix + ".", prefix + "-")):
                return family
    return None


def run(ctx: CheckContext) -> Iterator[Finding]:
    load = linux.torch_load(ctx)
    if load is None:
        return
    runtimes: dict[str, list[str]] = {}
    seen_real: set[str] = set()
    for obj in load.ldso.loaded:
        family = family_of(obj.path.name) or next((f for n in obj.names if (f := family_of(os.path.basename(n)))), None)
        if family is None:
            continue
        real = os.path.realpath(obj.path)
        if real in seen_real:
            continue
        seen_real.add(real)
        runtimes.setdefault(family, []).append(str(obj.path))
    files = [p for paths in runtimes.values() for p in paths]
    if len(files) < 2:
        return
    labels = [f"{family} ({len(paths)})" if len(paths) > 1 else family for family, paths in runtimes.items()]
    evidence: dict[str, object] = {"runtimes": runtimes, "files": files}
    owners = _conda_owners(ctx, files)
    if owners:
        evidence["conda_packages"] = owners
    yield finding(
        "TC420",
        Severity.WARNING,
        runtimes=", ".join(labels),
        files=", ".join(files),
        evidence=evidence,
        fixes=[Fix("conda" if common.is_conda_env(ctx) else "pip", msg("TC420.fix"))],
    )


def _conda_owners(ctx: CheckContext, files: list[str]) -> dict[str, str]:
    """The conda package each runtime file of the env belongs to (intel-openmp's libiomp5.so beside a pip torch)."""
    prefix = os.path.normpath(ctx.env.prefix)
    wanted = {}
    for path in files:
        norm = os.path.normpath(path)
        if norm.startswith(prefix + os.sep):
            wanted[os.path.relpath(norm, prefix).replace(os.sep, "/")] = path
    owners: dict[str, str] = {}
    if not wanted:
        return owners
    for rec in ctx.env.conda_records:
        for rel in rec.files:
            if rel in wanted:
                owners[wanted[rel]] = f"{rec.name} {rec.version} ({rec.channel})"
    return owners


CHECK = Check.declared(__name__, run)
