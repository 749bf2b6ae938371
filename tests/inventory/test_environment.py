from __future__ import annotations

from pathlib import Path

import pytest

from conda_torchcheck.errors import TargetError
from conda_torchcheck.inventory import find_torch, load_environment


def test_linux_conda_env(make_env):
    b = make_env(os="linux", layout="conda")
    b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0000000_100")
    env, host = load_environment(b.prefix)
    assert env.os == "linux"
    assert env.platform == "linux-64"
    assert env.layout == "conda"
    assert env.python.version == "3.11.9"
    assert env.python.arch == "x86_64"
    assert env.record("pytorch").channel == "conda-forge"
    torch = find_torch(env)
    assert torch.source == "conda"
    assert torch.version == "2.5.1"
    assert torch.variant == "cpu"


def test_windows_venv_read_from_linux(make_env):
    b = make_env(os="windows", layout="venv", python="3.12.4")
    b.pip_torch("2.3.0+cpu")
    env, host = load_environment(b.prefix)
    assert env.os == "windows"
    assert env.platform == "win-64"
    assert env.layout == "venv"
    assert env.python.version == "3.12.4"
    assert host.live is False  # a Windows env examined from Linux: no live variables
    torch = find_torch(env)
    assert torch.source == "pip"
    assert torch.variant == "cpu"


def test_not_an_env(tmp_path):
    with pytest.raises(TargetError, match="not a Python environment"):
        load_environment(tmp_path)


def test_missing_prefix(tmp_path):
    with pytest.raises(TargetError, match="does not exist"):
        load_environment(tmp_path / "nope")


def test_non_ascii_prefix(make_env):
    b = make_env(os="windows", layout="conda", name="环境 with space")
    env, _ = load_environment(b.prefix)
    assert env.prefix == Path(b.prefix)
