"""The real-report corpus (tests/data/reports) must not get worse: top-1/top-3 floors, unrecognised and false
claims ceilings, time per paste. Scored by benchmarks/explain_corpus.py (run it for the table and the misses).

The floors are what the table reached when they were last raised, rounded down a little; raise them when the
table improves, never lower them to make a change pass.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import explain_corpus

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "reports"

TOP1_FLOOR = 0.90
TOP3_FLOOR = 0.98
UNRECOGNISED_CEILING = 0.015
#: x018 joined x056 in the sixth session: Poetry's refusal without a stated Python is no longer read as the platform
#: (three of the four such reports in the corpus were the Python), so its thread's Intel Mac is missed and the Python
#: stated first there is a false claim, though an undecided one
FALSE_CLAIMS_CEILING = 2
MEDIAN_SECONDS_CEILING = 0.2


#: the sets folded in after the floors above were set (q, r: blind sets, after the mechanisms built from them;
#: p, o, n, k, m, l, c, a, b, g, h, i, e, j, d, f, da, fb, db: scored first-pass and folded in as they were; k, m, l,
#: c, g, h, i, e, j, d, f, da, fb then read for mechanisms), with the floor they reach together (set when fb and db
#: joined: 862 pastes, top-1 69.1 %, top-3 80.3 %, unrecognised 18.1 %, 11 false claims): a new set must not drag the
#: older sets' floor down, and its own must not drop either. The false claims rose 8 -> 11 with fb and db: their own
#: first-pass ones (db001 vc-runtime for libomp140, db023 the build's GPU arch for an extension's, fb028 FFmpeg for
#: torchaudio's build), each ranked first but undecided, none a regression of an older set. dc, dd and fc (77 pastes,
#: first-pass 63.0 / 87.5 / 69.2 % top-1) joined at 939 pastes: top-1 70.3 %, top-3 81.0 %, unrecognised 15.6 %, 11
#: false claims (dc010's first-pass one, the build's GPU arch for xformers without its extensions, fixed since). fd and
#: de (53 pastes, first-pass 71.4 / 64.0 % top-1) joined at 992: top-1 71.4 %, top-3 81.7 %, unrecognised 14.5 %, 12
#: false claims: b014, unrecognised, whose nearest resolved reports (leads, not a diagnosis) changed with the new ones
LATER_SETS = "qrponkmlcabghiejdf"  # da, db, dc, dd, de count under d and fb, fc, fd under f
LATER_FLOORS = {"top1": 0.69, "top3": 0.80, "unrecognised": 0.19, "false_claims": 12}


@pytest.fixture(scope="module")
def scored_all():
    if not any(CORPUS.glob("*.toml")):
        pytest.skip("no report corpus")
    return explain_corpus.score_corpus(CORPUS)


@pytest.fixture(scope="module")
def scored(scored_all):
    """The sets the floors above were set on (every set but LATER_SETS)."""
    cases = [c for c in scored_all if c.name[0] not in LATER_SETS]
    return explain_corpus, cases, explain_corpus.summary(cases)


def test_later_sets_floor(scored_all):
    cases = [c for c in scored_all if c.name[0] in LATER_SETS]
    total = explain_corpus.summary(cases)
    assert total["top1"] >= LATER_FLOORS["top1"], _misses(cases, "top1")
    assert total["top3"] >= LATER_FLOORS["top3"], _misses(cases, "top3")
    assert total["unrecognised"] <= LATER_FLOORS["unrecognised"], [c.name for c in cases if c.unrecognised]
    assert total["false_claims"] <= LATER_FLOORS["false_claims"]


def _misses(cases, attr: str) -> str:
    return "\n".join(f"{c.name}: truth {c.truth}, ranked {c.ranked[:3]}" for c in cases if not getattr(c, attr))


def test_top1_floor(scored):
    _, cases, total = scored
    assert total["top1"] >= TOP1_FLOOR, _misses(cases, "top1")


def test_top3_floor(scored):
    _, cases, total = scored
    assert total["top3"] >= TOP3_FLOOR, _misses(cases, "top3")


def test_unrecognised_ceiling(scored):
    _, cases, total = scored
    assert total["unrecognised"] <= UNRECOGNISED_CEILING, [c.name for c in cases if c.unrecognised]


def test_false_claims_ceiling(scored):
    _, cases, total = scored
    assert total["false_claims"] <= FALSE_CLAIMS_CEILING, [(c.name, c.false_claim) for c in cases if c.false_claim]


def test_time_per_paste(scored):
    _, _, total = scored
    assert total["median_s"] <= MEDIAN_SECONDS_CEILING


def test_every_truth_id_is_a_cause_an_alias_or_a_documented_new_cause(scored_all):
    """A cause id in a report's truth that the table lacks can never be ranked first: add the cause, or (a cause no
    mechanism covers yet) keep the collector's ``new:`` id documented in NEW_CAUSES_<set>.md."""
    cases = scored_all
    documented = "".join(p.read_text(encoding="utf-8") for p in CORPUS.glob("NEW_CAUSES_*.md"))
    # the collectors write the id in backticks or as a section heading (`## new:...`)
    undocumented = {
        i
        for c in cases
        for i in c.unknown_ids
        if not (i.startswith("new:") and (f"`{i}`" in documented or f"## {i}\n" in documented))
    }
    assert not sorted(undocumented)
