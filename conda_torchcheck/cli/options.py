"""Options several verbs share: target selection, output, host facts for examining foreign envs."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from conda_torchcheck.errors import UsageError
from conda_torchcheck.messages import translate


def add_target_options(parser: argparse.ArgumentParser, *, conda: bool = False) -> None:
    group = parser.add_argument_group("target environment")
    mutex = group.add_mutually_exclusive_group()
    mutex.add_argument("-p", "--prefix", metavar="PREFIX", help="the environment's root folder")
    mutex.add_argument("-n", "--name", metavar="NAME", help="a conda environment name (found without conda)")


def add_output_options(
    parser: argparse.ArgumentParser, *, formats: tuple[str, ...] = ("text", "json", "markdown"), json_flag: bool = True
) -> None:
    group = parser.add_argument_group("output")
    if json_flag:
        group.add_argument("--json", action="store_true", default=False, help="print one JSON document on stdout")
    group.add_argument("--format", choices=formats, default=None, help="output format (default: text)")
    group.add_argument(
        "--lang",
        choices=("en", "zh_CN"),
        default=None,
        help="language of the report (default: from LC_ALL/LC_MESSAGES/LANG)",
    )
    group.add_argument("-v", "--verbose", action="count", default=0, help="more detail (repeatable)")


def add_host_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "host facts", "for an env examined from another machine or OS (a Windows or macOS env from Linux, a copy)"
    )
    group.add_argument(
        "--system-root",
        metavar="DIR",
        type=Path,
        help=r"Windows: the directory whose System32 is searched (auto-detected under /mnt/<drive>/); macOS: a "
        "root holding System/Library/CoreServices/SystemVersion.plist (the Mac's version); Linux: the root of the "
        "machine the env runs on (its /proc/driver/nvidia and /etc/nv_tegra_release are read)",
    )
    group.add_argument("--path", dest="host_path", metavar="PATH", help="the PATH the env runs with")
    group.add_argument("--ld-library-path", metavar="PATH", help="the LD_LIBRARY_PATH the env runs with")
    group.add_argument("--cwd", metavar="DIR", type=Path, help="the working directory python starts in")
    group.add_argument(
        "--env",
        dest="host_env",
        metavar="NAME=VALUE",
        action="append",
        default=[],
        help="another variable of the env's process (repeatable)",
    )
    group.add_argument(
        "--ignore-environment",
        action="store_true",
        help="do not use this process's variables even when the env belongs to this machine",
    )


def host_overrides(args: argparse.Namespace) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in getattr(args, "host_env", None) or []:
        if "=" not in item:
            raise UsageError(translate("cli.usage.env_item", item=item))
        key, value = item.split("=", 1)
        out[key] = value
    if getattr(args, "host_path", None) is not None:
        out["PATH"] = args.host_path
    if getattr(args, "ld_library_path", None) is not None:
        out["LD_LIBRARY_PATH"] = args.ld_library_path
    return out


def output_format(args: argparse.Namespace) -> str:
    if getattr(args, "json", False):
        if args.format not in (None, "json"):
            raise UsageError(translate("cli.usage.json_and_format", format=args.format))
        return "json"
    return args.format or "text"


def load_target(args: argparse.Namespace):
    """(Environment, HostFacts) for the target named by -p/-n, or the active env."""
    from conda_torchcheck.inventory import load_environment
    from conda_torchcheck.inventory.locate import resolve_target

    prefix = resolve_target(getattr(args, "prefix", None), getattr(args, "name", None))
    return load_environment(
        prefix,
        use_live_host=not getattr(args, "ignore_environment", False),
        host_overrides=host_overrides(args),
        cwd=getattr(args, "cwd", None),
        system_root=getattr(args, "system_root", None),
    )


def split_ids(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for value in values or []:
        out.extend(v.strip() for v in value.replace(";", ",").split(",") if v.strip())
    return out


def environ_language() -> str | None:
    return os.environ.get("CONDA_TORCHCHECK_LANG")


def timeout_seconds(text: str) -> float:
    """``--import-timeout``: a finite number of seconds above zero (nan, inf and 0 would be no bound at all)."""
    import argparse
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or value <= 0 or value > 86_400:
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0 and at most 86400, not {text!r}")
    return value
