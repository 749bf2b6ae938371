"""TC210: NumPy 2 beside a torch built against NumPy 1 (torch before 2.3).

NumPy 2 changed its C ABI: a module compiled against NumPy 1.x cannot use NumPy 2's. torch's wheels and conda
builds before 2.3 were compiled against NumPy 1, so with NumPy 2 installed `import torch` prints "A module that
was compiled using NumPy 1.x cannot be run in NumPy 2.x" and "Failed to initialize NumPy: _ARRAY_API not found",
and everything that crosses between torch and NumPy (torch.from_numpy, tensor.numpy(), DataLoader collation)
fails. torch 2.3 is built against NumPy 2 and runs with both (pytorch/pytorch#107302).
"""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.checks import Check
from conda_torchcheck.checks import commands as cmd
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.facts import manager_of
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.knowledge import parse_version
from conda_torchcheck.messages import msg

#: the first torch built against NumPy 2 (pytorch/pytorch#107302, torch 2.3.0 release notes)
FIRST_NUMPY2_TORCH = "2.3"


def _numpy(ctx: CheckContext) -> tuple[str, str] | None:
    """(version, how it was installed) of the NumPy `import numpy` would pick up."""
    env = ctx.env
    dist = env.dist("numpy")
    if dist is not None and dist.version and manager_of(env, dist) == "pip":
        return dist.version, "pip" if env.record("numpy") is None else "pip-over-conda"
    rec = env.record("numpy")
    if rec is not None and rec.version:
        return rec.version, "conda"
    return None


def run(ctx: CheckContext) -> Iterator[Finding]:
    torch = ctx.torch
    if not torch.installed or not torch.version:
        return
    have_torch = parse_version(torch.version.split("+", 1)[0])
    if have_torch is None or have_torch >= parse_version(FIRST_NUMPY2_TORCH):
        return
    found = _numpy(ctx)
    if found is None:
        return
    numpy_version, how = found
    have_numpy = parse_version(numpy_version)
    if have_numpy is None or have_numpy.major < 2:
        return
    env = ctx.env
    if how == "conda":
        rec = env.record("numpy")
        channel = rec.channel if rec is not None and rec.channel in ("conda-forge", "defaults") else "conda-forge"
        downgrade = cmd.conda_install(env, ["numpy<2"], channel=channel)
    else:
        downgrade = cmd.pip(env, 'install "numpy<2"', dist=env.dist("numpy"))
    yield finding(
        "TC210",
        Severity.WARNING,
        torch=torch.version,
        numpy=numpy_version,
        evidence={"torch": torch.version, "numpy": numpy_version, "numpy installed by": how},
        fixes=[
            Fix("env", msg("TC210.fix_numpy"), commands=(downgrade,)),
            Fix("env", msg("TC210.fix_torch")),
        ],
    )


CHECK = Check.declared(__name__, run)
