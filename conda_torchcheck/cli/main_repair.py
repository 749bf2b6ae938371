"""``repair``: show the env's fix plan, ask once, record how to undo it, apply it, check again, and roll back when
the env is not better. Steps that need administrator rights, and the shell's variables, are printed, not run."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from conda_torchcheck.cli.options import add_host_options, add_output_options, add_target_options, output_format

HELP = "Apply the fix plan of an environment (asks once), check again, and roll back if it is not better."


def configure_parser(parser: argparse.ArgumentParser, *, conda: bool = False) -> None:
    if not conda:
        add_target_options(parser)
        add_output_options(parser)
    else:
        add_output_options(parser, json_flag=False)
    parser.add_argument("-y", "--yes", action="store_true", help="apply without asking")
    parser.add_argument("--dry-run", action="store_true", help="show the plan and stop")
    parser.add_argument(
        "--import-test",
        action="store_true",
        help="after the repair, import torch with the env's own python (runs code from the env)",
    )
    parser.add_argument(
        "--import-timeout", type=float, default=60.0, metavar="SECONDS", help="seconds for the import test"
    )
    parser.add_argument(
        "--no-resolver", action="store_true", help="do not ask pip's and conda's resolvers (steps are not verified)"
    )
    parser.add_argument("--no-hashes", action="store_true", help="skip verifying torch's files against RECORD")
    parser.set_defaults(only=None, skip=None, all_envs=False)
    add_host_options(parser)


def undo_file(prefix: Path) -> Path:
    """Where the undo record of a repair is kept: the user's state folder, one file per run."""
    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return base / "conda-torchcheck" / "repairs" / f"{prefix.name or 'env'}-{stamp}.json"


def execute(args: argparse.Namespace) -> int:
    from conda_torchcheck.checks.context import CheckOptions
    from conda_torchcheck.cli.main_check import build_report
    from conda_torchcheck.cli.options import host_overrides
    from conda_torchcheck.inventory import load_environment
    from conda_torchcheck.messages import translate
    from conda_torchcheck.plan.repair import repair
    from conda_torchcheck.render.text import render_plan
    from conda_torchcheck.report import check_environment
    from conda_torchcheck.schema import header

    fmt = output_format(args)
    lang = getattr(args, "lang", None)
    report = build_report(args)
    plan = report.plan
    doc = {**header("repair"), "target": str(report.env.prefix), "before": report.counts}
    runnable = [s for s in plan.steps if not s.needs_admin and s.commands] if plan else []
    if plan is None or not plan.steps:
        return _finish(
            fmt,
            {**doc, "plan": plan.to_dict() if plan else None, "applied": False},
            translate("plan.repair_nothing", lang) + "\n",
            0,
        )
    shown = "\n".join(render_plan(plan, lang=lang, color=False, verbose=args.verbose)) + "\n"
    if args.dry_run or not runnable:
        code = 1 if report.has_errors else 0
        return _finish(fmt, {**doc, "plan": plan.to_dict(), "applied": False}, shown, code)
    if not args.yes:
        if fmt == "json" or not sys.stdin.isatty():
            from conda_torchcheck.errors import UsageError

            raise UsageError("repair asks before it changes the env: answer at a terminal, or pass --yes")
        sys.stdout.write(shown)
        answer = input(translate("plan.repair_ask", lang, count=len(runnable), prefix=report.env.prefix))
        if answer.strip().lower() not in ("y", "yes"):
            sys.stdout.write(translate("plan.repair_unchanged", lang) + "\n")
            return 1
        shown = ""
    options = CheckOptions(
        import_test=bool(args.import_test),
        import_timeout=float(args.import_timeout or 60.0),
        verify_hashes=not args.no_hashes,
    )
    prefix = report.env.prefix
    live = not getattr(args, "ignore_environment", False)

    def recheck(variables):
        env, host = load_environment(prefix, use_live_host=live, host_overrides=dict(variables) or None)
        return check_environment(env, host, options)

    outcome = repair(report, plan, recheck, host_overrides(args), lang=lang)
    record = undo_file(prefix)
    try:
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps(outcome.undo.to_dict(), indent=2), encoding="utf-8")
        saved: str | None = str(record)
    except OSError:
        saved = None
    result = {**doc, "plan": plan.to_dict(), "applied": True, **outcome.to_dict(), "undo_file": saved}
    lines = [shown.rstrip("\n")] if shown else []
    for n, run in enumerate(outcome.runs, 1):
        status = translate(f"plan.status_{run.status}", lang)
        lines.append(f"  {n}. [{run.step.finding}] {status}" + (f" ({run.seconds:.1f} s)" if run.seconds else ""))
        if run.status in ("failed", "printed") and run.output:
            lines.extend("       " + line for line in run.output.splitlines()[-6:])
    if saved:
        lines.append(translate("plan.repair_undo_saved", lang, path=saved))
    after = outcome.after.counts
    if outcome.rolled_back is not None:
        lines.append(translate("plan.repair_rolled_back", lang))
        lines.extend("  " + line for line in outcome.rolled_back)
    shell = [c for r in outcome.runs for c in r.step.commands if r.status == "printed" and r.step.kind == "env"]
    if shell and outcome.better:
        lines.append(translate("plan.repair_for_shell", lang))
        lines.extend("  " + c for c in shell)
    lines.append(translate("plan.repair_after", lang, **after))
    code = 0 if outcome.better and not outcome.after.has_errors else 1
    return _finish(fmt, result, "\n".join(lines) + "\n", code)


def _finish(fmt: str, doc: dict, text: str, code: int) -> int:
    if fmt == "json":
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n")
    else:
        sys.stdout.write(text)
    return code
