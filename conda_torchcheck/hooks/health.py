"""``conda doctor`` health check "torch", and its fixer for the fixes this tool can safely apply itself.

The check prints (doctor ignores return values and ``--json``); the fixer returns an exit code. A safe fix is a
:class:`Fix` flagged ``safe_automatic`` (it only touches files this tool may change). The fixer applies the
commands it can run in-process and lists the others for the user; it never runs a shell.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conda_torchcheck.findings import Finding, Fix, Severity

CHECK_NAME = "torch"
SUMMARY = "Why `import torch` fails or will fail in this environment (conda-torchcheck)"
FIX_SUMMARY = "Apply conda-torchcheck's safe automatic fixes"

OK_MARK = "✅"
X_MARK = "❌"


def _marks() -> tuple[str, str]:
    try:
        from conda.base.constants import OK_MARK as ok
        from conda.base.constants import X_MARK as x

        return ok, x
    except Exception:
        return OK_MARK, X_MARK


def findings_for(prefix: str, *, quick: bool = False) -> tuple[list[Finding], Any]:
    from conda_torchcheck.checks import run_checks
    from conda_torchcheck.checks.context import CheckContext, CheckOptions
    from conda_torchcheck.inventory import load_environment

    env, host = load_environment(prefix)
    ctx = CheckContext(env, host, CheckOptions(verify_hashes=not quick, import_test=False))
    return run_checks(ctx), ctx.torch


def report_lines(
    prefix: str, findings: Sequence[Finding], torch: Any, verbose: bool, lang: str | None = None
) -> list[str]:
    from conda_torchcheck.hooks.summary import report_command
    from conda_torchcheck.messages import translate
    from conda_torchcheck.render.text import render_finding

    ok, x = _marks()
    serious = [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING)]
    if not torch.installed and not serious:
        return [f"{ok} " + translate("plugin.health.no_torch", lang)]
    if not serious:
        what = f"torch {torch.version or '?'} ({torch.variant}, {torch.source})" if torch.installed else "torch"
        return [f"{ok} " + translate("plugin.health.ok", lang, what=what)]
    errors = sum(1 for f in serious if f.severity is Severity.ERROR)
    lines = [f"{x} " + translate("plugin.health.problems", lang, errors=errors, warnings=len(serious) - errors)]
    for f in serious:
        if verbose:
            lines.extend("    " + line for line in render_finding(f, lang=lang, color=False, verbose=1))
        else:
            sev = translate(f"severity.{f.severity.value}", lang)
            lines.append(f"    {f.id} {sev}: {f.title.render(lang)}")
    lines.append("    " + translate("plugin.health.details", lang, command=report_command(prefix)))
    return lines


def check(prefix: str, verbose: bool) -> None:
    """The doctor action: prints one ✅ line, or ❌ with one line per error/warning."""
    try:
        # `conda doctor` runs every check: hash torch's files (gigabytes for CUDA builds) only when asked with -v
        findings, torch = findings_for(prefix, quick=not verbose)
        lines = report_lines(prefix, findings, torch, bool(verbose))
    except Exception as exc:
        from conda_torchcheck.messages import translate

        _, x = _marks()
        lines = [f"{x} " + translate("plugin.health.failed", error=f"{type(exc).__name__}: {exc}")]
    print("\n".join(lines))


# --- fixer ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlannedFix:
    finding: Finding
    fix: Fix
    #: one callable per command this tool can run itself; None for a command left to the user
    actions: tuple[tuple[str, Callable[[], int] | None], ...]


def _inside(path: Path, prefix: Path) -> bool:
    try:
        path.resolve().relative_to(prefix.resolve())
        return path.resolve() != prefix.resolve()
    except (OSError, ValueError):
        return False


def _remove_tree(path: Path) -> int:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    return 0


def plan_command(command: str, prefix: Path) -> Callable[[], int] | None:
    """An in-process action for a fix command this tool can carry out safely; None otherwise.

    Understood: ``conda torchcheck …`` / ``conda-torchcheck …`` (our own verbs) and removing a path inside the
    target env (``rm -rf PATH``, ``rmdir /s /q PATH``, ``Remove-Item -Recurse -Force PATH``).
    """
    try:
        argv = shlex.split(command, posix=os.name != "nt" and "\\" not in command)
    except ValueError:
        return None
    argv = [a[1:-1] if len(a) >= 2 and a[0] == a[-1] and a[0] in "\"'" else a for a in argv]
    if argv[:2] == ["conda", "torchcheck"] or argv[:1] == ["conda-torchcheck"]:
        rest = argv[2:] if argv[0] == "conda" else argv[1:]

        def run_ours() -> int:
            from conda_torchcheck.cli.main import main

            return main(rest)

        return run_ours
    lowered = [a.lower() for a in argv]
    target = None
    if lowered[:2] == ["rm", "-rf"] and len(argv) == 3:
        target = argv[2]
    elif lowered[:3] == ["rmdir", "/s", "/q"] and len(argv) == 4:
        target = argv[3]
    elif lowered[:1] == ["remove-item"] and "-recurse" in lowered and len(argv) >= 3:
        rest = [a for a in argv[1:] if not a.startswith("-")]
        target = rest[0] if len(rest) == 1 else None
    if target is not None:
        path = Path(target)
        if _inside(path, prefix):
            return lambda: _remove_tree(path)
    return None


def plan(findings: Sequence[Finding], prefix: Path) -> list[PlannedFix]:
    out = []
    for f in findings:
        for fix in f.fixes:
            if not fix.safe_automatic or fix.needs_admin:
                continue
            actions = tuple((c, plan_command(c, prefix)) for c in fix.commands)
            out.append(PlannedFix(f, fix, actions))
    return out


def report_plan(prefix: str) -> tuple[Any, Any]:
    """The report of ``prefix`` and its fix plan (None when there is nothing but notes), as ``repair`` makes
    them; (None, None) when the env cannot be read."""
    try:
        report = _recheck(prefix, {})
    except Exception:  # the doctor's own fixes still run
        return None, None
    if not any(f.severity is not Severity.INFO for f in report.findings):
        return report, None
    from conda_torchcheck.plan import build_plan

    return report, build_plan(report)


def _recheck(prefix: str, variables: Any) -> Any:
    from conda_torchcheck.inventory import load_environment
    from conda_torchcheck.report import check_environment

    env, host = load_environment(prefix, host_overrides=dict(variables) or None)
    return check_environment(env, host)


def fix(prefix: str, args: Any, confirm: Callable[[str], None]) -> int:
    """The doctor fixer: show the safe fixes, ask once, apply them; manual commands are only listed."""
    from conda_torchcheck.messages import translate

    findings, _ = findings_for(prefix, quick=True)
    planned = plan(findings, Path(prefix))
    runnable = [p for p in planned if any(action is not None for _, action in p.actions)]
    report, fix_plan = report_plan(prefix)
    ours = {c for p in runnable for c, _a in p.actions}
    # the same plan `repair` carries out: its steps a resolver checked (or that resolve nothing) are applied
    steps = [
        s
        for s in (fix_plan.steps if fix_plan else [])
        if s.commands
        and not s.needs_admin
        and s.verification.status in ("verified", "exact")
        and not ours.intersection(s.commands)
    ]
    if not runnable and not steps:
        print(translate("plugin.fixer.none"))
        if fix_plan is not None and fix_plan.steps:
            from conda_torchcheck.render.text import render_plan

            print("\n".join(render_plan(fix_plan, lang=None, color=False, verbose=0)))
        return 0
    print(translate("plugin.fixer.header", count=len(runnable) + len(steps)))
    for p in runnable:
        print(f"  {p.finding.id} {p.fix.summary.render()}")
        for command, action in p.actions:
            print(f"      {command}" + ("" if action else "  " + translate("plugin.fixer.manual")))
    for step in steps:
        print(f"  {step.finding} {step.summary}")
        for command in step.commands:
            print(f"      {command}")
        print(f"      ({step.changes})")
    print()
    confirm(translate("plugin.fixer.confirm"))
    if steps:
        from conda_torchcheck.plan.model import Plan
        from conda_torchcheck.plan.repair import repair

        outcome = repair(report, Plan(steps=steps), lambda variables: _recheck(prefix, variables))
        for run in outcome.runs:
            if run.status == "failed":
                print(translate("plugin.fixer.failed", command="; ".join(run.step.commands), error=run.output[-300:]))
        if outcome.rolled_back is not None:
            print("conda-torchcheck: the env was not better after the plan; rolled back:")
            for line in outcome.rolled_back:
                print(f"  {line}")
            return 1
    rc = 0
    for p in runnable:
        for command, action in p.actions:
            if action is None:
                continue
            try:
                result = action()
            except Exception as exc:
                print(translate("plugin.fixer.failed", command=command, error=f"{type(exc).__name__}: {exc}"))
                rc = 1
                continue
            if result:
                rc = result if isinstance(result, int) else 1
    if rc == 0:
        print(translate("plugin.fixer.done"))
    return rc
