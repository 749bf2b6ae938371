"""Every version explain suggests comes from the release tables (issue 22 item 6: for torch==2.1.0 it said
``python=3.12``, which its own table rules out: 2.1 supports 3.8-3.11)."""

from __future__ import annotations

import re

import pytest

from conda_torchcheck._toml import load_toml_text
from conda_torchcheck.explain import explain
from conda_torchcheck.explain.patterns import table
from conda_torchcheck.knowledge import known_torch_minors, releases, torch_release, torch_releases

PASTE = """ERROR: Could not find a version that satisfies the requirement torch=={v} (from versions: 0.1.2)
ERROR: No matching distribution found for torch=={v}
"""


def _fixes(text: str, cause: str) -> list[str]:
    out = explain(text).to_dict("en")
    return [c["fix"] for r in out["recognised"] for c in r["causes"] if c["id"] == cause]


@pytest.mark.parametrize("minor", [m for m in known_torch_minors() if torch_release(m + ".0").python])
def test_the_python_suggested_for_a_pinned_torch_is_one_its_release_supports(minor):
    fixes = _fixes(PASTE.format(v=minor + ".0"), "python-not-supported")
    assert fixes, minor
    [python] = re.findall(r"python=(\d+\.\d+)", fixes[0])
    major_minor = tuple(int(x) for x in python.split("."))
    assert torch_release(minor + ".0").supports_python(major_minor), (minor, python)


def test_torch_2_1_gets_python_3_11():
    [fix] = _fixes(PASTE.format(v="2.1.0"), "python-not-supported")
    assert "python=3.11" in fix


def test_an_unpinned_torch_gets_a_python_of_the_newest_release():
    [fix] = _fixes(PASTE.replace("torch=={v}", "torch"), "python-not-supported")
    [python] = re.findall(r"python=(\d+\.\d+)", fix)
    assert torch_releases()[-1].supports_python(tuple(int(x) for x in python.split(".")))


def _messages() -> dict:
    from importlib import resources

    text = resources.files("conda_torchcheck.messages").joinpath("tc7_explain.toml").read_text(encoding="utf-8")
    return load_toml_text(text)["explain"]["cause"]


_TORCH_VERSION = re.compile(r"\btorch(?: to| on| is)?\s*(?:==|≥\s*|>=\s*)?(\d+\.\d+(?:\.\d+)?)\b")
_GO_BACK = re.compile(r"go back to (\d+\.\d+\.\d+)")


def test_every_torch_version_in_a_fix_is_a_release_the_tables_know():
    minors = set(known_torch_minors())
    named = []
    for cause, words in _messages().items():
        texts = [words.get("fix", {}).get("en", "")]
        texts += list(table().causes[cause].commands) if cause in table().causes else []
        for text in texts:
            for version in _TORCH_VERSION.findall(text) + _GO_BACK.findall(text):
                named.append((cause, version))
                minor = ".".join(version.split(".")[:2])
                assert minor in minors, (cause, version)
                if version.count(".") == 2:
                    assert releases.exists("torch", version) is not False, (cause, version)
    assert len(named) >= 5  # the walk found the suggestions (2.3.1, 2.4.1, 2.5.1, 2.8, 1.12 ...)


def test_every_cuda_index_in_a_fix_is_a_build_the_tables_know():
    tags = {t for r in torch_releases() for t in r.pip_cuda}
    for cause, words in _messages().items():
        for tag in re.findall(r"download\.pytorch\.org/whl/(cu\d+)", str(words)):
            assert tag in tags, (cause, tag)
