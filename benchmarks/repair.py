"""The fix plan and `repair` on the suite's real-wheel broken envs (tests/plan/realenvs.py): a venv with the real
torch 2.13.0+cpu wheel, broken each way the suite breaks it, repaired from a local folder of real wheels.

Run by hand:  .venv/bin/python benchmarks/repair.py [--work DIR] [--json]

Per breakage class: the root causes and the findings folded into them; the lines of text per root cause
(default view); the plan's steps and how each was checked; steps shown that a resolver turns into an unintended
torch change (must be 0); contradictory steps in one plan (must be 0); whether `repair` made the env healthy (a
clean re-check and a real `import torch`); the repair's time beside the package manager's own time for the same
commands (the same pip commands run by hand on a fresh copy of the same broken env). Lines per root cause: the
report as ``check`` prints it (findings and the plan, without the target and summary lines) over its root causes.

Summary: repaired share (target >= 95%), unintended torch changes shown, contradictions, lines per root cause
(median, max), repair's and pip's total time. A class whose repair needs a wheel the folder cannot have offline
(torchvision +cpu is only on download.pytorch.org) is counted as not repaired, and named. A class fixed by a
variable of the user's shell (LD_LIBRARY_PATH, LD_PRELOAD, PYTHONPATH: printed, never applied) counts as
repaired only when the re-check and the real import with the variables as the plan leaves them are clean; the
summary names those classes. The repair's time covers its checks too (undo record, re-check); pip's is the
same pip commands alone.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conda_torchcheck.inventory import load_environment
from conda_torchcheck.plan import PlanOptions, build_plan
from conda_torchcheck.plan.actions import parse
from conda_torchcheck.plan.build import contradictions, unintended_torch_changes
from conda_torchcheck.plan.repair import repair
from conda_torchcheck.render.text import render_text
from conda_torchcheck.report import check_environment
from tests.plan import realenvs


def _check(venv: Path, variables: dict[str, str]):
    env, host = load_environment(venv, host_overrides=dict(variables) or None)
    return check_environment(env, host)


def _manager_time(base: Path, house: Path, work: Path, name: str, plan) -> float:
    """The same pip commands, run by hand on a fresh copy of the same broken env."""
    venv = realenvs.clone(base, work / f"{name}-by-hand")
    realenvs.BREAKAGES[name](venv, work / f"{name}-by-hand-extra", house)
    total = 0.0
    for step in plan.steps:
        for command in step.commands:
            a = parse(command)
            if a.manager != "pip":
                continue
            start = time.perf_counter()
            subprocess.run(shlex.split(command), capture_output=True, timeout=1800)
            total += time.perf_counter() - start
    return total


def run(work: Path) -> dict:
    base, house = realenvs.build_base(work / "base")
    rows = []
    lines_per_cause: list[int] = []
    for name in sorted(realenvs.BREAKAGES):
        venv = realenvs.clone(base, work / name)
        extra = work / f"{name}-extra"
        extra.mkdir(parents=True, exist_ok=True)
        variables = realenvs.BREAKAGES[name](venv, extra, house)
        broken_import = realenvs.real_import(venv, variables)
        start = time.perf_counter()
        before = _check(venv, variables)
        plan = build_plan(before, PlanOptions(find_links=(str(house),)))
        plan_seconds = time.perf_counter() - start
        roots = [f for f in before.findings if f.severity.value != "info"]
        before.plan = plan
        # the report as `check` prints it (findings, then the plan), less the target's 4 lines and the summary's 2
        shown = len(render_text(before, lang="en").splitlines()) - 6
        per_cause = round(shown / len(roots), 1) if roots else None
        if per_cause is not None:
            lines_per_cause.append(per_cause)
        unintended = len(unintended_torch_changes(plan))
        outcome = repair(before, plan, lambda v, venv=venv: _check(venv, v), variables)
        # a variable step is printed for the user's shell, not applied: the class counts as repaired when the
        # re-check and the real import with the variables as the plan leaves them are clean
        works = realenvs.real_import(venv, outcome.variables) is None
        healthy = outcome.better and not outcome.after.has_errors and works
        by_hand = _manager_time(base, house, work, name, plan) if healthy else None
        rows.append(
            {
                "class": name,
                "import_before": broken_import or "works (torch itself)",
                "root_causes": [f.id for f in roots],
                "folded": sum(len(f.consequences) for f in roots),
                "lines_per_root_cause": per_cause,
                "steps": [(s.finding, s.verification.status) for s in plan.steps],
                "dropped": [(d.finding, d.reason) for d in plan.dropped],
                "unintended_torch_changes": unintended,
                "contradictions": contradictions(plan),
                "how": "nothing offered"
                if not plan.steps
                else "your shell's variables (printed)"
                if any(r.status == "printed" for r in outcome.runs)
                else "applied",
                "repaired": healthy,
                "after": outcome.after.counts,
                "check_and_plan_s": round(plan_seconds, 2),
                "repair_s": round(outcome.seconds, 2),
                "package_manager_s": round(by_hand, 2) if by_hand is not None else None,
            }
        )
    repaired = sum(1 for r in rows if r["repaired"])
    return {
        "classes": rows,
        "summary": {
            "repaired": f"{repaired}/{len(rows)}",
            "repaired_share": round(repaired / len(rows), 3),
            "unintended_torch_changes_shown": sum(r["unintended_torch_changes"] for r in rows),
            "contradictions": sum(r["contradictions"] for r in rows),
            "lines_per_root_cause_median": statistics.median(lines_per_cause) if lines_per_cause else None,
            "lines_per_root_cause_max": max(lines_per_cause, default=None),
            "not_repaired": [r["class"] for r in rows if not r["repaired"]],
            "repaired_through_the_shell": [r["class"] for r in rows if r["repaired"] and r["how"] != "applied"],
            # the classes whose steps run pip: repair's whole time (check, plan, pip, re-check) beside pip alone
            "repair_s_total_pip_classes": round(sum(r["repair_s"] for r in rows if r["package_manager_s"]), 1),
            "package_manager_s_total": round(sum(r["package_manager_s"] or 0 for r in rows), 1),
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, help="folder for the envs (default: a temporary one)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    try:
        if args.work:
            args.work.mkdir(parents=True, exist_ok=True)
            doc = run(args.work)
        else:
            with tempfile.TemporaryDirectory() as tmp:
                doc = run(Path(tmp))
    except realenvs.Unavailable as exc:
        print(f"cannot build the real envs here: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0
    print(
        f"{'class':42} {'roots':>5} {'folded':>6} {'lines':>5} {'steps':>5} {'repaired':>8} {'repair s':>8}"
        f" {'pip s':>6}  how"
    )
    for r in doc["classes"]:
        pip_s = "-" if r["package_manager_s"] is None else f"{r['package_manager_s']:.1f}"
        print(
            f"{r['class']:42} {len(r['root_causes']):>5} {r['folded']:>6} {r['lines_per_root_cause'] or '-':>5} "
            f"{len(r['steps']):>5} "
            f"{'yes' if r['repaired'] else 'NO':>8} {r['repair_s']:>8.1f} {pip_s:>6}  {r['how']}"
        )
        for finding, reason in r["dropped"]:
            print(f"    not offered ({finding}): {reason}")
    print(json.dumps(doc["summary"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
