"""``spec``: check an environment.yml (``spec check FILE``) or rewrite it into a reproducible spec
(``spec fix FILE [--diff | --write] [-p PREFIX] [--lock]``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from conda_torchcheck.errors import UsageError

HELP = "Check an environment.yml for torch problems, or rewrite it into a reproducible spec."


def _output_options(parser: argparse.ArgumentParser, conda: bool) -> None:
    group = parser.add_argument_group("output")
    # under conda, the parent parser may own --json: SUPPRESS keeps a sub-parser default from hiding its value
    group.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS if conda else False,
        help="print one JSON document on stdout",
    )
    group.add_argument(
        "--lang", choices=("en", "zh_CN"), default=None, help="language of the report (default: from the locale)"
    )
    group.add_argument("-v", "--verbose", action="count", default=0, help="more detail (repeatable)")


def configure_parser(parser: argparse.ArgumentParser, *, conda: bool = False) -> None:
    command = "conda torchcheck" if conda else "conda-torchcheck"
    parser.set_defaults(spec_command=command)
    sub = parser.add_subparsers(dest="spec_action", metavar="ACTION")

    check = sub.add_parser(
        "check",
        help="report what is wrong with FILE, torch-wise (channels, versions, pip index, variant)",
        description="Read an environment.yml and report, with line numbers, what will make `conda env create` "
        "fail or build a different torch than intended. Needs no environment.",
    )
    check.add_argument(
        "files", metavar="FILE", type=Path, nargs="+", help="an environment.yml (several: one report each)"
    )
    _output_options(check, conda)

    fix = sub.add_parser(
        "fix",
        help="rewrite FILE into a reproducible spec (prints a diff; --write changes the file)",
        description="Rewrite an environment.yml: explicit channel order with nodefaults, channel::name for the "
        "torch family, pinned versions, the right pip index URL, the CUDA variant in the form the channel "
        "uses. Comments and formatting are kept. Prints a unified diff and writes nothing unless --write.",
    )
    fix.add_argument("file", metavar="FILE", type=Path, help="an environment.yml")
    mode = fix.add_mutually_exclusive_group()
    mode.add_argument("--diff", action="store_true", help="print the diff (the default)")
    mode.add_argument("--write", action="store_true", help="write the fixed file (keeps FILE.bak)")
    fix.add_argument("--force", action="store_true", help="with --write: replace FILE even when it is read-only")
    target = fix.add_argument_group("pin from an installed environment")
    which = target.add_mutually_exclusive_group()
    suppress = {"default": argparse.SUPPRESS} if conda else {"default": None}
    which.add_argument("-p", "--prefix", metavar="PREFIX", help="pin exact versions from this env", **suppress)
    which.add_argument("-n", "--name", metavar="NAME", help="pin exact versions from this named env", **suppress)
    target.add_argument("--lock", action="store_true", help="with -p/-n: pin build strings as well")
    fix.add_argument(
        "--base-channel",
        choices=("defaults", "conda-forge"),
        default=None,
        help="the base channel to add when the file lists none (never added without this: see TC603)",
    )
    _output_options(fix, conda)


def execute(args: argparse.Namespace) -> int:
    from conda_torchcheck.messages import set_language

    if getattr(args, "lang", None):
        set_language(args.lang)
    action = getattr(args, "spec_action", None)
    if action == "check":
        return execute_check(args)
    if action == "fix":
        return execute_fix(args)
    raise UsageError("spec needs an action: check or fix", hint="conda-torchcheck spec check environment.yml")


def _wants_json(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "json", False))


def _command(args: argparse.Namespace) -> str:
    return getattr(args, "spec_command", "conda-torchcheck")


def execute_check(args: argparse.Namespace) -> int:
    from conda_torchcheck.envspec import check_path

    lang = getattr(args, "lang", None)
    if len(args.files) == 1:
        result = check_path(args.files[0], command=_command(args))
        if _wants_json(args):
            print(json.dumps(result.to_dict(lang), indent=2, ensure_ascii=False))
        else:
            sys.stdout.write(result.render_text(lang=lang, verbose=getattr(args, "verbose", 0)))
        return 1 if result.has_errors else 0
    return _check_many(args, lang)


def _check_many(args: argparse.Namespace, lang: str | None) -> int:
    """Several files (a pre-commit hook passes every staged one): a report each; a file that cannot be read
    is reported and the others are still checked. Exit code: 2 if one could not be read, else 1 on errors."""
    from conda_torchcheck.cli.main import error_document, print_input_error
    from conda_torchcheck.envspec import check_path
    from conda_torchcheck.errors import TorchCheckError
    from conda_torchcheck.schema import header

    docs, code = [], 0
    for path in args.files:
        try:
            result = check_path(path, command=_command(args))
        except TorchCheckError as exc:
            code = 2
            if _wants_json(args):
                docs.append(error_document(exc))
            else:
                print_input_error(exc, json_output=False)
            continue
        if result.has_errors and code == 0:
            code = 1
        if _wants_json(args):
            docs.append(result.to_dict(lang))
        else:
            sys.stdout.write(result.render_text(lang=lang, verbose=getattr(args, "verbose", 0)))
    if _wants_json(args):
        print(json.dumps({**header("spec-checks"), "files": docs, "exit_code": code}, indent=2, ensure_ascii=False))
    return code


def _installed(args: argparse.Namespace):
    prefix, name = getattr(args, "prefix", None), getattr(args, "name", None)
    if not prefix and not name:
        if getattr(args, "lock", False):
            raise UsageError("--lock needs -p PREFIX or -n NAME (build strings come from an installed env)")
        return None
    from conda_torchcheck.envspec.rewrite import installed_from_environment
    from conda_torchcheck.inventory import load_environment
    from conda_torchcheck.inventory.locate import resolve_target

    env, _host = load_environment(resolve_target(prefix, name), use_live_host=False)
    return installed_from_environment(env)


def _writable_or_refused(args: argparse.Namespace) -> int:
    """The number of hard links of FILE, after refusing (exit 2) a read-only FILE unless --force: a file
    made read-only is not to be replaced without a word (root could write it anyway)."""
    import os
    import stat

    from conda_torchcheck.envspec.writefile import WriteError

    try:
        st = os.stat(args.file)
    except (OSError, ValueError):
        return 1  # the reader says what is wrong with it
    if not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) and not getattr(args, "force", False):
        raise WriteError(f"{args.file} is read-only: not changed (add --force to replace it anyway)")
    return st.st_nlink


def execute_fix(args: argparse.Namespace) -> int:
    from conda_torchcheck.envspec import fix_path
    from conda_torchcheck.messages import translate

    lang = getattr(args, "lang", None)
    links = _writable_or_refused(args) if args.write else 1
    installed = _installed(args)
    result = fix_path(
        args.file,
        installed=installed,
        lock=bool(getattr(args, "lock", False)),
        write=args.write,
        base_channel=getattr(args, "base_channel", None),
    )
    after_errors = any(f.severity.value == "error" for f in result.findings_after)
    if _wants_json(args):
        print(json.dumps(result.to_dict(lang), indent=2, ensure_ascii=False))
        return 1 if after_errors else 0
    if not result.changed:
        print(translate("envspec.cli.unchanged", lang, file=str(args.file)))
    elif args.write:
        sys.stdout.write(result.render_changes(lang))
        print(translate("envspec.cli.written", lang, file=str(args.file), backup=str(result.backup)))
        if links > 1:  # the rename gave FILE a new inode: its other names still hold the old text
            print(
                f"note: {args.file} had {links} hard links; only this name has the fixed text, the "
                f"{links - 1} other(s) keep the old one",
                file=sys.stderr,
            )
    else:
        sys.stdout.write(result.diff)
        sys.stderr.write(result.render_changes(lang))
        print(translate("envspec.cli.dry_run", lang, file=str(args.file)), file=sys.stderr)
    stream = sys.stdout if (args.write or not result.changed) else sys.stderr
    for line in result.render_unresolved(lang):
        print(line, file=stream)
    if after_errors:
        print(
            translate(
                "envspec.cli.errors_remain", lang, count=sum(f.severity.value == "error" for f in result.findings_after)
            ),
            file=stream,
        )
    return 1 if after_errors else 0
