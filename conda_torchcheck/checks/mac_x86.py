"""TC452: an x86_64 Python on macOS cannot get torch newer than 2.2.2 from PyPI (no macosx x86_64 wheels from 2.3).

Reported as a warning when a package in the env asks for a torch that excludes what this Python can install or
when torch is not installed yet (an install of anything newer finds no distribution), as info when pip-installed
torch is at (or below) the last x86_64 release; not at all for conda-forge's osx-64
pytorch, which is still built.

Variant ``rosetta`` (a warning, whatever installed torch): the x86_64 Python runs on an Apple silicon Mac, so
under Rosetta: torch gets no MPS (the Apple GPU) and runs translated. The Mac is known to be Apple silicon when
``--system-root`` holds Rosetta's runtime (only Apple silicon has it) or, live, when ``sysctl hw.optional.arm64``
says 1; otherwise nothing is said.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import Version

from conda_torchcheck.checks import Check
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory import fs
from conda_torchcheck.knowledge import macos as macos_knowledge
from conda_torchcheck.knowledge import parse_version
from conda_torchcheck.messages import msg


def _torch_demands(ctx: CheckContext, last: Version) -> tuple[str, str] | None:
    """(requirer, specifier) of the first installed package whose torch requirement excludes ``last``."""
    for dist in ctx.env.distributions:
        if dist.name == "torch":
            continue
        for line in dist.requires:
            try:
                req = Requirement(line)
            except InvalidRequirement:
                continue
            if req.name.lower() != "torch" or not str(req.specifier):
                continue
            if req.marker is not None and "extra" in str(req.marker):
                continue
            if not req.specifier.contains(last, prereleases=True):
                return f"{dist.raw_name} {dist.version}", str(req.specifier)
    return None


def apple_silicon_host(ctx: CheckContext) -> tuple[bool | None, str]:
    """(whether the Mac the env runs on is Apple silicon, how that is known): the system root's Rosetta runtime,
    or live ``sysctl hw.optional.arm64``; (None, "unknown") when neither can tell."""
    root = ctx.host.system_root
    if root is not None:
        files = macos_knowledge.mps().rosetta_files
        found = next((f for f in files if fs.is_file(Path(root) / f)), None)
        return (True, f"system-root: {found}") if found else (None, "unknown")
    if ctx.host.live and sys.platform == "darwin":
        import subprocess

        try:
            out = subprocess.run(["sysctl", "-n", "hw.optional.arm64"], capture_output=True, text=True, timeout=5)
        except (OSError, subprocess.SubprocessError):
            return None, "unknown"
        value = out.stdout.strip()
        if value in ("0", "1"):
            return value == "1", "live: sysctl hw.optional.arm64"
    return None, "unknown"


def _rosetta(ctx: CheckContext) -> Iterator[Finding]:
    apple, how = apple_silicon_host(ctx)
    if not apple:
        return
    python = str(ctx.env.python.executable) if ctx.env.python.executable else "python"
    yield finding(
        "TC452",
        Severity.WARNING,
        variant="rosetta",
        python=python,
        how=how,
        evidence={"python": python, "python_arch": "x86_64", "host": "Apple silicon (arm64)", "host_from": how},
        fixes=[Fix("conda", msg("TC452.fix.arm64_env"))],
    )


def run(ctx: CheckContext) -> Iterator[Finding]:
    env = ctx.env
    if env.os != "darwin" or env.python.arch != "x86_64":
        return
    yield from _rosetta(ctx)
    torch = ctx.torch
    if torch.source == "conda":
        return  # conda-forge still builds osx-64 pytorch
    last_text = macos_knowledge.last_x86_64_torch()
    last = parse_version(last_text)
    installed = parse_version(torch.version) if torch.installed else None
    if installed is not None and installed > last:
        return  # an arm64 (or self-built) torch in an x86_64 env: TC451 says whether it loads
    demand = _torch_demands(ctx, last)
    if installed is None and demand is None:
        # no torch yet: `pip install torch` gets 2.2.2 at most, any newer request finds no distribution
        situation = msg("TC452.situation.none")
        severity = Severity.WARNING
        wanted = "2.3"
    elif demand is not None:
        requirer, specifier = demand
        wanted = specifier.lstrip("<>=!~ ").split(",")[0] if specifier else "2.3"
        situation = msg("TC452.situation.pinned", version=torch.version or "-", requirer=requirer,
                        specifier=specifier)  # fmt: skip
        severity = Severity.WARNING
    else:
        wanted = "2.3"
        situation = msg("TC452.situation.stuck", version=torch.version or "-")
        severity = Severity.INFO
    fixes = [
        Fix("conda", msg("TC452.fix.arm64_env")),
        Fix("conda", msg("TC452.fix.conda_forge")),
        Fix("pip", msg("TC452.fix.pin", last=last_text)),
    ]
    yield finding(
        "TC452",
        severity,
        last=last_text,
        arch="x86_64",
        wanted=wanted,
        situation=situation,
        evidence={
            "python_arch": env.python.arch,
            "torch": torch.version,
            "torch_source": torch.source,
            "last_x86_64_wheel": last_text,
            **({"required_by": demand[0], "specifier": demand[1]} if demand else {}),
        },
        fixes=fixes,
    )


CHECK = Check.declared(__name__, run)
