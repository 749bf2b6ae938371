"""-n NAME without conda: envs dirs, .condarc envs_dirs, ~/.conda/environments.txt; the default target."""

from __future__ import annotations

import os
import types
from pathlib import Path

import pytest

from conda_torchcheck.errors import TargetError
from conda_torchcheck.inventory import locate
from conda_torchcheck.inventory.locate import default_prefix, envs_dirs, resolve_name, resolve_target


def _env(path: Path) -> Path:
    (path / "conda-meta").mkdir(parents=True)
    return path


@pytest.fixture(autouse=True)
def _tool_outside_any_conda(monkeypatch, tmp_path):
    """The installation the tests run from (maybe a conda base) must not become a root to search."""
    monkeypatch.setattr(locate, "sys", types.SimpleNamespace(prefix=str(tmp_path / "tool-venv")))


@pytest.fixture
def home(tmp_path) -> Path:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return home


def test_name_in_an_installations_envs(home):
    root = _env(home / "miniforge3")
    target = _env(root / "envs" / "torch")
    assert resolve_name("torch", environ={}, home=home) == target


def test_conda_root_variables_come_first(home, tmp_path):
    _env(home / "miniconda3" / "envs" / "torch")
    root = _env(tmp_path / "opt" / "conda")
    target = _env(root / "envs" / "torch")
    assert resolve_name("torch", environ={"CONDA_ROOT": str(root)}, home=home) == target
    exe = {"CONDA_EXE": str(root / "bin" / "conda")}
    assert resolve_name("torch", environ=exe, home=home) == target


def test_root_from_an_active_env(home, tmp_path):
    root = _env(tmp_path / "mamba")
    active = _env(root / "envs" / "work")
    target = _env(root / "envs" / "torch")
    environ = {"CONDA_PREFIX": str(active), "CONDA_SHLVL": "1"}
    assert resolve_name("torch", environ=environ, home=home) == target


def test_conda_envs_path_variable(home, tmp_path):
    target = _env(tmp_path / "shared-envs" / "torch")
    environ = {"CONDA_ENVS_PATH": str(tmp_path / "shared-envs")}
    assert resolve_name("torch", environ=environ, home=home) == target
    assert envs_dirs(environ, home)[0] == tmp_path / "shared-envs"


@pytest.mark.parametrize(
    "condarc",
    [
        "envs_dirs:\n  - {d}\n  - ~/other\nchannels:\n  - conda-forge\n",
        "envs_dirs:\n- {d}\n",
        "channels: [conda-forge]\nenvs_dirs: [{d}]\n",
        "envs_dirs:\n  - '{d}'  # quoted, with a comment\n",
    ],
)
def test_condarc_envs_dirs(home, tmp_path, condarc):
    target = _env(tmp_path / "elsewhere" / "torch")
    (home / ".condarc").write_text(condarc.format(d=tmp_path / "elsewhere"), encoding="utf-8")
    assert resolve_name("torch", environ={}, home=home) == target


def test_condarc_expands_variables(home, tmp_path):
    target = _env(tmp_path / "scratch" / "envs" / "torch")
    (home / ".condarc").write_text("envs_dirs:\n  - ${SCRATCH}/envs\n", encoding="utf-8")
    assert resolve_name("torch", environ={"SCRATCH": str(tmp_path / "scratch")}, home=home) == target


def test_environments_txt(home, tmp_path):
    target = _env(tmp_path / "projects" / "torch")
    (home / ".conda").mkdir()
    (home / ".conda" / "environments.txt").write_text(f"# conda's list\n{target}\n", encoding="utf-8")
    assert resolve_name("torch", environ={}, home=home) == target


def test_user_envs_dir(home):
    target = _env(home / ".conda" / "envs" / "torch")
    assert resolve_name("torch", environ={}, home=home) == target


def test_base(home):
    root = _env(home / "anaconda3")
    (root / "envs").mkdir()
    assert resolve_name("base", environ={}, home=home) == root
    assert resolve_name("root", environ={}, home=home) == root


def test_unknown_name_says_where_it_looked(home):
    with pytest.raises(TargetError) as info:
        resolve_name("nope", environ={}, home=home)
    assert str(info.value) == "no environment named 'nope' was found"
    assert str(home / ".conda" / "envs") in info.value.hint


def test_a_path_is_not_a_name(home):
    with pytest.raises(TargetError, match="is a path, not an environment name"):
        resolve_name("envs/torch", environ={}, home=home)


def test_default_target(tmp_path):
    assert default_prefix({"CONDA_PREFIX": str(tmp_path)}) == tmp_path
    assert default_prefix({"VIRTUAL_ENV": str(tmp_path)}) == tmp_path
    assert default_prefix({}) == Path(locate.sys.prefix)


def test_default_target_with_a_venv_inside_a_conda_env(tmp_path):
    conda, venv = tmp_path / "conda-env", tmp_path / "venv"
    both = {"CONDA_PREFIX": str(conda), "VIRTUAL_ENV": str(venv)}
    path = os.pathsep.join([str(venv / "bin"), str(conda / "bin"), "/usr/bin"])
    assert default_prefix({**both, "PATH": path}) == venv
    path = os.pathsep.join([str(conda / "bin"), str(venv / "bin"), "/usr/bin"])
    assert default_prefix({**both, "PATH": path}) == conda


def test_prefix_wins_and_expands_user(home, monkeypatch):
    monkeypatch.setenv("HOME", str(home))
    assert resolve_target("~/env", None, environ={}) == home / "env"
