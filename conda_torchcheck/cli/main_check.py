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
    return check_environment(env, host, options, only, skip, facts=output_format(args) == "markdown")


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
    return 1 if report.has_errors else 0


def fleet_targets(args: argparse.Namespace):
    """(prefix, where found) for --all-envs: a -p first, then what conda knows (conda's own list under
    ``conda torchcheck --all``, the same places found without conda otherwise)."""
    from pathlib import Path

    from conda_torchcheck.errors import UsageError
    from conda_torchcheck.inventory.locate import known_envs
    from conda_torchcheck.messages import translate

    if getattr(args, "name", None):
        raise UsageError(translate("fleet.all_envs_and_target"))
    known = getattr(args, "known_envs", None)
    targets = list(known) if known is not None else known_envs()
    if getattr(args, "prefix", None):
        given = Path(args.prefix).expanduser().absolute()
        targets = [(given, "-p")] + [t for t in targets if t[0].absolute() != given]
    return targets


def fleet_places(args: argparse.Namespace) -> list[str]:
    """Where --all-envs looked for envs (shown when it found none)."""
    if getattr(args, "known_envs", None) is not None:
        return ["conda env list"]
    from pathlib import Path

    from conda_torchcheck.inventory.locate import envs_dirs

    home = Path.home()
    return [str(d) for d in envs_dirs()] + [str(home / ".conda" / "environments.txt")]


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

        sys.stdout.write(render_fleet_text(doc, lang=args.lang, color=wants_color(sys.stdout)))
    return int(doc["exit_code"])
