"""``explain``: read a pasted error, say what it means, list its likely causes, and confirm one on an env.

    from conda_torchcheck.explain import explain
    result = explain(text)              # ranked causes with how to tell them apart
    result = explain(text, ctx=ctx)     # + the checks that confirm or rule out each cause on that env

The knowledge is data: ``error_patterns/*.toml``, split by area (regexes, extracted fields, causes in order, confirming
finding ids) and the message catalog ``messages/tc7_explain.toml`` (the words, English and Chinese).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from conda_torchcheck.explain.diagnose import Diagnosis, diagnose
from conda_torchcheck.explain.recognise import Match, PasteClues, clue_text, find_clues, normalize_text, recognise
from conda_torchcheck.findings import Finding, Severity
from conda_torchcheck.messages import Text

if TYPE_CHECKING:
    from conda_torchcheck.checks.context import CheckContext
    from conda_torchcheck.explain.decide import Decision
    from conda_torchcheck.explain.similar import Neighbour
    from conda_torchcheck.inventory.model import Environment, HostFacts
    from conda_torchcheck.inventory.torch import TorchInfo

__all__ = ["Diagnosis", "Explanation", "Match", "PasteClues", "explain", "find_clues", "normalize_text", "recognise"]

from conda_torchcheck.schema import SCHEMA_VERSION


@dataclass
class Explanation:
    """What ``explain`` found: one diagnosis per recognised error, and the env it was checked against."""

    diagnoses: list[Diagnosis]
    #: where the text came from: argument, stdin, file, import-test
    source: str = "argument"
    env: Environment | None = None
    host: HostFacts | None = None
    torch: TorchInfo | None = None
    #: why that env was checked: prefix (-p), name (-n), active (CONDA_PREFIX/VIRTUAL_ENV), from-error
    target_reason: str | None = None
    #: finding ids/prefixes whose checks ran
    checks_run: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    import_test: dict[str, Any] | None = None
    notes: list[Text] = field(default_factory=list)
    #: characters of text read (0 when only the import test supplied text)
    text_length: int = 0
    #: loader facts for the Markdown environment table (report.environment_facts)
    facts: dict[str, str] = field(default_factory=dict)
    #: what the paste says about the setup besides its errors (a conda path, a torch version ...)
    clues: PasteClues = field(default_factory=PasteClues)
    #: the text explained (for the similar reports, found only when asked for)
    text: str = field(default="", repr=False)

    @cached_property
    def similar(self) -> list[Neighbour]:
        """The nearest resolved public reports to the text (explain/similar.py), each with its thread's cause."""
        from conda_torchcheck.explain.similar import similar_reports

        return similar_reports(self.text) if self.text.strip() else []

    @property
    def recognised(self) -> bool:
        return bool(self.diagnoses)

    @cached_property
    def similar_causes(self) -> list[str]:
        """The causes the nearest resolved reports established, nearest first, each once (known ids only)."""
        from conda_torchcheck.explain.patterns import table

        causes = table().causes
        aliases = {a: c.id for c in causes.values() for a in c.aliases}
        # a neighbour's cause for another OS than the one the paste shows is no lead here
        paste_os = self.clues.facts.get("os")
        out: list[str] = []
        for n in self.similar:
            for c in n.report.causes:
                cid = aliases.get(c, c)
                cause = causes.get(cid)
                if cause is None or cid in out or (paste_os and cause.applies.os and paste_os not in cause.applies.os):
                    continue
                out.append(cid)
        return out

    @property
    def leads_from_similar(self) -> bool:
        """Nothing in the text was recognised, but resolved reports near it point at causes: those are leads to
        check, listed as such (never a diagnosis of this text)."""
        return not self.diagnoses and bool(self.similar_causes)

    @property
    def confirmed(self) -> bool:
        return any(d.root_cause is not None for d in self.diagnoses)

    @property
    def other_findings(self) -> list[Finding]:
        """Problems the checks found that confirm none of the causes (still worth knowing)."""
        used = {id(f) for d in self.diagnoses for c in d.causes for f in c.confirmed_by}
        return [f for f in self.findings if id(f) not in used and f.severity is not Severity.INFO]

    @property
    def likely_causes(self) -> list[str]:
        """Cause ids for the whole paste, most likely first.

        The main errors come before secondary ones (a warning printed above the error, a pip notice); within
        them, every error's first cause before any error's second (round-robin by rank), each cause once. A
        cause marked ``defer`` (importing torch first) waits when the paste shows other errors too. A confirmed
        root cause comes first of all.
        """
        if not self.diagnoses:
            return list(self.similar_causes)
        from conda_torchcheck.explain.patterns import table

        tbl = table()
        order = sorted(
            range(len(self.diagnoses)),
            key=lambda i: (tbl.pattern(self.diagnoses[i].match.pattern_id).secondary, i),
        )
        # two errors confirmed by the same cause name it once
        roots = [d.root_cause.id for d in (self.diagnoses[i] for i in order) if d.root_cause is not None]
        out: list[str] = list(dict.fromkeys(roots))
        usable = [[c for c in self.diagnoses[i].causes if c.status != "ruled-out"] for i in order]
        depth = max((len(c) for c in usable), default=0)
        deferred: list[str] = []
        for rank in range(depth):
            for causes in usable:
                if rank < len(causes) and causes[rank].id not in out:
                    # a cause whose fix only lets the import get further waits for the other errors' causes
                    (deferred if causes[rank].cause.defer and len(usable) > 1 else out).append(causes[rank].id)
        return out + [c for c in dict.fromkeys(deferred) if c not in out]

    @property
    def decision(self) -> Decision:
        """Whether the text decides its first cause, and what would when it does not (explain/decide.py)."""
        from conda_torchcheck.explain.decide import decide

        return decide(self)

    @property
    def has_errors(self) -> bool:
        if self.confirmed:
            return True
        if self.import_test and self.import_test.get("outcome") in ("failed", "crashed", "timeout"):
            return True
        return any(f.severity is Severity.ERROR for f in self.findings)

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        from conda_torchcheck import __version__

        doc: dict[str, Any] = {
            "schema": SCHEMA_VERSION,
            "tool": {"name": "conda-torchcheck", "version": __version__},
            "kind": "explain",
            "source": self.source,
            "recognised": [d.to_dict(lang) for d in self.diagnoses],
            "likely_causes": self.likely_causes,
            # where the ranking comes from: the errors recognised in the text, or (nothing recognised) the causes
            # the nearest resolved reports established, as leads
            "likely_causes_from": "similar_reports"
            if self.leads_from_similar
            else ("text" if self.diagnoses else None),
            "decision": self.decision.to_dict(lang),
            "similar_reports": [n.to_dict() for n in self.similar],
            "clues": sorted(self.clues.ids),
            "paste_facts": dict(sorted(self.clues.facts.items())),
            "target": None,
            "checks_run": list(self.checks_run),
            "findings": [f.to_dict(lang) for f in self.findings],
            "notes": [n.render(lang) for n in self.notes],
        }
        if self.env is not None:
            env = self.env
            doc["target"] = {
                "prefix": str(env.prefix),
                "name": env.name,
                "os": env.os,
                "platform": env.platform,
                "platform_guess": env.platform_guess,
                "layout": env.layout,
                "reason": self.target_reason,
                "python": {"version": env.python.version, "arch": env.python.arch},
            }
            if self.torch is not None:
                doc["torch"] = self.torch.to_dict()
        if self.import_test is not None:
            doc["import_test"] = self.import_test
        return doc


def _without_other_os_fallbacks(matches: list[Match], clues: PasteClues) -> list[Match]:
    """A failure told in words by an OS's weakest form ("the dll was not found") says less than the paste's own
    paths: beside a macOS path (PyInstaller's "dynlib/dll was not found" for image.so) it is not a Windows DLL
    failure. A pattern with the error's own message keeps its OS whatever the paste mentions elsewhere."""
    stated = clues.facts.get("os")
    if not stated:
        return matches
    from conda_torchcheck.explain.patterns import table

    tbl = table()
    kept = []
    for m in matches:
        pattern = tbl.pattern(m.pattern_id)
        if pattern.fallback and pattern.platform not in ("any", stated):
            continue
        kept.append(m)
    return kept


def _without_empty_fallbacks(diagnoses: list[Diagnosis]) -> list[Diagnosis]:
    """A fallback pattern reads a fact of the paste (a CPU build shown) that is a cause only beside its hints (the
    paste is about a GPU): where none of its causes applies it recognised no error, and the similar reports lead."""
    from conda_torchcheck.explain.patterns import table

    tbl = table()
    return [d for d in diagnoses if d.causes or not tbl.pattern(d.match.pattern_id).fallback]


def explain(
    text: str,
    ctx: CheckContext | None = None,
    *,
    source: str = "argument",
    target_reason: str | None = None,
    findings: list[Finding] | None = None,
) -> Explanation:
    """Recognise the errors in ``text`` and diagnose them (against ``ctx``'s env when given)."""
    normalized = normalize_text(text)
    matches = recognise(normalized, normalized=True)
    clues = find_clues(clue_text(normalized, matches), normalized=True) if matches else PasteClues()
    matches = _without_other_os_fallbacks(matches, clues)
    diagnoses, ran_findings, wanted = diagnose(matches, ctx, findings=findings, clues=clues)
    diagnoses = _without_empty_fallbacks(diagnoses)
    result = Explanation(
        diagnoses=diagnoses,
        source=source,
        target_reason=target_reason if ctx is not None else None,
        checks_run=wanted,
        findings=ran_findings,
        text_length=len(text),
        clues=clues,
        text=text,
    )
    if ctx is not None:
        result.env, result.host, result.torch = ctx.env, ctx.host, ctx.torch
    return result
