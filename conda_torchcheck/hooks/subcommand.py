"""``conda torchcheck``: the standalone CLI's verbs under conda, following conda's conventions.

conda builds every plugin subcommand's parser on every command (``conda list`` too), so at that time this
module adds nothing but a catch-all (:func:`configure_parser`: conda hands the action the raw arguments) and a
``-h/--help`` that is passed on with them. The real parser is built only when ``conda torchcheck`` itself runs
(:func:`build_parser`): each verb module's ``configure_parser(parser, conda=True)`` adds its own options, and
this glue adds conda's ``-n/-p`` (``add_parser_prefix``) and ``--json``/``-v``/``-q`` (``add_parser_json``) where
the verb did not. The target is then resolved the way conda resolves it (``-n`` through conda's envs dirs, ``-p``
expanded, else the active env); ``context.json`` (so ``json: true`` in .condarc works) and ``context.verbosity``
are honoured.

``conda torchcheck -p X`` runs ``check`` (the default verb): its options are also accepted before any verb, and
conda's options (``-n/-p``, ``--json``, ``-v``) may stand before or after a verb. With ``--json`` an input
problem is one JSON document on stdout in conda's own error shape, exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
from collections.abc import Iterator
from types import ModuleType

#: verbs that look at no environment
NO_TARGET = frozenset({"explain", "run", "list-checks", "docs"})


def verb_modules() -> Iterator[tuple[str, ModuleType]]:
    from conda_torchcheck.cli import VERBS

    for verb in VERBS:
        module = verb_module(verb)
        if module is not None:
            yield verb, module


def verb_module(verb: str) -> ModuleType | None:
    """The module of ``verb``, or None when that verb is not written yet on this branch."""
    from conda_torchcheck.cli import VERBS

    module_name = VERBS[verb]
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return None
        raise


def available_verbs() -> list[str]:
    """Verb names whose module exists, found without importing them."""
    from conda_torchcheck.cli import VERBS

    return [verb for verb, name in VERBS.items() if importlib.util.find_spec(name) is not None]


def _has_option(parser: argparse.ArgumentParser, option: str) -> bool:
    return option in parser._option_string_actions


def _add_conda_options(parser: argparse.ArgumentParser, *, target: bool) -> None:
    from conda.cli.helpers import add_parser_json, add_parser_prefix

    # conda's -v/-q replace a verb's own: resolve, do not clash
    parser.conflict_handler = "resolve"
    if target and not (_has_option(parser, "-p") or _has_option(parser, "--prefix")):
        add_parser_prefix(parser)
    if not _has_option(parser, "--json") or not _has_option(parser, "--console"):
        add_parser_json(parser)
    parser.set_defaults(_torchcheck_target=target)


def configure_verb(verb: str, parser: argparse.ArgumentParser) -> None:
    module = verb_module(verb)
    if module is None or getattr(parser, "_torchcheck_configured", False):
        return
    parser.description = module.HELP
    module.configure_parser(parser, conda=True)
    _add_conda_options(parser, target=verb not in NO_TARGET)
    parser.set_defaults(_torchcheck_verb=verb)
    parser._torchcheck_configured = True  # type: ignore[attr-defined]


class LazyVerbs(argparse._SubParsersAction):
    """Sub-parsers filled in only when used: conda builds every plugin's parser on every command (``conda
    list`` too), so a verb's module is imported and its options added only when that verb is parsed, and its
    help line only when ``conda torchcheck --help`` is printed."""

    def __call__(self, parser, namespace, values, option_string=None):
        chosen = self._name_parser_map.get(values[0]) if values else None
        if chosen is not None:
            configure_verb(values[0], chosen)
        before = dict(vars(namespace))
        super().__call__(parser, namespace, values, option_string)
        if chosen is None:
            return
        # argparse lets the verb's defaults overwrite options given before the verb
        # (`conda torchcheck -n foo tree`): keep what the user gave there
        for key, value in before.items():
            if value != parser.get_default(key) and getattr(namespace, key, None) == chosen.get_default(key):
                setattr(namespace, key, value)

    def _get_subactions(self):
        for action in self._choices_actions:
            if action.help is None:
                module = verb_module(action.dest)
                action.help = module.HELP if module is not None else ""
        return super()._get_subactions()


class _PassHelpOn(argparse.Action):
    """``-h``/``--help`` at conda's parse time: handed to the action with the other raw arguments (argparse adds a
    namespace's unrecognised-arguments list to the ones it returns), so the real parser prints the help of the
    verb asked for."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest=argparse.SUPPRESS, nargs=0, help=argparse.SUPPRESS)

    def __call__(self, parser, namespace, values, option_string=None):
        vars(namespace).setdefault(argparse._UNRECOGNIZED_ARGS_ATTR, []).append("--help")


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """What conda builds on every command: a catch-all. The real parser is :func:`build_parser`, at run time."""
    parser.greedy = True  # conda: every argument after `torchcheck` goes to the action as it was typed
    if "-h" not in parser._option_string_actions:  # conda's sub-parsers come without one
        parser.add_argument("-h", "--help", action=_PassHelpOn)


def build_parser() -> argparse.ArgumentParser:
    from conda.cli.conda_argparse import ArgumentParser

    from conda_torchcheck.cli.main import HelpFormatter

    class Parser(ArgumentParser):
        def error(self, message):
            from conda_torchcheck.errors import UsageError

            raise UsageError(message, hint=self.format_usage().strip())

    parser = Parser(prog="conda torchcheck", description=_summary(), formatter_class=HelpFormatter)
    default = verb_module("check")
    if default is not None:
        default.configure_parser(parser, conda=True)
    _add_conda_options(parser, target=True)
    parser.set_defaults(_torchcheck_verb="check")
    sub = parser.add_subparsers(dest="_torchcheck_subverb", metavar="VERB", action=LazyVerbs)
    sub.required = False
    for verb in available_verbs():
        sub.add_parser(verb, help=None, formatter_class=HelpFormatter)
    return parser


def _summary() -> str:
    from conda_torchcheck.plugin import SUMMARY

    return SUMMARY


def execute(raw: argparse.Namespace | tuple[str, ...] | list[str]) -> int:
    """Parse ``conda torchcheck``'s arguments and run the chosen verb with conda's resolved prefix, json and
    verbosity; returns the verb's exit code. ``raw`` is what conda hands a greedy subcommand: the arguments.

    A bug of ours anywhere in here is our own error document (exit 2), not conda's "An unexpected error has
    occurred" report, which asks the user to disable plugins."""
    import os

    from conda.exceptions import CondaError

    from conda_torchcheck.errors import InternalError

    try:
        return _execute(raw)
    except (CondaError, KeyboardInterrupt):  # ours on purpose (report_input_error), or the user's ^C
        raise
    except Exception as exc:
        if os.environ.get("CONDA_TORCHCHECK_DEBUG"):
            raise
        from conda.base.context import context

        return report_input_error(InternalError(exc), bool(context.json))


def _execute(raw: argparse.Namespace | tuple[str, ...] | list[str]) -> int:
    from conda.base.context import context

    from conda_torchcheck.cli.main import json_requested, run_verb
    from conda_torchcheck.errors import TorchCheckError

    argv = list(raw) if not isinstance(raw, argparse.Namespace) else list(getattr(raw, "_args", ()))
    wants_json = bool(context.json) or json_requested(argv)
    try:
        args = build_parser().parse_args(argv)
    except TorchCheckError as exc:
        return report_input_error(exc, wants_json)
    except SystemExit as exc:  # --help, printed
        return int(exc.code or 0)
    verb = getattr(args, "_torchcheck_subverb", None) or getattr(args, "_torchcheck_verb", "check")
    module = verb_module(verb)
    args.json = bool(context.json) or bool(getattr(args, "json", False))
    args.verbose = max(int(getattr(args, "verbose", 0) or 0), int(context.verbosity or 0))

    def run(parsed: argparse.Namespace) -> int:
        if getattr(parsed, "all_envs", False):
            known_by_conda(parsed, context)
        elif getattr(parsed, "_torchcheck_target", False):
            resolve_target(parsed, context)
        return module.execute(parsed)

    args.func = run
    args.on_input_error = lambda exc: report_input_error(exc, args.json)
    return run_verb(args)


def report_input_error(exc: Exception, wants_json: bool) -> int:
    """An input problem under conda: with --json, conda prints it as one JSON document in its own error shape
    (``error``, ``exception_name``, ``exception_type``, ``message``) on stdout; else our lines on stderr."""
    from conda_torchcheck.cli.main import print_input_error

    if not wants_json:
        return print_input_error(exc, json_output=False)
    from conda.exceptions import CondaError

    from conda_torchcheck.schema import header

    class TorchcheckInputError(CondaError):
        return_code = 2

        def __init__(self, message: str, hint: str | None) -> None:
            # conda formats its message with the keyword arguments: a literal % (WinError texts) must survive
            super().__init__(message.replace("%", "%%"), hint=hint, exit_code=2, **header("error"))

    TorchcheckInputError.__name__ = TorchcheckInputError.__qualname__ = type(exc).__name__
    TorchcheckInputError.__module__ = type(exc).__module__
    raise TorchcheckInputError(str(exc), getattr(exc, "hint", None)) from exc


def resolve_target(args: argparse.Namespace, context) -> None:
    """``args.prefix`` as conda resolves it: ``-n`` through conda's envs dirs, ``-p`` expanded, else the active
    env (conda's ``determine_target_prefix``). A name conda does not know is our input error (exit code 2)."""
    from conda.base.context import determine_target_prefix

    from conda_torchcheck.errors import TargetError

    name = getattr(args, "name", None)
    try:
        prefix: str | None = str(determine_target_prefix(context, args))
    except Exception:  # conda's EnvironmentNameNotFound and friends
        if not name:
            raise
        prefix = None
    if name and (prefix is None or not os.path.isdir(prefix)):
        looked_in = ", ".join(map(str, context.envs_dirs))
        raise TargetError(f"no environment named '{name}'", hint="conda looked in " + looked_in)
    args.prefix = prefix
    args.name = None


def known_by_conda(args: argparse.Namespace, context) -> None:
    """``conda torchcheck --all``: the envs conda itself lists (``conda env list``), a ``-p`` expanded."""
    from pathlib import Path

    from conda.core.envs_manager import list_all_known_prefixes

    root = os.path.normcase(os.path.realpath(str(context.root_prefix)))
    known = []
    for prefix in list_all_known_prefixes():
        where = "base" if os.path.normcase(os.path.realpath(prefix)) == root else "conda env list"
        known.append((Path(prefix), where))
    args.known_envs = known
    if getattr(args, "prefix", None):
        args.prefix = os.path.abspath(os.path.expanduser(args.prefix))
