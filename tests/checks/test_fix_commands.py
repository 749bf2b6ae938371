"""Fix commands are written for the env at hand: its OS's paths, its python, -n only when conda finds it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conda_torchcheck.checks import commands as cmd
from conda_torchcheck.inventory import load_environment


def _env(b):
    env, _ = load_environment(b.prefix, use_live_host=False)
    return env


@pytest.mark.parametrize(
    ("os", "layout", "python"),
    [
        ("linux", "conda", "bin/python"),
        ("linux", "venv", "bin/python"),
        ("windows", "conda", "python.exe"),
        ("windows", "venv", "Scripts/python.exe"),
    ],
)
def test_the_envs_own_python(make_env, os, layout, python):
    b = make_env(os=os, layout=layout)
    env = _env(b)
    assert cmd.python_path(env) == str(b.prefix / python)
    assert cmd.pip(env, "install x") == f'"{b.prefix / python}" -m pip install x'


def test_windows_env_seen_from_wsl_gets_windows_paths(make_env):
    env = _env(make_env(os="windows"))
    wsl = dataclasses.replace(
        env,
        prefix=Path("/mnt/c/Users/李雷/miniconda3/envs/torch"),
        python=dataclasses.replace(env.python, executable=Path("/mnt/c/Users/李雷/miniconda3/envs/torch/python.exe")),
    )
    assert cmd.prefix_text(wsl) == "C:\\Users\\李雷\\miniconda3\\envs\\torch"
    assert cmd.python_path(wsl) == "C:\\Users\\李雷\\miniconda3\\envs\\torch\\python.exe"
    assert (
        cmd.conda_install(wsl, ["pytorch"])
        == 'conda install -p "C:\\Users\\李雷\\miniconda3\\envs\\torch" -c conda-forge pytorch'
    )


def test_name_only_when_conda_would_find_it(make_env, tmp_path):
    registered = make_env(name="home/.conda/envs/torchenv")  # HOME is tmp_path/home in tests
    unregistered = make_env(name="elsewhere/envs/torchenv2")
    assert cmd.conda_target(_env(registered)) == "-n torchenv"
    assert cmd.conda_target(_env(unregistered)) == f'-p "{unregistered.prefix}"'


@pytest.mark.parametrize(
    ("spec", "shown"),
    [
        ("torch==2.5.1", "torch==2.5.1"),
        ("torchvision==0.20.*", '"torchvision==0.20.*"'),
        ("mkl<2024.1", '"mkl<2024.1"'),
        ("conda-forge::pytorch=*=cuda*", '"conda-forge::pytorch=*=cuda*"'),
        ("conda-forge::torchvision", "conda-forge::torchvision"),
    ],
)
def test_specs_are_quoted_when_a_shell_would_touch_them(spec, shown):
    assert cmd.spec(spec) == shown


def test_uv_has_no_yes_flag(make_env):
    b = make_env(layout="venv")
    dist_dir = b.dist("torch", "2.5.1", installer="uv")
    env = _env(b)
    [dist] = [d for d in env.distributions if d.metadata_dir == dist_dir]
    assert cmd.pip(env, "uninstall -y torch", dist=dist) == f'uv pip uninstall torch --python "{b.prefix}/bin/python"'
