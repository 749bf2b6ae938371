"""Findings: what a check concludes about the target environment, with proof and a fix for *this* env."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from conda_torchcheck.messages import Text, msg

#: one page per finding id, shipped inside the package so that they work offline
DOCS_DIR = Path(__file__).resolve().parent / "docs" / "findings"


def docs_page(finding_id: str) -> Path | None:
    """The installed page of ``finding_id`` (``TC301`` → ``.../docs/findings/TC301.md``), None if there is none."""
    name = finding_id.strip().upper()
    if not (name[:2] == "TC" and name[2:].isdigit()):
        return None
    page = DOCS_DIR / f"{name}.md"
    return page if page.is_file() else None


def docs_command(finding_id: str) -> str:
    """The command that prints the page of ``finding_id`` in a terminal."""
    return f"conda-torchcheck docs {finding_id}"


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 0, "warning": 1, "info": 2}[self.value]


FixKind = Literal["conda", "pip", "system", "file", "env", "upgrade"]


@dataclass(frozen=True)
class Fix:
    """One way out. ``commands`` are concrete for this env (right prefix, channel, index URL)."""

    kind: FixKind
    summary: Text
    commands: tuple[str, ...] = ()
    needs_admin: bool = False
    #: a fix that only touches files the tool itself can safely change (used by the doctor fixer)
    safe_automatic: bool = False

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "summary": self.summary.render(lang),
            "commands": list(self.commands),
            "needs_admin": self.needs_admin,
        }


@dataclass(frozen=True)
class Finding:
    """A conclusion about the env: stable id, severity, words (from the catalog), evidence, fixes."""

    id: str
    severity: Severity
    title: Text
    explanation: Text
    evidence: Mapping[str, Any] = field(default_factory=dict)
    fixes: Sequence[Fix] = ()
    #: the check that produced it (module name), filled in by the runner
    check: str = ""
    #: findings that follow from this one's cause, folded into it (conda_torchcheck.causes)
    consequences: Sequence[Finding] = ()

    @property
    def docs(self) -> dict[str, str | None]:
        """Where the page of this id is: the installed file, and the command that prints it (no URL: the pages
        live in the package, not on a website)."""
        page = docs_page(self.id)
        return {"path": str(page) if page else None, "command": docs_command(self.id)}

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        return {
            "id": self.id,
            "severity": self.severity.value,
            "title": self.title.render(lang),
            "explanation": self.explanation.render(lang),
            "evidence": _jsonable(self.evidence),
            "fixes": [f.to_dict(lang) for f in self.fixes],
            "docs": self.docs,
            "check": self.check,
            **({"consequences": [c.to_dict(lang) for c in self.consequences]} if self.consequences else {}),
        }


def finding(
    id: str,
    severity: Severity,
    *,
    evidence: Mapping[str, Any] | None = None,
    fixes: Sequence[Fix] = (),
    variant: str | None = None,
    **params: Any,
) -> Finding:
    """Build a finding whose title and explanation come from the catalog entry ``<id>[.<variant>]``."""
    base = f"{id}.{variant}" if variant else id
    return Finding(
        id=id,
        severity=severity,
        title=msg(f"{base}.title", **params),
        explanation=msg(f"{base}.explanation", **params),
        evidence=dict(evidence or {}),
        fixes=tuple(fixes),
    )


def with_check(f: Finding, name: str) -> Finding:
    """``f`` with the name of the check (or ``spec check`` rule) that produced it, unless it names one already."""
    from dataclasses import replace

    return f if f.check else replace(f, check=name)


def _jsonable(value: Any) -> Any:
    from pathlib import PurePath

    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_jsonable(v) for v in value]
        return sorted(items, key=str) if isinstance(value, (set, frozenset)) else items
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, Text):
        return value.render()
    if isinstance(value, enum.Enum):
        return value.value
    if hasattr(value, "to_dict"):
        return value.to_dict()
    return value
