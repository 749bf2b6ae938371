"""The fix plan of one report: ordered steps, each with what it changes and how that was checked."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

#: verified: the package manager's resolver was asked and agreed; rejected: it would do something the step is not
#: for (change torch) or found no solution; not verified: no resolver could be asked (says why); exact: nothing
#: is resolved (an uninstall, an environment variable, a file move): the step changes what it names;
#: manual: words only, done by hand (administrator steps, choices the tool cannot make)
Status = Literal["verified", "rejected", "not verified", "exact", "manual"]


@dataclass(frozen=True)
class Change:
    """One package a step installs, replaces or removes, as the resolver reported it."""

    name: str
    before: str | None  # installed version, None when it is new
    after: str | None  # version after the step, None when it is removed

    def text(self) -> str:
        if self.before is None:
            return f"+{self.name} {self.after}"
        if self.after is None:
            return f"-{self.name} {self.before}"
        if self.before == self.after:
            return f"{self.name} {self.after} (reinstalled)"
        return f"{self.name} {self.before} -> {self.after}"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "before": self.before, "after": self.after}


@dataclass(frozen=True)
class Verification:
    status: Status
    #: the resolver asked (``pip 24.2 install --dry-run --report``, ``conda 24.11 solver``), or None
    by: str | None = None
    reason: str | None = None
    changes: tuple[Change, ...] = ()

    @property
    def torch_change(self) -> Change | None:
        return next((c for c in self.changes if c.name == "torch" and c.before != c.after), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "by": self.by,
            "reason": self.reason,
            "changes": [c.to_dict() for c in self.changes],
        }


@dataclass(frozen=True)
class Step:
    finding: str
    kind: str
    summary: str
    commands: tuple[str, ...]
    #: what the step changes, in words (packages, a variable of the shell, files)
    changes: str
    needs_admin: bool = False
    verification: Verification = field(default_factory=lambda: Verification("manual"))
    #: other findings this same step fixes (their own fix was the same commands)
    also_fixes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "finding": self.finding,
            "also_fixes": list(self.also_fixes),
            "kind": self.kind,
            "summary": self.summary,
            "commands": list(self.commands),
            "changes": self.changes,
            "needs_admin": self.needs_admin,
            "verification": self.verification.to_dict(),
        }


@dataclass(frozen=True)
class Dropped:
    """A fix a finding offered that the plan does not: why (contradicts a step, a resolver rejected it)."""

    finding: str
    commands: tuple[str, ...]
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"finding": self.finding, "commands": list(self.commands), "reason": self.reason}


@dataclass
class Plan:
    steps: list[Step] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)

    @property
    def verified(self) -> bool:
        """Every pip and conda step was checked by its resolver."""
        return all(s.verification.status != "not verified" for s in self.steps)

    def to_dict(self) -> dict[str, Any]:
        return {
            "steps": [s.to_dict() for s in self.steps],
            "dropped": [d.to_dict() for d in self.dropped],
            "verified": self.verified,
        }
