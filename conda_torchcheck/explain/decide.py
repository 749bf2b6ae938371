"""Whether a paste decides its first cause, and when it does not, the one fact that would.

The ranking always puts some cause first; a user acts on it as if it were the answer. So the first cause is
only called *decided* when the text (or the env) really singles it out:

- an env check confirmed it (``Diagnosis.root_cause``); or
- the paste's own numbers prove it (recognise.PROVES: the driver version collect_env or nvidia-smi prints is
  older than the one the build's CUDA needs, from NVIDIA's table); or
- two independent readings agree: the pattern table leaves it alone or singles it out — the error leaves
  one cause standing, or names what this cause alone is about (its ``when`` fields matched or a hint was
  seen: ``RankedCause.specific``) while the runner-up is not singled out the same way, and the paste casts
  no doubt on it — *and* the most similar resolved public report (explain/similar.py) established the same
  cause. The table alone is not enough: its causes were written from the reports it was tuned on, and on
  reports nobody had read a lone or named cause was wrong one time in four; with the nearest resolved
  report agreeing, one in fifteen.

Otherwise the paste fits the first two causes alike, and the decider is derived from what separates them: the
env facts their premises (``Applies``) test that the paste does not state (the torch version, how torch was
installed, the build, the Python), else the env check one of them has (``confirm``), else the setup details.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from conda_torchcheck.explain.diagnose import Diagnosis, RankedCause
from conda_torchcheck.messages import Text, msg

if TYPE_CHECKING:
    from conda_torchcheck.explain import Explanation
    from conda_torchcheck.explain.patterns import Applies

#: why the first cause is (or is not) decided; the JSON carries these words
CONFIRMED = "confirmed"
ONLY_CAUSE = "only-cause"
NAMED = "named-in-error"
PROVEN = "proven-by-numbers"
FITS_SEVERAL = "fits-several"
DOUBTED = "doubted"
NOTHING = "not-recognised"

#: Applies field -> the paste fact that states it (recognise.PasteClues.facts keys)
_PREMISE_FACTS: tuple[tuple[str, str], ...] = (
    ("torch", "torch"),
    ("source", "source"),
    ("variant", "variant"),
    ("cuda", "cuda"),
    ("python", "python"),
    ("os", "os"),
)


@dataclass(frozen=True)
class Decision:
    decided: bool
    reason: str
    first: str | None = None
    #: the causes the paste fits alike (first, runner-up) when undecided
    between: tuple[str, ...] = ()
    #: what would decide: a paste fact (torch, source, variant, cuda, python, os), "env-check" or "details"
    decider: str | None = None
    #: finding ids the env check would run, for decider == "env-check"
    checks: tuple[str, ...] = ()
    #: the numbers a proof rests on (the driver, the build's CUDA), shown in its reason
    numbers: tuple[tuple[str, str], ...] = ()

    @property
    def decider_text(self) -> Text | None:
        if self.decider is None:
            return None
        return msg(f"explain.decider.{self.decider}", checks=", ".join(self.checks))

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        text = self.decider_text
        return {
            "decided": self.decided,
            "reason": self.reason,
            "first": self.first,
            "between": list(self.between),
            "decider": self.decider,
            "decider_text": text.render(lang) if text else None,
        }


def decide(expl: Explanation) -> Decision:
    """The decision on the paste's first cause (``Explanation.likely_causes[0]``)."""
    ranked = expl.likely_causes
    if not ranked or not expl.diagnoses:  # leads from similar reports decide nothing about this text
        return Decision(False, NOTHING, decider="error-text")
    first_id = ranked[0]
    if any(d.root_cause is not None and d.root_cause.id == first_id for d in expl.diagnoses):
        return Decision(True, CONFIRMED, first_id)
    diagnosis = _diagnosis_of(expl.diagnoses, first_id)
    standing = [c for c in diagnosis.causes if c.status != "ruled-out"] if diagnosis else []
    first = next((c for c in standing if c.id == first_id), None)
    others = [c for c in standing if c.id != first_id]
    # other errors of the paste whose own first cause differs are rivals too
    for d in expl.diagnoses:
        if d is not diagnosis:
            rival = next((c for c in d.causes if c.status != "ruled-out"), None)
            if rival is not None and rival.id != first_id and rival.id in ranked[:3]:
                others.append(rival)
    if first is None:
        return Decision(False, FITS_SEVERAL, first_id, decider="details")
    from conda_torchcheck.explain.recognise import PROVES

    if first.doubt is None and any(PROVES.get(clue) == first_id for clue in expl.clues.ids):
        # the paste's own numbers prove it (collect_env's driver under its build's CUDA), as an env check would
        facts = expl.clues.facts
        driver = facts.get("driver") or facts.get("driver_cuda", "?")
        numbers = (("driver", driver), ("cuda", facts.get("build_cuda", "?")))
        return Decision(True, PROVEN, first_id, numbers=numbers)
    if first.doubt is not None:
        return _undecided(DOUBTED, first, others, expl)
    if not others:
        if _corroborated(expl, first_id):
            return Decision(True, ONLY_CAUSE, first_id)
        return _undecided(ONLY_CAUSE, first, others, expl)
    runner_up = others[0]
    if first.specific and not runner_up.specific:
        if _corroborated(expl, first_id):
            return Decision(True, NAMED, first_id)
        return _undecided(NAMED, first, others, expl)
    return _undecided(FITS_SEVERAL, first, others, expl)


def _corroborated(expl: Explanation, cause_id: str) -> bool:
    """The nearest resolved public report established this cause (under any of its names)."""
    near = expl.similar
    if not near:
        return False
    from conda_torchcheck.explain.patterns import table

    causes = table().causes
    aliases = {a: c.id for c in causes.values() for a in c.aliases}
    return cause_id in {aliases.get(c, c) for c in near[0].report.causes}


def _diagnosis_of(diagnoses: Sequence[Diagnosis], cause_id: str) -> Diagnosis | None:
    """The diagnosis that ranks ``cause_id`` highest (the error it was taken from)."""
    best: tuple[int, Diagnosis] | None = None
    for d in diagnoses:
        for c in d.causes:
            if c.id == cause_id and c.status != "ruled-out" and (best is None or c.rank < best[0]):
                best = (c.rank, d)
    return best[1] if best else None


def _undecided(reason: str, first: RankedCause, others: Sequence[RankedCause], expl: Explanation) -> Decision:
    runner_up = others[0] if others else None
    between = (first.id, runner_up.id) if runner_up else (first.id,)
    # two causes: the premise that separates them; one cause: only what checks it can settle it
    premise = _separating_premise(first.cause.applies, runner_up.cause.applies, expl.clues.facts) if runner_up else None
    if premise is not None:
        return Decision(False, reason, first.id, between, decider=premise)
    checks = tuple(dict.fromkeys(c for rc in (first, runner_up) if rc is not None for c in rc.cause.confirm))
    if checks and expl.env is None:
        return Decision(False, reason, first.id, between, decider="env-check", checks=checks)
    return Decision(False, reason, first.id, between, decider="details")


def _separating_premise(a: Applies, b: Applies, facts: dict[str, str]) -> str | None:
    """The first env fact whose value would tell the two causes apart and that the paste does not state."""
    for attr, fact in _PREMISE_FACTS:
        if facts.get(fact):
            continue
        mine, theirs = getattr(a, attr), getattr(b, attr)
        if mine != theirs and (mine or theirs):
            return fact
    return None
