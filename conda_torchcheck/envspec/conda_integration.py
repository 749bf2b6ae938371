"""What the conda plugin registers for environment files (plugin.py imports this lazily, inside its hooks).

- :func:`exporter` → a ``CondaEnvironmentExporter``: ``conda export --format torchcheck`` (alias
  ``torchcheck-yaml``, or ``--file NAME.torchcheck.yml``) writes the spec :mod:`export` produces. It never
  claims ``environment.yml``: conda's own exporter keeps that name.
- :func:`pre_command` → for ``run_for={"create", "env_create"}`` (conda ≥ 26.7 reports ``conda env create``
  as ``create``; older conda as ``env_create``): runs ``spec check`` on the ``--file`` environment files and
  warns on stderr. It refuses the command only when the user set ``torchcheck_strict``; a problem of the
  check itself never breaks the user's command.

conda is imported inside the functions only.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

log = logging.getLogger(__name__)

FORMAT_NAME = "torchcheck"
ALIASES = ("torchcheck-yaml",)
DEFAULT_FILENAMES = ("*.torchcheck.yml", "*.torchcheck.yaml")
DESCRIPTION = "environment.yml with the torch family pinned to its channel and variant (conda-torchcheck)"
RUN_FOR = frozenset({"create", "env_create"})
PRE_COMMAND_NAME = "conda-torchcheck-envspec"
STRICT_SETTING = "torchcheck_strict"
YAML_SUFFIXES = (".yml", ".yaml")


def export(env: Any) -> str:
    """``CondaEnvironmentExporter.export``: conda's Environment → environment.yml text."""
    from conda_torchcheck.envspec.export import export_environment

    return export_environment(env)


def exporter_kwargs() -> dict[str, Any]:
    """The fields of the exporter, without importing conda (for tests and for plugin.py)."""
    return {
        "name": FORMAT_NAME,
        "aliases": ALIASES,
        "default_filenames": DEFAULT_FILENAMES,
        "export": export,
        "description": DESCRIPTION,
    }


def exporter() -> Any:
    """The ``CondaEnvironmentExporter`` to yield from ``conda_environment_exporters``."""
    from conda.plugins.types import CondaEnvironmentExporter

    return CondaEnvironmentExporter(**exporter_kwargs())


def environment_exporters() -> Iterator[Any]:
    """What plugin.py's ``conda_environment_exporters`` yields."""
    yield exporter()


def pre_commands() -> Iterator[Any]:
    """What plugin.py's ``conda_pre_commands`` yields (besides its own snapshot hook)."""
    from conda.plugins.types import CondaPreCommand

    yield CondaPreCommand(name=PRE_COMMAND_NAME, action=pre_command, run_for=set(RUN_FOR))


# ------------------------------------------------------------------------------------------------------------
# pre-command hook


def _files_from_args(args: Any) -> list[str]:
    if args is None:
        return []
    value = getattr(args, "file", None)
    if value is None and hasattr(args, "get"):
        try:
            value = args.get("file")
        except Exception:
            value = None
    if value is None:
        return []
    if isinstance(value, (str, os.PathLike)):
        return [os.fspath(value)]
    try:
        return [os.fspath(v) for v in value if isinstance(v, (str, os.PathLike))]
    except TypeError:
        return []


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def _strict(context: Any) -> bool:
    try:
        plugins = context.plugins
        value = getattr(plugins, STRICT_SETTING, None)
        if value is not None:
            return _truthy(value)
    except Exception:  # the setting is not registered (older plugin.py) or conda cannot load settings
        pass
    return _truthy(os.environ.get("CONDA_PLUGINS_" + STRICT_SETTING.upper(), ""))


def is_environment_file(path: str) -> bool:
    """Only local YAML environment files are checked (not requirements.txt, lockfiles or URLs)."""
    if "://" in path:
        return False
    return path.lower().endswith(YAML_SUFFIXES)


def check_files(paths: Iterable[str], *, command: str = "conda torchcheck") -> list[tuple[str, list[Any], str | None]]:
    """(path, findings, error) per environment file; never raises."""
    from conda_torchcheck.envspec import check_path
    from conda_torchcheck.errors import TorchCheckError

    results: list[tuple[str, list[Any], str | None]] = []
    for path in paths:
        if not is_environment_file(path) or not Path(path).is_file():
            continue
        try:
            result = check_path(path, command=command)
            findings = result.findings
            if not result.has_torch:
                # a file without torch: before conda's own command only what changes the torch it brings (conda
                # reports its ignored sections and bad names itself)
                findings = [f for f in findings if f.id == "TC619"]
            results.append((path, findings, None))
        except TorchCheckError as exc:
            results.append((path, [], str(exc)))
        except Exception as exc:  # a bug here must not stop conda
            log.debug("conda-torchcheck: checking %s failed", path, exc_info=True)
            results.append((path, [], None))
            del exc
    return results


def report(results: Sequence[tuple[str, list[Any], str | None]], stream: TextIO, *, quiet: bool = False) -> int:
    """Write the warnings; return the number of error findings."""
    from conda_torchcheck.findings import Severity
    from conda_torchcheck.messages import translate

    errors = 0
    for path, findings, error in results:
        if error:
            print(f"conda-torchcheck: {error}", file=stream)
            continue
        shown = [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING)]
        errors += sum(1 for f in findings if f.severity is Severity.ERROR)
        if not shown:
            continue
        print(translate("envspec.cli.hook_header", file=path), file=stream)
        for f in shown if not quiet else [f for f in shown if f.severity is Severity.ERROR]:
            sev = translate(f"severity.{f.severity.value}")
            print(f"  {sev.upper()} {f.id} {f.title.render()}", file=stream)
        # one hint per line: where the details are, and how to rewrite the file
        print("  " + translate("envspec.cli.hook_more", file=path), file=stream)
        print("  " + translate("envspec.cli.hook_rewrite", file=path), file=stream)
    return errors


_REFUSAL_CLASS: list[type] = []


def _refusal(message: str) -> Exception:
    """``TorchcheckStrictError(message)``: a CondaError, so conda prints one line (or a JSON error object)."""
    if not _REFUSAL_CLASS:
        from conda.exceptions import CondaError

        _REFUSAL_CLASS.append(
            type(
                "TorchcheckStrictError",
                (CondaError,),
                {
                    "__doc__": "conda-torchcheck refused the environment file (torchcheck_strict is set).",
                    "__module__": __name__,
                },
            )
        )
    return _REFUSAL_CLASS[0](message)


def pre_command(command: str) -> None:
    """``CondaPreCommand.action``: check ``conda env create -f FILE`` / ``conda create --file FILE``."""
    refusal: str | None = None
    try:
        if command not in RUN_FOR:
            return
        from conda.base.context import context

        files = _files_from_args(getattr(context, "_argparse_args", None))
        results = check_files(files)
        if not results:
            return
        errors = report(results, sys.stderr, quiet=bool(getattr(context, "quiet", False)))
        if errors and _strict(context):
            from conda_torchcheck.messages import translate

            first = next(path for path, findings, _ in results if any(f.severity.value == "error" for f in findings))
            refusal = translate("envspec.cli.hook_refused", file=first, count=errors)
    except Exception:  # never break the user's command on our own problem
        log.debug("conda-torchcheck: pre-command check failed", exc_info=True)
        return
    if refusal is not None:
        try:
            error = _refusal(refusal)
        except Exception:  # conda without conda.exceptions.CondaError: warn only
            log.debug("conda-torchcheck: cannot build the refusal", exc_info=True)
            return
        raise error
