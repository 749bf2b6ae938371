"""``conda torchcheck``: the standalone CLI's verbs under conda, following conda's conventions.

Each verb module's ``configure_parser(parser, conda=True)`` adds its own options; this glue adds conda's
``-n/-p`` (``add_parser_prefix``) and ``--json``/``-v``/``-q`` (``add_parser_json``) where the verb did not, and at
run time hands the verb conda's resolved values: ``context.target_prefix`` (``-n`` resolved through conda's envs
dirs), ``context.json`` (so ``json: true`` in .condarc works) and ``context.verbosity``.

``conda torchcheck -p X`` runs ``check`` (the default verb): its options are also accepted before any verb, and
conda's options (``-n/-p``, ``--json``, ``-v``) may stand before or after a verb.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
from collections.abc import Iterator
from types import ModuleType

#: verbs that look at no environment
NO_TARGET = frozenset({"explain", "list-checks"})


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


def configure_parser(parser: argparse.ArgumentParser) -> None:
    default = verb_module("check")
    if default is not None:
        default.configure_parser(parser, conda=True)
    _add_conda_options(parser, target=True)
    parser.set_defaults(_torchcheck_verb="check")
    sub = parser.add_subparsers(dest="_torchcheck_subverb", metavar="VERB", action=LazyVerbs)
    sub.required = False
    for verb in available_verbs():
        sub.add_parser(verb, help=None)


def execute(args: argparse.Namespace) -> int:
    """Run the chosen verb with conda's resolved prefix/json/verbosity; returns the verb's exit code."""
    from conda.base.context import context

    from conda_torchcheck.cli.main import run_verb

    verb = getattr(args, "_torchcheck_subverb", None) or getattr(args, "_torchcheck_verb", "check")
    module = verb_module(verb)
    args.json = bool(context.json)
    args.verbose = max(int(getattr(args, "verbose", 0) or 0), int(context.verbosity or 0))

    def run(parsed: argparse.Namespace) -> int:
        if getattr(parsed, "_torchcheck_target", False):
            resolve_target(parsed, context)
        return module.execute(parsed)

    args.func = run  # run_verb turns a TargetError into one line and exit code 2
    return run_verb(args)


def resolve_target(args: argparse.Namespace, context) -> None:
    """``args.prefix`` from conda: ``-n`` through conda's envs dirs, ``-p`` expanded, else the active env."""
    prefix = str(context.target_prefix)
    name = getattr(args, "name", None)
    if name and not os.path.isdir(prefix):
        from conda_torchcheck.errors import TargetError

        raise TargetError(f"no environment named '{name}'", hint="conda looked in " + ", ".join(context.envs_dirs))
    args.prefix = prefix
    args.name = None
