"""What the env-confirmation tests (test_env_confirms_*.py) share: the corpus pastes and the two verdicts.

A cause is confirmed when a check that ran on the env shows it: CONFIRMED in a diagnosis, that diagnosis's root
cause, and first of the paste-level ``likely_causes``. On the healthy twin it is present but only not-found or
ruled-out, and no diagnosis's root.
"""

from __future__ import annotations

from pathlib import Path

from conda_torchcheck.explain import Explanation

REPORTS = Path(__file__).resolve().parents[1] / "data" / "reports"


def paste(report: str) -> str:
    return (REPORTS / f"{report}.txt").read_text(encoding="utf-8", errors="replace")


def described(result: Explanation) -> str:
    """Every diagnosis, cause status and finding: the assertion message."""
    lines = [f"likely_causes={result.likely_causes}"]
    for d in result.diagnoses:
        root = d.root_cause.id if d.root_cause else None
        lines.append(f"{d.match.pattern_id} fields={d.match.fields} root={root}")
        lines.extend(f"  {c.id}: {c.status} {[f.id for f in c.confirmed_by]} exact={c.exact}" for c in d.causes)
    lines.append("findings: " + ", ".join(f"{f.id}/{f.severity.value}:{f.title.render('en')}" for f in result.findings))
    return "\n".join(lines)


def statuses(result: Explanation, cause: str) -> list[str]:
    found = [c.status for d in result.diagnoses for c in d.causes if c.id == cause]
    assert found, f"{cause} is not among the causes:\n{described(result)}"
    return found


def roots(result: Explanation) -> list[str]:
    return [d.root_cause.id for d in result.diagnoses if d.root_cause is not None]


def assert_confirmed(result: Explanation, cause: str) -> None:
    assert "confirmed" in statuses(result, cause), described(result)
    assert cause in roots(result), described(result)
    assert result.likely_causes[0] == cause, described(result)


def assert_not_confirmed(result: Explanation, cause: str) -> None:
    assert set(statuses(result, cause)) <= {"not-found", "ruled-out"}, described(result)
    assert cause not in roots(result), described(result)


def cause_of(result: Explanation, cause: str) -> list:
    return [c for d in result.diagnoses for c in d.causes if c.id == cause]


def status_of(result: Explanation, cause: str) -> str:
    """The status of ``cause`` in the first diagnosis that lists it."""
    return statuses(result, cause)[0]
