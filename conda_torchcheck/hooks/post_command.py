"""The check after ``install``/``create``/``update``/``remove``/``env create``/``env update``.

When the command changed torch-related packages, check the env it changed (the engine's ``check``, without file
hashing) and print at most six lines to stderr: the errors and the one command that shows the full report.
Silent when nothing torch-related changed or nothing is wrong. Never raises (a raising post-command turns the
user's successful install into a failure) and never writes to stdout.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the findings (and their message catalogs) load only when there is something to check
    from conda_torchcheck.findings import Finding

#: conda command names, old and new spellings (`conda env create` is `create` since 26.7, `env_create` before)
RUN_FOR = frozenset({"install", "create", "update", "remove", "env_create", "env_update"})
MAX_LINES = 6


@dataclass(frozen=True)
class Target:
    prefix: str
    changed: tuple[str, ...]  # torch-related package names that changed


def summary_lines(
    prefix: str,
    findings: Sequence[Finding],
    *,
    lang: str | None = None,
    limit: int = MAX_LINES,
    already_warned: frozenset[str] | set[str] = frozenset(),
) -> list[str]:
    """The post-command message: errors first; warnings only as a count (minus those the post-solve guard
    already printed for this prefix); nothing when all is well."""
    from conda_torchcheck.findings import Severity
    from conda_torchcheck.hooks.summary import finding_lines, report_command
    from conda_torchcheck.messages import translate

    errors = [f for f in findings if f.severity is Severity.ERROR]
    warnings = [f for f in findings if f.severity is Severity.WARNING and f.id not in already_warned]
    command = report_command(prefix)
    if errors:
        imports = ", ".join(f"`import {name}`" for name in failing_imports(errors))
        lines = [translate("plugin.post_command.header", lang, prefix=prefix, imports=imports)]
        lines += finding_lines(errors, limit - 2, lang)
        lines.append(translate("plugin.post_command.full_report", lang, command=command))
        return lines[:limit]
    if warnings:
        return [
            translate("plugin.post_command.warnings_only", lang, prefix=prefix, count=len(warnings), command=command)
        ]
    return []


#: findings whose error breaks a companion's import, not torch's: the companions they name in their evidence
_COMPANION_ERRORS = {"TC104": ("torchvision", "torchaudio", "torchtext")}


def failing_imports(errors: Sequence[Finding]) -> list[str]:
    """The imports the errors break: a companion built for another torch breaks ``import torchvision``, while
    ``import torch`` still works; every other error breaks ``import torch``."""
    names: list[str] = []
    for f in errors:
        companions = [n for n in _COMPANION_ERRORS.get(f.id, ()) if n in f.evidence]
        for name in companions or ["torch"]:
            if name not in names:
                names.append(name)
    return sorted(names, key=lambda n: n != "torch")


def targets_after_command(command: str) -> list[Target]:
    """The prefixes this command changed, with the torch-related packages it changed there."""
    from conda_torchcheck.hooks.records import torch_related
    from conda_torchcheck.hooks.transaction import LOG, transaction_hooks_supported

    out = []
    records = LOG.take()
    if not records and not transaction_hooks_supported():
        from conda.base.context import context

        fallback = LOG.changes_since_snapshot(str(context.target_prefix))
        records = [fallback] if fallback is not None else []
    for rec in records:
        changed = torch_related(rec.changed_names)
        if changed:
            out.append(Target(rec.prefix, tuple(changed)))
    return out


def check_prefix(prefix: str) -> tuple[list[Finding], bool]:
    """Engine findings for ``prefix`` (quick: no hashing, no import test); and whether torch is installed."""
    from conda_torchcheck.checks import run_checks
    from conda_torchcheck.checks.context import CheckContext, CheckOptions
    from conda_torchcheck.inventory import load_environment

    env, host = load_environment(prefix)
    ctx = CheckContext(env, host, CheckOptions(verify_hashes=False, import_test=False))
    if not ctx.torch.installed:
        return [], False
    return run_checks(ctx), True


def maybe_install_activation_hooks(prefix: str, torch_installed: bool) -> str | None:
    """Refresh this tool's activation scripts when present; install them when the setting asks for it.

    Returns a line to print when scripts were installed for the first time.
    """
    from conda_torchcheck.hooks.activation import install as activation
    from conda_torchcheck.hooks.settings import setting
    from conda_torchcheck.messages import translate

    status = activation.status(Path(prefix))
    if status.installed_any:
        activation.install(Path(prefix), only_if_changed=True)
        return None
    if torch_installed and setting("torchcheck_activation_hooks"):
        result = activation.install(Path(prefix))
        return translate("plugin.post_command.hooks_installed", path=str(result.directory))
    return None


def post_command(command: str) -> None:
    """conda's post-command hook. Catches everything: the user's command already succeeded."""
    from conda_torchcheck.hooks.summary import emit, report_command

    prefix = ""
    try:
        if command not in RUN_FOR:
            return
        from conda_torchcheck.hooks.settings import setting

        targets = targets_after_command(command)
        auto = setting("torchcheck_auto")
        for target in targets:
            if not os.path.isdir(os.path.join(target.prefix, "conda-meta")):
                continue  # `remove --all` / `env remove`: the env is gone, nothing to check
            prefix = target.prefix
            lines: list[str] = []
            findings: list[Finding] = []
            torch_installed = False
            if auto or setting("torchcheck_activation_hooks"):
                findings, torch_installed = check_prefix(target.prefix)
            hooks_line = maybe_install_activation_hooks(target.prefix, torch_installed)
            if auto:
                from conda_torchcheck.hooks.transaction import LOG

                lines = summary_lines(target.prefix, findings, already_warned=LOG.already_warned(target.prefix))
            if hooks_line:
                lines = [*lines[: MAX_LINES - 1], hooks_line]
            emit(lines, MAX_LINES)
    except Exception as exc:
        from conda_torchcheck.messages import translate

        emit(
            [
                translate(
                    "plugin.post_command.failed",
                    error=f"{type(exc).__name__}: {exc}",
                    command=report_command(prefix) if prefix else "conda torchcheck",
                )
            ],
            1,
        )


def pre_command(command: str) -> None:
    """Fallback for conda without transaction actions: remember the target's conda-meta listing."""
    try:
        if command not in RUN_FOR:
            return
        from conda_torchcheck.hooks.transaction import LOG, transaction_hooks_supported

        if transaction_hooks_supported():
            return
        from conda.base.context import context

        LOG.snapshot(str(context.target_prefix))
    except Exception:
        pass
