"""Checks: small modules that turn facts into findings. conda_torchcheck.registry lists them in run order.

Each module defines ``CHECK = Check.declared(__name__, run)``. A check's ``run(ctx)`` yields :class:`Finding`
objects and should not raise for bad input. When it does, the runner keeps what it yielded before and reports
the value it could not use (TC909); any other exception is a bug in the check (TC990).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Sequence

from conda_torchcheck import registry
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.findings import Finding, Severity, finding, with_check
from conda_torchcheck.records import Record


class Check(Record):
    """One check as the registry declares it, and the function that runs it."""

    __slots__ = ("name", "ids", "summary", "run", "platforms")

    def __init__(
        self,
        name: str,
        ids: tuple[str, ...],
        summary: str,
        run: Callable[[CheckContext], Iterable[Finding]],
        platforms: tuple[str, ...] = ("windows", "linux", "darwin"),
    ) -> None:
        self.name = name
        self.ids = ids
        self.summary = summary
        self.run = run
        #: target OSes the check applies to
        self.platforms = platforms

    @classmethod
    def declared(cls, module: str, run: Callable[[CheckContext], Iterable[Finding]]) -> Check:
        """The check of ``module`` (its ``__name__``) as conda_torchcheck.registry declares it, running ``run``."""
        entry = registry.emitter_of_module(module)
        return cls(entry.name, entry.ids, entry.summary, run, entry.platforms)


def all_checks(target_os: str | None = None) -> list[Check]:
    """Every registered check, or only those that can apply to ``target_os`` (decided by the registry, before any
    check module is imported)."""
    checks = []
    for entry in registry.checks_for(target_os):
        try:
            module = importlib.import_module(entry.module)
        except ModuleNotFoundError as exc:
            if exc.name == entry.module:  # not written yet on this branch
                continue
            raise
        checks.append(module.CHECK)
    return checks


def _matches(finding_id: str, patterns: Sequence[str]) -> bool:
    fid = finding_id.upper()
    return any(fid.startswith(p.upper()) for p in patterns)


def select(checks: Sequence[Check], only: Sequence[str] = (), skip: Sequence[str] = ()) -> list[Check]:
    """Checks that may produce a finding id allowed by ``only`` (id or prefix such as TC3) and ``skip``."""
    out = []
    for check in checks:
        ids = [i for i in check.ids if (not only or _matches(i, only)) and not _matches(i, skip)]
        names_only = [p for p in only if p.lower() == check.name.lower()]
        if ids or names_only:
            out.append(check)
    return out


def run_checks(ctx: CheckContext, only: Sequence[str] = (), skip: Sequence[str] = ()) -> list[Finding]:
    findings: list[Finding] = []
    for check in select(all_checks(ctx.env.os), only, skip):
        if ctx.env.os not in check.platforms:
            continue
        produced: list[Finding] = []
        stopped: Finding | None = None
        try:
            for f in check.run(ctx):
                produced.append(f)  # kept when a later step of the same check raises
        except BAD_INPUT as exc:
            stopped = _stopped(check, exc, "TC909")
        except Exception as exc:  # a bug in one check must not hide the others
            stopped = _stopped(check, exc, "TC990")
        for f in produced:
            if only and not (_matches(f.id, only) or any(p.lower() == check.name.lower() for p in only)):
                continue
            if skip and _matches(f.id, skip):
                continue
            findings.append(with_check(f, check.name))
        # a check the user selected that stopped early says so even under --only (its other ids may be missing)
        if stopped is not None and not (skip and _matches(stopped.id, skip)):
            findings.append(stopped)
    findings.sort(key=lambda f: (f.severity.rank, f.id))
    return findings


#: what bad input raises inside a check: a value past what Python's int/float/json take, text that does not decode,
#: nesting past the recursion limit, a file that cannot be read. Any other exception is a bug in the check.
BAD_INPUT: tuple[type[BaseException], ...] = (ValueError, OverflowError, RecursionError, MemoryError, OSError)


def _stopped(check: Check, exc: BaseException, finding_id: str) -> Finding:
    """TC909 (bad input) or TC990 (internal error) for a check stopped by ``exc``: what it raised, and where."""
    import traceback  # only for a check that stopped: it imports linecache, tokenize and textwrap

    tb = traceback.extract_tb(exc.__traceback__)
    where = f"{tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno}" if tb else "?"
    error = _short(f"{type(exc).__name__}: {exc}")
    stop = finding(
        finding_id,
        Severity.WARNING,
        check=check.name,
        error=error,
        evidence={"check": check.name, "error": error, "at": where},
    )
    return with_check(stop, check.name)


def _short(text: str, limit: int = 500) -> str:
    """An exception's words, cut: a bad value can be megabytes long (a 5,000-digit integer, a whole file)."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"
