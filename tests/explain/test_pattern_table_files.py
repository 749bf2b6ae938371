"""explain's pattern table as split by area: every file follows the language's JSON Schema, the folder holds
exactly the files the loader reads, and the split table is the one it was split from (explain's scores rest on
it: a split must not move a regex, a cause or their order)."""

from __future__ import annotations

import json
import subprocess
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from conda_torchcheck._toml import load_toml_text
from conda_torchcheck.explain import patterns

REPO = Path(__file__).resolve().parents[2]
#: the last commit with the table in one file (conda_torchcheck/explain/error_patterns.toml), and the commit that
#: split it: the split is checked as it was made; the table grows in its files after it
BEFORE_SPLIT = "945e51c"
SPLIT = "0f4c6dd"


def _schema() -> dict:
    return json.loads(resources.files("conda_torchcheck.explain").joinpath("error_patterns.schema.json").read_text())


def _merged() -> dict:
    return patterns.merge_areas(load_toml_text(text) for text in patterns.area_texts().values())


def test_the_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(_schema())


@pytest.mark.parametrize("area", patterns.AREAS)
def test_every_area_file_follows_the_schema(area):
    data = load_toml_text(patterns.area_texts()[area])
    errors = sorted(jsonschema.Draft202012Validator(_schema()).iter_errors(data), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{area}.toml {list(e.path)}: {e.message}" for e in errors[:10])


def test_the_schema_rejects_a_misspelled_key():
    bad = {"pattern": [{"id": "x", "anchors": ["a"], "cuases": []}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, _schema())


def test_the_folder_holds_exactly_the_files_the_loader_reads():
    folder = resources.files("conda_torchcheck.explain").joinpath("error_patterns")
    found = {p.name for p in folder.iterdir() if p.name.endswith(".toml")}
    assert found == {f"{area}.toml" for area in patterns.AREAS}


def test_a_key_stated_in_two_files_is_an_error():
    with pytest.raises(ValueError, match="two files"):
        patterns.merge_areas([{"causes": {"a": {}}}, {"causes": {"a": {}}}])


def test_arrays_of_tables_are_joined_in_file_order():
    merged = patterns.merge_areas([{"pattern": [{"id": "a"}]}, {"pattern": [{"id": "b"}]}])
    assert [p["id"] for p in merged["pattern"]] == ["a", "b"]


def _git_show(commit: str, path: str) -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(REPO), "show", f"{commit}:{path}"],
            capture_output=True,
            text=True,
            encoding="utf-8",
            check=True,
            timeout=30,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        pytest.skip("needs the git history (a source checkout)")


def _before_split() -> dict:
    return load_toml_text(_git_show(BEFORE_SPLIT, "conda_torchcheck/explain/error_patterns.toml"))


def _as_split() -> dict:
    return patterns.merge_areas(
        load_toml_text(_git_show(SPLIT, f"conda_torchcheck/explain/error_patterns/{area}.toml"))
        for area in patterns.AREAS
    )


def test_the_split_table_is_identical_to_the_single_file_it_came_from():
    """Same keys, same values, same order of patterns, clues, causes and their entries (json.dumps keeps order)."""
    before, after = _before_split(), _as_split()
    assert set(before) == set(after)
    for key in before:
        assert json.dumps(before[key], ensure_ascii=False) == json.dumps(after[key], ensure_ascii=False), key


def test_the_parsed_table_keeps_the_order_of_patterns_and_clues():
    before, tbl = patterns.parse_table(_before_split()), patterns.parse_table(_as_split())
    assert [p.id for p in before.patterns] == [p.id for p in tbl.patterns]
    assert [c.id for c in before.clues] == [c.id for c in tbl.clues]
    assert list(before.causes) == list(tbl.causes)
    assert [[a.pattern for a in p.anchors] for p in before.patterns] == [
        [a.pattern for a in p.anchors] for p in tbl.patterns
    ]
