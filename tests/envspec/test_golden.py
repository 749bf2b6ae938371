"""Golden files: real-world environment.yml shapes, fixed by `spec fix` (no env).

Each ``golden/<case>.in.yml`` must be rewritten byte for byte into ``<case>.out.yml``; the output must be a
fixed point (fixing it again changes nothing), must keep every comment of the input, and must lose no
dependency without reporting it. ``make_golden.py`` regenerates the outputs after a deliberate rule change.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conda_torchcheck.envspec import fix_file
from conda_torchcheck.envspec.parse import decode, encode, parse_text

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.name[: -len(".in.yml")] for p in GOLDEN.glob("*.in.yml"))

#: finding ids expected before the fix, and the ones that may legitimately remain after it
EXPECTED: dict[str, tuple[set[str], set[str]]] = {
    "seed_zh_pytorch_nvidia": ({"TC611"}, set()),
    # pytorch-channel 2.1 beside conda-forge with mkl left open (TC615, issue 23): advice, not rewritten
    "pytorch_channel_pinned": ({"TC603", "TC615"}, {"TC615"}),
    "pytorch_channel_frozen_2_6": ({"TC605"}, set()),
    # an unpinned conda torchvision beside a pinned pytorch follows it (its builds pin pytorch): not TC611
    "conda_forge_with_pytorch_cuda": ({"TC603", "TC604"}, set()),
    "conda_forge_reproducible": (set(), set()),
    "pip_index_url": (set(), set()),
    "pip_index_hides_pypi": ({"TC603", "TC607"}, set()),
    "pip_missing_index": ({"TC607"}, set()),
    # pip torchaudio beside conda torch is TC606 (cross), not TC611
    "conda_and_pip_torch": ({"TC603", "TC606", "TC615"}, {"TC615"}),
    "tsinghua_mirror": ({"TC613"}, set()),
    "conda_env_export": ({"TC606"}, set()),
    # no base channel: nodefaults needs one, and which (defaults or conda-forge) is the user's choice
    "flow_style": ({"TC603"}, {"TC603"}),
    "cudatoolkit_1_12": ({"TC603"}, set()),
    "no_torch": (set(), set()),
    "defaults_pytorch": (set(), set()),
    "crlf_bom_comments": ({"TC606"}, set()),
}


def _load(path: Path):
    data = path.read_bytes()
    text, encoding, bom = decode(data, path.name)
    return parse_text(text, path.name, encoding=encoding, bom=bom), encoding, bom


def _comments(text: str) -> list[str]:
    return [m.group(0).strip() for m in re.finditer(r"(?:^|\s)#[^\n\r]*", text)]


def test_every_case_has_expectations():
    assert set(CASES) == set(EXPECTED), "add the new golden case to EXPECTED"


@pytest.mark.parametrize("case", CASES)
def test_golden_output(case):
    file, encoding, bom = _load(GOLDEN / f"{case}.in.yml")
    result = fix_file(file)
    expected = (GOLDEN / f"{case}.out.yml").read_bytes()
    assert encode(result.fixed, encoding, bom) == expected


@pytest.mark.parametrize("case", CASES)
def test_golden_output_is_a_fixed_point(case):
    file, _, _ = _load(GOLDEN / f"{case}.out.yml")
    result = fix_file(file)
    assert not result.changed, result.diff
    assert result.plan.changes == []


@pytest.mark.parametrize("case", CASES)
def test_golden_keeps_comments_and_reports_every_removal(case):
    file, _, _ = _load(GOLDEN / f"{case}.in.yml")
    result = fix_file(file)
    fixed_comments = _comments(result.fixed)
    for comment in _comments(file.text):
        assert comment in fixed_comments
    after = parse_text(result.fixed, case)
    kept = {d.text for d in after.deps} | {p.text for p in after.pip or ()}
    reported = {c.old for c in result.plan.changes if c.old}
    for entry in [d.text for d in file.deps] + [p.text for p in file.pip or ()]:
        assert entry in kept or entry in reported, entry


@pytest.mark.parametrize("case", CASES)
def test_golden_findings_before_and_after(case):
    before_ids, allowed_after = EXPECTED[case]
    file, _, _ = _load(GOLDEN / f"{case}.in.yml")
    result = fix_file(file)
    assert {f.id for f in result.findings_before} == before_ids
    after_ids = {f.id for f in result.findings_after}
    assert after_ids <= allowed_after, [f.title.render() for f in result.findings_after]
    assert not any(f.severity.value == "error" for f in result.findings_after)


def test_crlf_bom_case_really_is_crlf_with_bom():
    data = (GOLDEN / "crlf_bom_comments.out.yml").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert b"\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
