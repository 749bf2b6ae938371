"""conda plugin hooks for conda-torchcheck.

conda imports this module on every command (even with --no-plugins), so it stays thin: at module level only
conda's ``hookimpl`` and the plugin-types module. Every hook imports its implementation when it is called, and
a hook whose type the running conda lacks yields nothing instead of failing. A test asserts the module set.
"""

from __future__ import annotations

from conda.plugins import hookimpl
from conda.plugins import types as plugin_types

PLUGIN = "conda-torchcheck"
SUMMARY = "Why `import torch` fails (or will fail) in an environment, proven from its files, with the fix."
#: conda command names the post-command check runs for, old and new spellings: `conda env create` is `create`
#: since conda 26.7 and `env_create` before; `conda env update` is `env_update`
RUN_FOR = frozenset({"install", "create", "update", "remove", "env_create", "env_update"})


_PARSER_PROBLEM = []


def _configure_parser(parser):
    # conda builds every plugin's parser on every command: a failure here must not break `conda install`
    try:
        from conda_torchcheck.hooks.subcommand import configure_parser

        configure_parser(parser)
    except Exception as exc:
        _PARSER_PROBLEM.append(f"{type(exc).__name__}: {exc}")
        parser.greedy = True  # conda then hands the action the raw arguments, whatever they are


def _execute(args):
    if _PARSER_PROBLEM:
        import sys

        print(f"{PLUGIN}: error: the command line could not be set up ({_PARSER_PROBLEM[-1]})", file=sys.stderr)
        return 2
    from conda_torchcheck.hooks.subcommand import execute

    return execute(args)


@hookimpl
def conda_subcommands():
    yield plugin_types.CondaSubcommand(
        name="torchcheck", summary=SUMMARY, action=_execute, configure_parser=_configure_parser
    )


def _unavailable(what, exc):
    """One line on stderr instead of an exception: the user's conda command must not fail because of us."""
    import sys

    try:
        print(f"{PLUGIN}: {what} unavailable ({type(exc).__name__}: {exc})", file=sys.stderr)
    except Exception:
        pass


def _post_command(command):
    try:
        from conda_torchcheck.hooks.post_command import post_command
    except Exception as exc:
        _unavailable("the torch check after this command is", exc)
        return
    post_command(command)  # never raises


def _pre_command(command):
    try:
        from conda_torchcheck.hooks.post_command import pre_command
    except Exception:
        return  # the post-command reports the same problem
    pre_command(command)  # never raises


@hookimpl
def conda_pre_commands():
    yield plugin_types.CondaPreCommand(name=f"{PLUGIN}-snapshot", action=_pre_command, run_for=set(RUN_FOR))
    yield from _envspec_hooks("pre_commands")


@hookimpl
def conda_post_commands():
    yield plugin_types.CondaPostCommand(name=f"{PLUGIN}-check", action=_post_command, run_for=set(RUN_FOR))


def _post_solve(repodata_fn, unlink_precs, link_precs):
    try:
        from conda_torchcheck.hooks.post_solve import post_solve
    except Exception as exc:
        _unavailable("the transaction check is", exc)
        return
    post_solve(repodata_fn, unlink_precs, link_precs)  # raises only to refuse under torchcheck_strict


@hookimpl
def conda_post_solves():
    yield plugin_types.CondaPostSolve(name=f"{PLUGIN}-guard", action=_post_solve)


@hookimpl
def conda_post_transaction_actions():
    # records the real target prefix and the packages changed, for the post-command (conda >= 25.5)
    action_type = getattr(plugin_types, "CondaPostTransactionAction", None)
    if action_type is None:
        return
    try:
        from conda_torchcheck.hooks.transaction import recorder_action_class

        action = recorder_action_class()
    except Exception as exc:  # a failing hook would fail every transaction
        _unavailable("transaction recording is", exc)
        return
    yield action_type(name=f"{PLUGIN}-record", action=action)


def _health_check(prefix, verbose):
    from conda_torchcheck.hooks.health import check

    check(prefix, verbose)


def _health_fix(prefix, args, confirm):
    from conda_torchcheck.hooks.health import fix

    return fix(prefix, args, confirm)


@hookimpl
def conda_health_checks():
    from dataclasses import fields

    try:
        from conda_torchcheck.hooks.health import CHECK_NAME, FIX_SUMMARY, SUMMARY
    except Exception as exc:
        _unavailable("the conda doctor torch check is", exc)
        return
    accepted = {f.name for f in fields(plugin_types.CondaHealthCheck)}
    extra = {"fixer": _health_fix, "summary": SUMMARY, "fix": FIX_SUMMARY}  # fixers: conda >= 26.1
    yield plugin_types.CondaHealthCheck(
        name=CHECK_NAME, action=_health_check, **{k: v for k, v in extra.items() if k in accepted}
    )


@hookimpl
def conda_settings():
    from conda.common.configuration import PrimitiveParameter

    try:
        from conda_torchcheck.hooks.settings import SETTINGS
    except Exception as exc:
        _unavailable("the torchcheck_* settings are", exc)
        return

    for spec in SETTINGS:
        yield plugin_types.CondaSetting(
            name=spec.name,
            description=spec.description,
            parameter=PrimitiveParameter(spec.default, element_type=bool),
        )


@hookimpl
def conda_environment_exporters():
    if getattr(plugin_types, "CondaEnvironmentExporter", None) is None:
        return
    yield from _envspec_hooks("environment_exporters")


def _envspec_hooks(name):
    """Plugin objects from the environment.yml integration (``envspec/conda_integration.py``), if present.

    A failure there must not break every conda command (a raising hook is fatal to conda), so it is
    reported on stderr and skipped.
    """
    import importlib

    module_name = "conda_torchcheck.envspec.conda_integration"
    try:
        module = importlib.import_module(module_name)
        provider = getattr(module, name, None)
        items = list(provider()) if provider is not None else []
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return
        items, error = [], exc
    except Exception as exc:
        items, error = [], exc
    else:
        error = None
    if error is not None:
        _unavailable("the environment.yml integration is", error)
    yield from items
