"""``check``: inventory the target env, run the checks, print the report."""

from __future__ import annotations

import argparse
import sys

from conda_torchcheck.cli.options import (
    add_host_options,
    add_output_options,
    add_target_options,
    load_target,
    output_format,
    split_ids,
    timeout_seconds,
)

HELP = "Check an environment and report why `import torch` fails or will fail (the default verb)."


def configure_parser(parser: argparse.ArgumentParser, *, conda: bool = False) -> None:
    if not conda:
        add_target_options(parser)
        add_output_options(parser)
    else:
        add_output_options(parser, json_flag=False)
    parser.add_argument(
        "--only", action="append", metavar="IDS", help="only these finding ids or prefixes (TC301,TC2); repeatable"
    )
    parser.add_argument("--skip", action="append", metavar="IDS", help="skip these finding ids or prefixes")
    parser.add_argument(
        "--import-test",
        action="store_true",
        help="also run the env's own python to import torch (runs code from the env)",
    )
    parser.add_argument(
        "--import-timeout",
        type=timeout_seconds,
        default=60.0,
        metavar="SECONDS",
        help="seconds to wait for the import test (default 60)",
    )
    parser.add_argument("--no-hashes", action="store_true", help="skip verifying torch's files against RECORD")
    parser.add_argument(
        "--verify-plan",
        action="store_true",
        help="check the fix plan's pip steps with the env's own pip (`pip install --dry-run --report`: this runs the "
        "env's python; without it those steps say 'not verified')",
    )
    parser.add_argument(
        "--no-resolver",
        action="store_true",
        help="make the fix plan without asking pip's or conda's resolvers (its steps say 'not verified')",
    )
    fleet = parser.add_argument_group("every environment")
    names = ("--all", "--all-envs") if conda else ("--all-envs",)
    fleet.add_argument(
        *names,
        dest="all_envs",
        action="store_true",
        help="check every env conda knows (environments.txt, envs dirs, the base) and any -p; one line each",
    )
    fleet.add_argument("--hashes", action="store_true", help="with --all-envs: also verify torch's files (slow)")
    add_host_options(parser)


def build_report(args: argparse.Namespace):
    from conda_torchcheck.checks.context import CheckOptions
    from conda_torchcheck.report import check_environment

    env, host = load_target(args)
    options = CheckOptions(
        import_test=bool(getattr(args, "import_test", False)),
        import_timeout=float(getattr(args, "import_timeout", 60.0) or 60.0),
        verify_hashes=not getattr(args, "no_hashes", False),
    )
    only, skip = split_ids(args.only), split_ids(args.skip)
    report = check_environment(env, host, options, only, skip, facts=output_format(args) == "markdown")
    if any(f.severity.value != "info" for f in report.findings):
        from conda_torchcheck.plan import PlanOptions, build_plan

        lang = getattr(args, "lang", None)
        # the env's own pip is the env's code: it runs only when asked (--verify-plan; `repair` asks, the user having
        # asked to change the env); conda's solver is not the env's code and is asked unless --no-resolver
        verify = not getattr(args, "no_resolver", False)
        options = PlanOptions(
            verify=verify, run_env_python=verify and bool(getattr(args, "verify_plan", False)), lang=lang
        )
        report.plan = build_plan(report, options)
    return report


def execute(args: argparse.Namespace) -> int:
    from conda_torchcheck.render import render
    from conda_torchcheck.render.style import wants_color

    fmt = output_format(args)
    if getattr(args, "all_envs", False):
        return execute_fleet(args, fmt)
    report = build_report(args)
    text = render(
        report,
        fmt,
        lang=getattr(args, "lang", None),
        color=fmt == "text" and wants_color(sys.stdout),
        verbose=args.verbose,
    )
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    if fmt == "text":
        note = own_env_note(args, report.env, getattr(args, "lang", None))
        if note:
            sys.stdout.write("\n" + note + "\n")
    return 1 if report.has_errors else 0


#: how many of the envs seen from here the first-contact note lists
OWN_ENV_LISTED = 8


def own_env_note(args: argparse.Namespace, env, lang: str | None) -> str | None:
    """When no target was named and none is active, the env checked is the one this tool runs in (a fresh
    ``pip install`` in a venv of its own): say so, and how to point it at the user's envs, with the envs it can
    see from here (conda's, uv's and pyenv's)."""
    import os

    from conda_torchcheck.inventory.locate import known_envs, python_installs
    from conda_torchcheck.messages import translate

    if getattr(args, "prefix", None) or getattr(args, "name", None) or getattr(args, "known_envs", None) is not None:
        return None
    try:
        if not os.path.samefile(env.prefix, sys.prefix):
            return None
    except OSError:
        return None
    lines = [translate("cli.own_env.checked", lang, prefix=str(env.prefix)), translate("cli.own_env.how", lang)]
    lines += ["  " + translate(f"cli.own_env.{how}", lang) for how in ("by_path", "by_name", "all")]
    seen = [(p, where) for p, where in known_envs() + python_installs() if not _same(p, env.prefix)]
    if seen:
        lines.append(translate("cli.own_env.seen", lang))
        for prefix, where in seen[:OWN_ENV_LISTED]:
            lines.append("  conda-torchcheck " + _target_option(prefix, where))
        if len(seen) > OWN_ENV_LISTED:
            lines.append("  " + translate("cli.own_env.more", lang, count=len(seen) - OWN_ENV_LISTED))
    else:
        lines.append(translate("cli.own_env.none_seen", lang))
    return "\n".join(lines)


def _target_option(prefix, where: str) -> str:
    """``-n NAME`` for a conda env that name reaches from here, else ``-p PREFIX`` (``(base)`` for a base)."""
    from conda_torchcheck.errors import TargetError
    from conda_torchcheck.inventory.locate import resolve_name

    if where == "base":
        return f"-p {prefix} (base)"
    if prefix.parent.name == "envs":
        try:
            if _same(resolve_name(prefix.name), prefix):
                return f"-n {prefix.name}"
        except TargetError:
            pass
    return f"-p {prefix}"


def _same(a, b) -> bool:
    import os

    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def fleet_targets(args: argparse.Namespace):
    """(prefix, where found) for --all-envs: a -p first, then what conda knows (conda's own list under
    ``conda torchcheck --all``, the same places found without conda otherwise)."""
    from pathlib import Path

    from conda_torchcheck.errors import UsageError
    from conda_torchcheck.inventory.locate import embedded_python_in, known_envs, python_installs
    from conda_torchcheck.messages import translate

    if getattr(args, "name", None):
        raise UsageError(translate("fleet.all_envs_and_target"))
    known = getattr(args, "known_envs", None)
    targets = list(known) if known is not None else known_envs()
    # uv's and pyenv's Pythons are envs a user has too, though conda does not know them
    listed = {t[0].absolute() for t in targets}
    targets += [t for t in python_installs() if t[0].absolute() not in listed]
    if getattr(args, "prefix", None):
        given = Path(args.prefix).expanduser().absolute()
        given = embedded_python_in(given) or given
        targets = [(given, "-p")] + [t for t in targets if t[0].absolute() != given]
    return targets


def fleet_places(args: argparse.Namespace) -> list[str]:
    """Where --all-envs looked for envs (shown when it found none)."""
    if getattr(args, "known_envs", None) is not None:
        return ["conda env list"]
    from pathlib import Path

    from conda_torchcheck.inventory.locate import envs_dirs

    home = Path.home()
    return [str(d) for d in envs_dirs()] + [str(home / ".conda" / "environments.txt")] + _python_install_places()


def _python_install_places() -> list[str]:
    from pathlib import Path

    home = Path.home()
    return [str(home / ".local" / "share" / "uv" / "python"), str(home / ".pyenv" / "versions")]


def execute_fleet(args: argparse.Namespace, fmt: str) -> int:
    from conda_torchcheck.errors import UsageError
    from conda_torchcheck.fleet import audit, stderr_progress
    from conda_torchcheck.render.style import wants_color

    if fmt == "markdown":
        raise UsageError("--format markdown is not available with --all-envs (text or json)")
    options = {
        "hashes": bool(getattr(args, "hashes", False)),
        "only": split_ids(args.only),
        "skip": split_ids(args.skip),
        "lang": getattr(args, "lang", None),
        "live": not getattr(args, "ignore_environment", False),
    }
    doc = audit(fleet_targets(args), options, progress=stderr_progress())
    doc["looked_in"] = fleet_places(args)
    if fmt == "json":
        import json

        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    else:
        from conda_torchcheck.render.fleet import render_fleet_text

        # `conda torchcheck --all` (conda's env list handed over) names conda's command in the footer
        command = "conda torchcheck" if getattr(args, "known_envs", None) is not None else "conda-torchcheck"
        sys.stdout.write(render_fleet_text(doc, lang=args.lang, color=wants_color(sys.stdout), command=command))
    return int(doc["exit_code"])
