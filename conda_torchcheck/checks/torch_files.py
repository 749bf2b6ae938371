"""TC211: torch's Python files (torch/, torchgen/, functorch/) missing or of another size than its pip RECORD
says, on Linux and macOS.

``import torch`` reads several hundred of them (torch/__init__.py imports torch._utils_internal, torchgen, ...);
one missing file is ``ModuleNotFoundError: No module named 'torch._utils_internal'``, one cut short a
``SyntaxError`` inside torch. An interrupted install or unpack, a disk that filled up, and cleaners that delete
``*.py`` next to ``__pycache__`` are the usual causes. Libraries are not looked at here: the loading checks
already name a missing (TC401) or unreadable (TC903) one. Windows has TC308, which checks every file type.
Only sizes are compared (a stat per file, no reading); a conda torch is not checked here (conda rewrites text
files that hold its prefix after the package is built).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from conda_torchcheck.checks import Check
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.loading_common import reinstall_torch_fix
from conda_torchcheck.findings import Finding, Severity, finding
from conda_torchcheck.messages import msg

SHOWN = 10


def _python_files(ctx: CheckContext) -> list[tuple[str, int]]:
    """(path, size) of each ``.py`` file torch's RECORD lists, with its size."""
    from conda_torchcheck.inventory.dists import record_sizes

    dist = ctx.torch.dist
    assert dist is not None
    site = str(dist.site)
    rows = record_sizes(dist.record_path, ".py")
    inside = [(path, int(size)) for path, size in rows if size.isdigit() and not path.startswith(("..", "/"))]
    if os.sep == "/":  # os.path.join of a relative path, without a call per file (torch lists 2,400)
        head = os.path.join(site, "")
        return [(head + path, size) for path, size in inside]
    return [(os.path.join(site, path), size) for path, size in inside]


def run(ctx: CheckContext) -> Iterator[Finding]:
    t = ctx.torch
    if not t.installed or t.source != "pip" or t.dist is None or not t.dist.has_record:
        return
    if not os.path.isfile(os.path.join(str(t.dist.site), "torch", "__init__.py")):
        return  # no torch package at all: TC204 says so, with the same reinstall
    files = _python_files(ctx)
    missing: list[str] = []
    wrong_size: list[str] = []
    for path, size in files:
        try:
            have = os.stat(path).st_size
        except OSError:
            missing.append(os.path.normpath(path))
            continue
        if have != size:
            wrong_size.append(f"{os.path.normpath(path)}: {have} bytes, expected {size}")
    if not missing and not wrong_size:
        return
    evidence: dict[str, object] = {"manifest": f"{t.dist.metadata_dir.name}/RECORD", "checked": len(files)}
    if missing:
        evidence["missing"] = missing[:SHOWN] + _more(missing)
    if wrong_size:
        evidence["wrong_size"] = wrong_size[:SHOWN] + _more(wrong_size)
    yield finding(
        "TC211",
        Severity.ERROR,
        count=len(missing) + len(wrong_size),
        torch=t.version or "?",
        missing=len(missing),
        truncated=len(wrong_size),
        evidence=evidence,
        fixes=[reinstall_torch_fix(ctx, msg("TC211.fix"))],
    )


def _more(items: list[str]) -> list[str]:
    return [f"… {len(items) - SHOWN} more"] if len(items) > SHOWN else []


CHECK = Check.declared(__name__, run)
