"""Checks: small modules that turn facts into findings. The registry below lists them in run order.

Each module defines ``CHECK = Check(...)``. A check's ``run(ctx)`` yields :class:`Finding` objects and must
not raise for bad input (the runner turns an unexpected exception into a TC990 finding anyway).
"""

from __future__ import annotations

import importlib
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.findings import Finding, Severity, finding

# run order: inventory problems first, then conda-level, pip-level, loader-level checks
CHECK_MODULES: tuple[str, ...] = (
    "conda_torchcheck.checks.unreadable",
    "conda_torchcheck.checks.torch_missing",
    "conda_torchcheck.checks.channels",
    "conda_torchcheck.checks.variant",
    "conda_torchcheck.checks.versions",
    "conda_torchcheck.checks.mkl_ijit",
    "conda_torchcheck.checks.pip_conda",
    "conda_torchcheck.checks.duplicates",
    "conda_torchcheck.checks.requirements",
    "conda_torchcheck.checks.numpy_abi",
    "conda_torchcheck.checks.python_abi",
    "conda_torchcheck.checks.shadowing",
    "conda_torchcheck.checks.base_env",
    "conda_torchcheck.checks.cpu_build",
    "conda_torchcheck.checks.win_integrity",
    "conda_torchcheck.checks.win_missing",
    "conda_torchcheck.checks.win_vcruntime",
    "conda_torchcheck.checks.win_binaries",
    "conda_torchcheck.checks.win_openmp",
    "conda_torchcheck.checks.win_path",
    "conda_torchcheck.checks.win_foreign",
    "conda_torchcheck.checks.win_cuda",
    "conda_torchcheck.checks.win_cuda_driver",
    "conda_torchcheck.checks.win_oldos",
    "conda_torchcheck.checks.linux_loading",
    "conda_torchcheck.checks.linux_symbols",
    "conda_torchcheck.checks.linux_shadowing",
    "conda_torchcheck.checks.linux_nvidia",
    "conda_torchcheck.checks.linux_openmp",
    "conda_torchcheck.checks.mac_loading",
    "conda_torchcheck.checks.mac_symbols",
    "conda_torchcheck.checks.mac_x86",
    "conda_torchcheck.checks.mac_openmp",
    "conda_torchcheck.checks.mac_mps",
    "conda_torchcheck.checks.cuda_driver",
    "conda_torchcheck.checks.linux_jetson",
    "conda_torchcheck.hooks.activation.check",
    "conda_torchcheck.checks.import_test",
)


@dataclass(frozen=True)
class Check:
    name: str
    ids: tuple[str, ...]
    summary: str
    run: Callable[[CheckContext], Iterable[Finding]]
    #: target OSes the check applies to
    platforms: tuple[str, ...] = ("windows", "linux", "darwin")


# Checks that only ever apply to one OS, so a run on another OS need not import them (their CHECK.platforms
# says the same; a test keeps the two in agreement).
OS_ONLY: dict[str, str] = {
    **{m: "windows" for m in CHECK_MODULES if m.rsplit(".", 1)[1].startswith("win_")},
    **{m: "linux" for m in CHECK_MODULES if m.rsplit(".", 1)[1].startswith("linux_")},
    **{m: "darwin" for m in CHECK_MODULES if m.rsplit(".", 1)[1].startswith("mac_")},
    "conda_torchcheck.checks.cuda_driver": "linux",
    "conda_torchcheck.checks.mkl_ijit": "linux",
}


def all_checks(target_os: str | None = None) -> list[Check]:
    """Every registered check, or only those that can apply to ``target_os``."""
    checks = []
    for module_name in CHECK_MODULES:
        if target_os is not None and OS_ONLY.get(module_name, target_os) != target_os:
            continue
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:  # not written yet on this branch
                continue
            raise
        checks.append(module.CHECK)
    return checks


def _matches(finding_id: str, patterns: Sequence[str]) -> bool:
    fid = finding_id.upper()
    return any(fid.startswith(p.upper()) for p in patterns)


def select(checks: Sequence[Check], only: Sequence[str] = (), skip: Sequence[str] = ()) -> list[Check]:
    """Checks that may produce a finding id allowed by ``only`` (id or prefix such as TC3) and ``skip``."""
    out = []
    for check in checks:
        ids = [i for i in check.ids if (not only or _matches(i, only)) and not _matches(i, skip)]
        names_only = [p for p in only if p.lower() == check.name.lower()]
        if ids or names_only:
            out.append(check)
    return out


def run_checks(ctx: CheckContext, only: Sequence[str] = (), skip: Sequence[str] = ()) -> list[Finding]:
    findings: list[Finding] = []
    for check in select(all_checks(ctx.env.os), only, skip):
        if ctx.env.os not in check.platforms:
            continue
        try:
            produced = list(check.run(ctx))
        except Exception as exc:  # a bug in one check must not hide the others
            tb = traceback.extract_tb(exc.__traceback__)
            where = f"{tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno}" if tb else "?"
            produced = [
                finding(
                    "TC990",
                    Severity.WARNING,
                    check=check.name,
                    error=f"{type(exc).__name__}: {exc}",
                    evidence={"check": check.name, "error": f"{type(exc).__name__}: {exc}", "at": where},
                )
            ]
        for f in produced:
            if only and not (_matches(f.id, only) or any(p.lower() == check.name.lower() for p in only)):
                continue
            if skip and _matches(f.id, skip):
                continue
            findings.append(_with_check(f, check.name))
    findings.sort(key=lambda f: (f.severity.rank, f.id))
    return findings


def _with_check(f: Finding, name: str) -> Finding:
    from dataclasses import replace

    return f if f.check else replace(f, check=name)
