from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.checks.tc_helpers import LAYOUTS, all_commands, context, healthy, run_check, variant_of


def _make_base(b):
    (b.prefix / "condabin").mkdir()
    (b.prefix / "envs").mkdir()
    b.conda_record("conda", "25.1.1", "py311h38be061_0")
    return b


@pytest.mark.parametrize(("os", "layout"), LAYOUTS)
def test_silent_on_healthy_env(make_env, os, layout):
    assert run_check(healthy(make_env(os=os, layout=layout)), "base_env") == []


@pytest.mark.parametrize("os", ["linux", "windows"])
def test_torch_in_base(make_env, os):
    b = _make_base(healthy(make_env(os=os)))
    [f] = run_check(b, "base_env")
    assert f.id == "TC106" and f.severity.value == "warning"
    create, remove = f.fixes
    assert create.commands[0] == "conda create -n torch -c conda-forge python=3.11 pytorch torchvision"
    assert "-c pytorch" not in create.commands[0]
    assert remove.commands[0].endswith("pytorch torchvision torchaudio")


def test_base_without_torch_is_fine(make_env):
    assert run_check(_make_base(make_env()), "base_env") == []


# --- TC107 -------------------------------------------------------------------------------------------


def test_another_env_is_active(make_env, monkeypatch):
    other = make_env(name="other")
    b = healthy(make_env())
    monkeypatch.setenv("CONDA_PREFIX", str(other.prefix))
    [f] = run_check(b, "base_env", live=True)
    assert (f.id, variant_of(f), f.severity.value) == ("TC107", "other", "info")
    assert f.title.params["active"] == str(other.prefix)
    assert all_commands(f) == [f'conda activate "{b.prefix}"']


def test_the_checked_env_is_active(make_env, monkeypatch):
    b = healthy(make_env())
    monkeypatch.setenv("CONDA_PREFIX", str(b.prefix))
    assert run_check(b, "base_env", live=True) == []


def test_a_venv_on_top_of_an_active_conda_env_is_active(make_env, monkeypatch):
    conda = make_env(name="conda-env")
    venv = healthy(make_env(layout="venv"))
    monkeypatch.setenv("CONDA_PREFIX", str(conda.prefix))
    monkeypatch.setenv("VIRTUAL_ENV", str(venv.prefix))
    assert run_check(venv, "base_env", live=True) == []


def test_nothing_active_and_nothing_to_activate_is_silent(make_env):
    """Run directly, the env's python sees what this report saw: nothing to say."""
    b = healthy(make_env())
    assert run_check(b, "base_env", live=True) == []


def test_nothing_active_but_activation_sets_variables(make_env):
    b = healthy(make_env())
    scripts = b.prefix / "etc" / "conda" / "activate.d"
    scripts.mkdir(parents=True)
    (scripts / "libtorch_activate.sh").write_text("export LD_LIBRARY_PATH=...\n", encoding="utf-8")
    (b.prefix / "conda-meta" / "state").write_text(json.dumps({"env_vars": {"CUDA_HOME": "/x"}}), encoding="utf-8")
    [f] = run_check(b, "base_env", live=True)
    assert (f.id, variant_of(f)) == ("TC107", "none")
    assert f.evidence["activation sets"] == [str(scripts / "libtorch_activate.sh"), "CUDA_HOME=/x"]


def test_not_knowable_without_a_live_host(make_env, monkeypatch):
    other = make_env(name="other")
    b = healthy(make_env())
    monkeypatch.setenv("CONDA_PREFIX", str(other.prefix))
    assert run_check(b, "base_env", live=False) == []


def test_the_running_env_is_active_when_nothing_is_activated():
    here = Path(sys.prefix)
    if sys.prefix == sys.base_prefix and not (here / "conda-meta").is_dir():
        pytest.skip("the tests do not run inside an environment")
    assert context(here, live=True).env.is_active is True
