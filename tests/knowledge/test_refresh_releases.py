"""tools/refresh_releases.py on a recorded PyPI snapshot (tests/knowledge/data/pypi: the JSON API's answers for
torch, torchvision and torchaudio, trimmed by the tool's own --record on 2026-12-01; no network here)."""

from __future__ import annotations

import urllib.request
from pathlib import Path

import pytest

from conda_torchcheck._toml import load_toml_text
from conda_torchcheck.knowledge import load, torch_release
from tools import refresh_releases as refresh

RECORDING = Path(__file__).parent / "data" / "pypi"


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the test must not reach the network")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)


@pytest.fixture(scope="module")
def minors() -> dict[str, refresh.MinorFacts]:
    return refresh.read_pypi(replay=RECORDING)


def test_the_recording_is_small_and_trimmed():
    for name in refresh.PROJECTS:
        data = (RECORDING / f"{name}.json").read_text(encoding="utf-8")
        assert len(data) < 60_000, name
        assert set(load_toml_text("x = 1") or {}) and '"digests"' not in data and '"description"' not in data


def test_torch_2_15_as_pypi_serves_it(minors):
    facts = minors["2.15"]
    assert facts.patches == ["2.15.0"]
    assert facts.released == "2026-10-28"
    assert facts.requires_python == ">=3.11"
    assert facts.python_range == ["3.11", "3.15"]
    assert facts.free_threaded == ["3.14t", "3.15t"]
    assert facts.default_cuda == "cu132"  # cuda-toolkit[...]==13.2.2 in the newest release's Requires-Dist
    assert (facts.torchvision, facts.torchaudio) == ("0.29", "2.11")
    assert facts.torchvision_patch == {"2.15.0": "0.29.2"}  # uploaded with it; 0.29.0 went with 2.14.0
    assert {"win_amd64", "manylinux_2_28_x86_64", "macosx_14_0_arm64"} <= set(facts.platforms)


def test_the_table_row_for_2_15_is_what_pypi_proves(minors):
    row = load("torch_releases")["releases"]["2.15"]
    facts = minors["2.15"]
    assert row["source"] == "[PYPI]"
    assert row["python"] == facts.python_range
    assert (row["torchvision"], row["torchaudio"]) == (facts.torchvision, facts.torchaudio)
    assert row["pip_cuda"] == [facts.default_cuda] and row["pip_cuda_partial"] is True
    release = torch_release("2.15.0")
    assert release is not None and not release.pip_cuda_known
    assert release.supports_python((3, 11)) and not release.supports_python((3, 10))


def test_what_the_table_states_otherwise_is_reported(minors):
    """[REL] gives 2.13 and 2.14 Python 3.15; PyPI has no cp315 wheel for them (the table keeps [REL]'s range,
    the refresh says so for review)."""
    assert refresh.differences(minors, load("torch_releases")) == [
        "2.13: python ['3.10', '3.15'] in the table, CPython wheels on PyPI for 3.10-3.14",
        "2.14: python ['3.10', '3.15'] in the table, CPython wheels on PyPI for 3.10-3.14",
    ]


def test_a_minor_the_table_lacks_is_written_as_a_sourced_row(minors, tmp_path):
    text = (Path(refresh.TABLE)).read_text(encoding="utf-8")
    start = text.index('[releases."2.15"]')
    without = text[:start] + text[text.index("\n[channels]\n", start) + 1 :]
    table = tmp_path / "torch_releases.toml"
    table.write_text(without, encoding="utf-8")
    assert "2.15: not in torch_releases.toml (PyPI has 2.15.0)" in refresh.differences(minors, load_toml_text(without))

    assert refresh.main(["--replay", str(RECORDING), "--table", str(table), "--write"]) == 0
    written = load_toml_text(table.read_text(encoding="utf-8"))
    row = written["releases"]["2.15"]
    assert row["source"] == "[PYPI]"
    keys = ("torchvision", "torchvision_patch", "torchaudio", "python", "pip_cuda", "pip_cuda_partial")
    assert {k: row[k] for k in keys} == {k: load("torch_releases")["releases"]["2.15"][k] for k in keys}
    assert list(written["releases"])[-1] == "2.15" and "channels" in written


def test_trim_keeps_only_what_the_tool_reads():
    raw = {
        "info": {"name": "torch", "version": "9.1.0", "requires_python": ">=3.12", "requires_dist": [], "x": 1},
        "releases": {
            "9.1.0": [{"filename": "torch-9.1.0-cp312-cp312-win_amd64.whl", "upload_time": "2030-01-01T00:00:00",
                       "requires_python": ">=3.12", "yanked": False, "digests": {"sha256": "0"}}],
            "1.0.0": [],
            "9.1.0rc1": [],
        },
    }  # fmt: skip
    trimmed = refresh.trim("torch", raw)
    assert list(trimmed["releases"]) == ["9.1.0"]
    assert "digests" not in trimmed["releases"]["9.1.0"][0] and "x" not in trimmed["info"]


def test_releases_never_add_back_an_older_cuda_build():
    """What pip_cuda_floor rests on: from 1.0 on, no release's oldest CUDA build is older than its predecessor's."""
    from conda_torchcheck.knowledge import _cuda_tag_key, torch_releases

    complete = [r for r in torch_releases() if r.pip_cuda and r.pip_cuda_known and r.minor != "0.4"]
    for before, after in zip(complete, complete[1:]):
        oldest = min(after.pip_cuda, key=_cuda_tag_key)
        assert _cuda_tag_key(oldest) >= _cuda_tag_key(min(before.pip_cuda, key=_cuda_tag_key)), after.minor


def test_a_row_with_partial_cuda_builds_tells_only_what_it_knows():
    release = torch_release("2.15.0")
    assert release.offers_pip_cuda("cu132") is True  # the PyPI default wheel's CUDA
    assert release.offers_pip_cuda("cu130") is None  # not in PyPI's data, not ruled out
    assert release.offers_pip_cuda("cu121") is False  # older than 2.14's oldest (cu126)
    assert torch_release("2.14.0").offers_pip_cuda("cu121") is False


def test_the_generated_tables_are_regenerated_through_the_same_door(tmp_path):
    """--previous-versions runs gen_release_tables on the install matrix (here the small page of its own test)."""
    from tests.knowledge.test_gen_release_tables import PAGE

    page = tmp_path / "previous-versions.md"
    page.write_text(PAGE, encoding="utf-8")
    table = tmp_path / "torch_releases.toml"
    table.write_text(Path(refresh.TABLE).read_text(encoding="utf-8"), encoding="utf-8")
    args = ["--replay", str(RECORDING), "--table", str(table), "--out", str(tmp_path)]
    assert refresh.main([*args, "--previous-versions", str(page), "--previous-versions-source", "test page"]) == 0
    written = load_toml_text((tmp_path / "pytorch_channel_builds.toml").read_text(encoding="utf-8"))
    assert set(written["builds"]) == {"9.1.0", "9.2.0"}
    assert table.read_text(encoding="utf-8") == Path(refresh.TABLE).read_text(encoding="utf-8")  # no --write
