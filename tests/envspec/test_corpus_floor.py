"""The real environment-file corpus (tests/data/envfiles) must not get worse. Scored by
benchmarks/envspec_corpus.py (run it with --misses for the table and every miss).

The floors are what the corpus reached when they were last raised, rounded down a little; raise them when
the score improves, never lower them to make a change pass. The zero ceilings are the issue's hard targets.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import envspec_corpus

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "envfiles"

# reached 1.00 / 0.9934 on the 96 files of the corpus (issue 13's targets: 0.97 / 0.95; the one miss is
# e093's TC605, a verdict the pytorch channel's 1.10.x cuda11.1 builds contradict); a little room is left for
# files still being added to the corpus
PRECISION_FLOOR = 0.99
RECALL_FLOOR = 0.99
MEAN_MS_CEILING = 200.0


@pytest.fixture(scope="module")
def scored():
    if not any(CORPUS.glob("*.toml")):
        pytest.skip("no environment-file corpus")
    return envspec_corpus.score_corpus(CORPUS)


def _worst(scored, key: str) -> list[str]:
    return [f"{s['name']}: {s[key]}" for s in scored["per_file"] if s[key]]


def test_no_crash(scored):
    assert scored["crashes"] == 0, _worst(scored, "crash")


def test_precision_floor(scored):
    assert scored["precision"] >= PRECISION_FLOOR, _worst(scored, "false_alarms")


def test_recall_floor(scored):
    assert scored["recall"] >= RECALL_FLOOR, _worst(scored, "missed")


def test_fixes_are_idempotent_and_lose_nothing(scored):
    assert scored["non_idempotent"] == 0, [s["name"] for s in scored["per_file"] if not s["idempotent"]]
    assert scored["lost"] == 0, _worst(scored, "lost")


def test_no_invalid_rewrite(scored):
    # skipped inside the benchmark where conda is not importable (then the list is empty)
    assert scored["invalid_rewrites"] == 0, _worst(scored, "invalid_rewrites")


def test_fixes_converge(scored):
    assert scored["non_convergent"] == 0, _worst(scored, "non_convergent")


def test_no_version_suggested_that_never_existed(scored):
    assert scored["unknown_versions"] == 0, _worst(scored, "unknown_versions")


def test_time_per_file(scored):
    assert scored["ms_per_file_mean"] <= MEAN_MS_CEILING
