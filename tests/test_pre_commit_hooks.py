"""The pre-commit hook this repository ships (.pre-commit-hooks.yaml): its file pattern, and its entry run the way
pre-commit runs it (the entry plus every matching staged file)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from conda_torchcheck.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
[HOOK] = YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))


def test_hook_fields():
    assert HOOK["id"] == "conda-torchcheck-spec" and HOOK["language"] == "python"
    assert shlex.split(HOOK["entry"]) == ["conda-torchcheck", "spec", "check"]
    assert HOOK["types"] == ["yaml"]


@pytest.mark.parametrize(
    ("path", "matches"),
    [
        ("environment.yml", True),
        ("environment.yaml", True),
        ("docs/environment-cuda.yml", True),
        ("env.yml", True),
        ("conda.yaml", True),
        ("envs/gpu.yml", True),
        ("binder/environment.yml", True),
        ("docker-compose.yml", False),
        (".github/workflows/ci.yml", False),
        ("config/model.yaml", False),
        ("my_environment_notes.yml", False),
    ],
)
def test_file_pattern(path, matches):
    assert bool(re.search(HOOK["files"], path)) is matches


def test_entry_checks_every_file_and_fails_on_errors(tmp_path, capsys):
    bad = tmp_path / "environment.yml"
    bad.write_text("channels: [pytorch]\ndependencies:\n  - python=3.11\n  - torch=2.5.1\n")
    good = tmp_path / "env.yml"
    good.write_text("channels: [conda-forge]\ndependencies:\n  - python=3.11\n  - pytorch=2.5.1\n")
    argv = shlex.split(HOOK["entry"])[1:] + [str(good), str(bad)]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert str(good) in out and str(bad) in out  # one report per file
    assert main(argv[:-1]) == 0


def test_an_unreadable_file_fails_the_hook_and_the_rest_is_still_checked(tmp_path, capsys):
    tabbed = tmp_path / "conda.yml"
    tabbed.write_text("name: x\ndependencies:\n\t- pytorch\n")
    good = tmp_path / "env.yml"
    good.write_text("channels: [conda-forge]\ndependencies:\n  - python=3.11\n  - pytorch=2.5.1\n")
    assert main(["spec", "check", str(tabbed), str(good)]) == 2
    out, err = capsys.readouterr()
    assert "tab is used for indentation" in err and str(good) in out
