"""Entry point of the standalone ``conda-torchcheck`` command (also ``python -m conda_torchcheck``)."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from conda_torchcheck import __version__
from conda_torchcheck.cli import DEFAULT_VERB, VERBS
from conda_torchcheck.errors import TorchCheckError
from conda_torchcheck.render.style import terminal_columns


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, sized to the terminal without importing shutil.

    argparse makes a formatter for every ``add_argument`` and each one imports shutil (with zlib, bz2 and
    lzma) just to read the terminal width: ~4 ms of a `tree` run that must finish in well under 100 ms.
    """

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, terminal_columns() - 2 if width is None else width)


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser; when the command line asked for JSON, a usage error is raised as :class:`UsageError`
    (printed as one JSON document) instead of argparse's usage lines on stderr."""

    json_requested = False

    def error(self, message: str):  # type: ignore[override]
        if not self.json_requested:
            super().error(message)
        from conda_torchcheck.errors import UsageError

        raise UsageError(message, hint=self.format_usage().strip())


def json_requested(argv: Sequence[str]) -> bool:
    """Whether the raw command line asks for JSON output (``--json``, ``--format json``, ``--format=json``)."""
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == "--json" or arg == "--format=json" or (arg == "--format" and argv[i + 1 : i + 2] == ["json"]):
            return True
    return False


def _verb_modules(only: str | None = None):
    for verb, module_name in VERBS.items():
        if only is not None and verb != only:
            continue
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue
            raise
        yield verb, module


def configure_parser(parser: argparse.ArgumentParser, only: str | None = None) -> None:
    """Add the verbs as sub-commands of ``parser``; with ``only``, just that one.

    Building every verb's parser imports every verb module; a run needs one, so ``main`` asks for one.
    """
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    for verb, module in _verb_modules(only):
        verb_parser = sub.add_parser(verb, help=module.HELP, description=module.HELP, formatter_class=HelpFormatter)
        module.configure_parser(verb_parser)
        verb_parser.set_defaults(func=module.execute)


def generate_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = ArgumentParser(
        formatter_class=HelpFormatter,
        prog="conda-torchcheck",
        description="Tell exactly why `import torch` fails (or will fail) in an environment, and how to fix it.",
    )
    parser.add_argument("-V", "--version", action="version", version=f"conda-torchcheck {__version__}")
    configure_parser(parser, only)
    return parser


def with_default_verb(argv: Sequence[str]) -> list[str]:
    argv = list(argv)
    if not argv:
        return [DEFAULT_VERB]
    if argv[0] in VERBS or argv[0] in ("-h", "--help", "-V", "--version"):
        return argv
    if argv[0].startswith("-"):
        return [DEFAULT_VERB, *argv]
    return argv


def run_verb(args: argparse.Namespace) -> int:
    """Run the parsed verb; input problems become one line on stderr and exit code 2."""
    from conda_torchcheck import messages

    previous = messages.language_override()
    if getattr(args, "lang", None):
        messages.set_language(args.lang)
    try:
        try:
            return int(args.func(args) or 0)
        except (TorchCheckError, KeyboardInterrupt, BrokenPipeError):
            raise
        except Exception as exc:  # a bug of ours: our own error (exit 2), never a traceback
            if os.environ.get("CONDA_TORCHCHECK_DEBUG"):
                raise
            from conda_torchcheck.errors import InternalError

            raise InternalError(exc) from exc
    except TorchCheckError as exc:
        on_input_error = getattr(args, "on_input_error", None)
        if on_input_error is not None:  # conda torchcheck: conda's own error shape
            return on_input_error(exc)
        wants_json = bool(getattr(args, "json", False)) or getattr(args, "format", None) == "json"
        return print_input_error(exc, json_output=wants_json)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    finally:
        # in-process callers (the conda subcommand, tests) must not inherit this call's --lang
        messages.set_language(previous)


def error_document(exc: BaseException) -> dict[str, object]:
    """An input problem as JSON: conda's error keys (``error``, ``exception_name``, ``exception_type``,
    ``message``, as ``conda install --json`` prints them) plus the tool, its schema version, hint and exit code."""
    from conda_torchcheck.schema import header

    name = type(exc).__name__
    return {
        **header("error"),
        "error": f"{name}: {exc}",
        "exception_name": name,
        "exception_type": str(type(exc)),
        "message": str(exc),
        "hint": getattr(exc, "hint", None),
        "exit_code": int(getattr(exc, "exit_code", 2)),
    }


def print_input_error(exc: BaseException, *, json_output: bool) -> int:
    """One JSON document on stdout, or one line (and a hint) on stderr; returns the exit code (2)."""
    from conda_torchcheck import messages

    if json_output:
        import json

        print(json.dumps(error_document(exc), indent=2, ensure_ascii=False))
    else:
        print(messages.translate("cli.error_prefix", message=str(exc)), file=sys.stderr)
        hint = getattr(exc, "hint", None)
        if hint:
            print(messages.translate("cli.hint_prefix", hint=hint), file=sys.stderr)
    return int(getattr(exc, "exit_code", 2))


def tune_collector_for_one_run() -> None:
    """The cyclic collector set for a process that runs one command and exits: what exists when the command
    starts (modules, classes, functions) is never garbage, so it leaves the collector's generations
    (``gc.freeze``), and the young generation holds 50,000 objects rather than 700 before a collection. A
    check of a torch env makes some 60,000 objects and keeps most to the end: at 700, some 80 collections
    walked them, ~15 ms of a 170 ms run; at 10,000, the four left during the check of a real torch venv
    still took 15-20 ms (they walk the young symbol and RECORD tuples); at 50,000 none is left after the
    start (~1.5 ms in all), with the same peak RSS: the run's garbage is freed by reference counting. Cycles
    are still collected (conda's process, which runs the plugin, and callers of :func:`main` with arguments
    are left alone)."""
    import gc

    gc.freeze()
    gc.set_threshold(50_000, 50, 100)


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:  # the process is this command: the console script, or python -m conda_torchcheck
        tune_collector_for_one_run()
    if (sys.stdout.encoding and sys.stdout.encoding.lower() not in ("utf-8", "utf8")) or (
        getattr(sys.stdout, "errors", None) == "strict"
    ):
        try:  # Windows consoles, C locales, PYTHONIOENCODING: don't die on 中文 paths or undecodable bytes
            sys.stdout.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
            sys.stderr.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
        except (AttributeError, ValueError):
            pass
    argv = with_default_verb(sys.argv[1:] if argv is None else argv)
    parser = generate_parser(only=argv[0] if argv[0] in VERBS else None)
    ArgumentParser.json_requested = json_requested(argv)
    try:
        args = parser.parse_args(argv)
    except TorchCheckError as exc:
        return print_input_error(exc, json_output=True)
    finally:
        ArgumentParser.json_requested = False
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return run_verb(args)


if __name__ == "__main__":
    raise SystemExit(main())
