"""First contact: `conda-torchcheck` with no target and none active checks the env it runs in; it says so and
shows how to point it at the user's envs (-p, -n, --all-envs) with the envs it can see from here."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from conda_torchcheck.cli.main import main
from tests.envbuilder import EnvBuilder


@pytest.fixture
def own_venv(tmp_path, monkeypatch):
    tool = EnvBuilder(tmp_path / "tool" / ".venv", layout="venv", python="3.12.3")
    monkeypatch.setattr(sys, "prefix", str(tool.prefix))
    for var in ("CONDA_EXE", "CONDA_ROOT", "MAMBA_ROOT_PREFIX", "CONDA_ENVS_PATH", "CONDA_ENVS_DIRS", "CONDARC"):
        monkeypatch.delenv(var, raising=False)
    return tool


def test_says_it_checked_its_own_env_and_lists_what_it_sees(own_venv, capsys):
    home = Path(os.environ["HOME"])
    base = EnvBuilder(home / "miniforge3", layout="conda")
    (base.prefix / "condabin").mkdir()
    EnvBuilder(home / "miniforge3" / "envs" / "ml", layout="conda")
    pyenv = EnvBuilder(home / ".pyenv" / "versions" / "3.11.9", layout="system")
    assert main(["check"]) == 0
    out = capsys.readouterr().out
    assert f"That was the environment conda-torchcheck itself runs in ({own_venv.prefix})" in out
    for option in ("-p PREFIX", "-n NAME", "--all-envs"):
        assert f"conda-torchcheck {option}" in out
    seen = out.split("Environments it can see from here:\n", 1)[1].splitlines()
    assert seen == [
        f"  conda-torchcheck -p {base.prefix} (base)",
        "  conda-torchcheck -n ml",
        f"  conda-torchcheck -p {pyenv.prefix}",
    ]


def test_says_when_it_sees_no_other_env(own_venv, capsys):
    main(["check"])
    assert "It sees no other environment from here" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["check", "-p", "{prefix}"], ["check", "--json"]])
def test_no_note_for_a_named_target_or_json(own_venv, capsys, argv):
    main([a.format(prefix=own_venv.prefix) for a in argv])
    out = capsys.readouterr().out
    assert "itself runs in" not in out
    if "--json" in argv:
        json.loads(out)


def test_no_note_when_an_env_is_active(own_venv, tmp_path, monkeypatch, capsys):
    other = EnvBuilder(tmp_path / "other", layout="venv")
    monkeypatch.setenv("VIRTUAL_ENV", str(other.prefix))
    main(["check"])
    assert "itself runs in" not in capsys.readouterr().out
