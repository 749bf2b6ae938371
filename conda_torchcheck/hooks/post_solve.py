"""The post-solve guard: look at the solved transaction before anything is downloaded or linked.

conda calls ``post_solve(repodata_fn, unlink_precs, link_precs)`` once or more per command (repodata fallback,
retries), without the prefix. The guard builds the records the env would hold after the transaction
(current − unlink + link), runs the engine's conda-level checks on them (the same code ``conda torchcheck``
runs: TC101–TC105), warns on stderr, and refuses the transaction (by raising, which leaves the env untouched)
only when ``torchcheck_strict`` is set.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conda_torchcheck.findings import Finding, Severity
from conda_torchcheck.hooks.advice import Advice
from conda_torchcheck.hooks.records import is_torch_related, record_key, to_conda_record
from conda_torchcheck.inventory.model import CondaRecord, Environment, HostFacts, PythonInfo
from conda_torchcheck.inventory.torch import TORCH_FAMILY_CONDA

#: the engine's checks that read only conda records (channels, variant, versions, mkl_ijit)
POST_SOLVE_CHECK_IDS: tuple[str, ...] = ("TC101", "TC102", "TC103", "TC104", "TC105")

_ARCH = {
    "win-64": "x86_64",
    "win-32": "x86",
    "win-arm64": "arm64",
    "linux-64": "x86_64",
    "linux-aarch64": "aarch64",
    "linux-ppc64le": "ppc64le",
    "osx-64": "x86_64",
    "osx-arm64": "arm64",
}


@dataclass(frozen=True)
class TransactionOutcome:
    prefix: str
    findings: tuple[Finding, ...]
    #: False when the unlinked records were not found in the prefix (the prefix conda reported is not the one
    #: being changed): then only the packages being linked were examined
    complete: bool

    @property
    def serious(self) -> list[Finding]:
        return [f for f in self.findings if f.severity in (Severity.ERROR, Severity.WARNING)]

    @property
    def signature(self) -> tuple[str, tuple[str, ...]]:
        return (
            os.path.normcase(self.prefix),
            tuple(sorted(f"{f.id}:{f.title.render('en')}" for f in self.serious)),
        )


def os_of_subdir(subdir: str) -> str:
    if subdir.startswith("win-"):
        return "windows"
    if subdir.startswith("osx-"):
        return "darwin"
    return "linux"


def transaction_records(
    current: Sequence[CondaRecord], unlink: Iterable[Any], link: Iterable[Any], prefix: Path
) -> tuple[tuple[CondaRecord, ...], bool]:
    """The records after the transaction, and whether every unlinked record was found in ``current``."""
    unlink_keys = {record_key(r) for r in unlink}
    link_records = [to_conda_record(r, prefix) for r in link]
    current_keys = {(r.name, r.version, r.build) for r in current}
    complete = unlink_keys <= current_keys
    if not complete:
        return tuple(sorted(link_records, key=lambda r: r.name)), False
    linked_names = {r.name for r in link_records}
    kept = [r for r in current if (r.name, r.version, r.build) not in unlink_keys and r.name not in linked_names]
    return tuple(sorted(kept + link_records, key=lambda r: r.name)), True


def transaction_environment(prefix: Path, subdir: str, records: tuple[CondaRecord, ...]) -> Environment:
    """An Environment holding only conda records: what the conda-level checks need, nothing read from disk."""
    python = next((r for r in records if r.name == "python"), None)
    return Environment(
        prefix=prefix,
        os=os_of_subdir(subdir),  # type: ignore[arg-type]
        platform=subdir,
        layout="conda",
        python=PythonInfo(
            executable=None,
            version=python.version if python else None,
            arch=_ARCH.get(subdir),
            version_source="transaction" if python else "",
        ),
        base_prefix=None,
        is_base=False,
        name=prefix.name,
        site_dirs=(),
        conda_records=records,
        distributions=(),
        leftovers=(),
        problems=(),
        is_active=None,
    )


def evaluate(
    prefix: Path, subdir: str, current: Sequence[CondaRecord], unlink: Sequence[Any], link: Sequence[Any]
) -> TransactionOutcome | None:
    """Run the conda-level checks on the post-transaction records; None when torch is not involved."""
    changed = [record_key(r)[0] for r in (*unlink, *link)]
    if not any(is_torch_related(n) for n in changed):
        return None
    records, complete = transaction_records(current, unlink, link, prefix)
    if not any(r.name in TORCH_FAMILY_CONDA for r in records):
        return None
    from conda_torchcheck.checks import run_checks
    from conda_torchcheck.checks.context import CheckContext, CheckOptions

    env = transaction_environment(prefix, subdir, records)
    ctx = CheckContext(env, HostFacts(live=False), CheckOptions(verify_hashes=False))
    findings = run_checks(ctx, only=POST_SOLVE_CHECK_IDS)
    return TransactionOutcome(str(prefix), tuple(findings), complete)


def warning_lines(
    outcome: TransactionOutcome,
    *,
    refused: bool,
    lang: str | None = None,
    advice: Sequence[Advice] = (),
    yes: bool = False,
) -> list[str]:
    """At most seven lines: what would break, the user's command corrected (``advice``, checked by the solver), and
    how to go on. Without a corrected command, a warning (the transaction goes ahead) names the whole fix to run
    after it; a refusal (nothing happens) names none, since a fix for an env that will not exist cannot run."""
    from conda_torchcheck.hooks.summary import finding_lines
    from conda_torchcheck.messages import translate

    key = "plugin.post_solve.refused" if refused else "plugin.post_solve.header"
    lines = [translate(key, lang, prefix=outcome.prefix)]
    if not outcome.complete:
        lines[0] += " " + translate("plugin.post_solve.partial", lang)
    fix_lines = []
    for i, a in enumerate(advice[:2]):
        which = "fix" if i == 0 else "fix_or"
        if a.keeps in ("cuda", "cpu"):
            which += f"_{a.keeps}"
        line = translate(f"plugin.post_solve.{which}", lang, command=" && ".join(a.commands))
        if not a.verified:
            line += " " + translate("plugin.post_solve.not_verified", lang)
        fix_lines.append(line)
    if not fix_lines and not refused:
        after = whole_fix(outcome.serious)
        if after:
            fix_lines.append(translate("plugin.post_solve.fix_after", lang, command=after))
    if refused:
        hints = [translate("plugin.post_solve.override", lang)]
    else:
        # two hints, two lines: how to stop this transaction, and how to refuse the next ones
        now = "plugin.post_solve.strict_hint_yes" if yes else "plugin.post_solve.strict_hint"
        hints = [translate(now, lang), translate("plugin.post_solve.strict_how", lang)]
    lines += finding_lines(outcome.serious, MAX_GUARD_LINES - 1 - len(fix_lines) - len(hints), lang)
    lines += fix_lines
    lines += hints
    return lines[:MAX_GUARD_LINES]


#: the guard's message at most: a header, the findings, the corrected command(s), the hints
MAX_GUARD_LINES = 7


def whole_fix(findings: Sequence[Finding]) -> str | None:
    """Every command of the first fix that has commands, joined so that it runs as one (a ``remove --force``
    alone would leave a half-fixed env)."""
    for f in findings:
        for fix in f.fixes:
            if fix.commands:
                return " && ".join(fix.commands)
    return None


# --- conda glue ------------------------------------------------------------------------------------------

_REPORTED: set[tuple[str, tuple[str, ...]]] = set()


@functools.cache
def refused_error_class() -> type:
    from conda.exceptions import CondaError

    class TorchcheckRefusedTransaction(CondaError):
        """The transaction would leave torch broken and ``torchcheck_strict`` is set (nothing was changed)."""

        return_code = 1

    return TorchcheckRefusedTransaction


def solve_target_prefix() -> str:
    """The prefix being solved for. ``context.target_prefix`` stays on base for ``conda env update -f FILE``
    when the env name comes from the file, so that case reads the name from the file as conda did."""
    from conda.base.context import context

    args = getattr(context, "_argparse_args", None) or {}
    func = str(args.get("func") or "")
    env_file = args.get("file")
    if func.endswith("main_env_update.execute") and env_file and not (args.get("name") or args.get("prefix")):
        try:
            from conda.core.prefix_data import PrefixData

            hook = context.plugin_manager.get_environment_specifier(source=env_file, name=context.environment_specifier)
            spec = hook.environment_spec(env_file)
            env = spec.env_for(context.subdir) if hasattr(spec, "env_for") else spec.env
            if getattr(env, "name", None):
                return str(PrefixData.from_name(env.name).prefix_path)
        except Exception:
            pass
    return str(context.target_prefix)


def current_records(prefix: str) -> tuple[CondaRecord, ...]:
    """The prefix's installed conda records, through conda (already parsed during the solve, no interop)."""
    if not os.path.isdir(os.path.join(prefix, "conda-meta")):
        return ()
    try:
        from conda.core.prefix_data import PrefixData

        records = PrefixData(prefix, interoperability=False).iter_records()
        out = []
        for rec in records:
            converted = to_conda_record(rec, Path(prefix))
            if converted.channel != "pypi":
                out.append(converted)
        return tuple(out)
    except Exception:
        from conda_torchcheck.inventory.conda_meta import read_conda_meta

        return read_conda_meta(Path(prefix))[0]


def post_solve(repodata_fn: str, unlink_precs: Sequence[Any], link_precs: Sequence[Any]) -> None:
    """conda's post-solve hook. Raises only to refuse a transaction under ``torchcheck_strict``."""
    from conda_torchcheck.hooks.summary import emit

    try:
        unlink_precs = tuple(unlink_precs or ())
        link_precs = tuple(link_precs or ())
        if not any(is_torch_related(record_key(r)[0]) for r in (*unlink_precs, *link_precs)):
            return
        from conda.base.context import context

        from conda_torchcheck.hooks.settings import setting

        prefix = solve_target_prefix()
        outcome = evaluate(Path(prefix), context.subdir, current_records(prefix), unlink_precs, link_precs)
        if outcome is None or not outcome.serious:
            return
        strict = setting("torchcheck_strict")
    except Exception as exc:  # a bug here must never cost the user their install
        from conda_torchcheck.messages import translate

        emit([translate("plugin.post_solve.failed", error=f"{type(exc).__name__}: {exc}")], limit=1)
        return
    if not strict and outcome.signature in _REPORTED:  # post_solve runs again on repodata fallback / retries
        return
    advice, yes = corrected_command(prefix, outcome)
    if strict:
        raise refused_error_class()("\n".join(warning_lines(outcome, refused=True, advice=advice)))
    _REPORTED.add(outcome.signature)
    from conda_torchcheck.hooks.transaction import LOG

    LOG.warned_at_solve(prefix, {f.id for f in outcome.serious})
    emit(warning_lines(outcome, refused=False, advice=advice, yes=yes), limit=MAX_GUARD_LINES)


def corrected_command(prefix: str, outcome: TransactionOutcome) -> tuple[list[Advice], bool]:
    """The user's command corrected (hooks/advice.py), checked by conda's solver; and whether -y was given.
    Never raises: without advice the warning still stands."""
    try:
        from conda.base.context import context

        from conda_torchcheck.hooks.advice import advise, request_from, solver_judge

        yes = bool(context.always_yes)
        request = request_from(getattr(context, "_argparse_args", None))
        if request is None:
            return [], yes
        return advise(request, outcome.serious, solver_judge(prefix, context.subdir, evaluate)), yes
    except Exception:
        return [], False
