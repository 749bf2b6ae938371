"""The typed knowledge modules: each subject's rows as frozen dataclasses with their source, read once, and the
facts that used to be stated twice stated once."""

from __future__ import annotations

import dataclasses

import pytest

from conda_torchcheck import knowledge
from conda_torchcheck.knowledge import conda_channels, cuda, linux, macos, python_env, torch_dependents, windows


def test_the_tables_are_parsed_once():
    knowledge.torch_release("2.5.1")
    windows.runtime_minimum("msvcp140.dll", "2.9.0")
    parsed = knowledge.load.cache_info().misses
    for _ in range(3):
        knowledge.torch_release("2.5.1")
        windows.runtime_minimum("msvcp140.dll", "2.9.0")
        conda_channels.pytorch_channel()
    assert knowledge.load.cache_info().misses <= parsed + 1  # conda_channels.toml at most, once


@pytest.mark.parametrize(
    "rows",
    [
        lambda: knowledge.torch_releases(),
        lambda: [knowledge.release_channels()],
        lambda: cuda.family_minimums().values(),
        lambda: cuda.toolkit_drivers().values(),
        lambda: [cuda.arch_build("2.14", "cu130")],
        lambda: windows.os_functions(),
        lambda: windows.cudnn_libraries(),
        lambda: windows.foreign_packages().values(),
        lambda: windows.runtime_minimums(),
        lambda: [conda_channels.pytorch_channel(), conda_channels.conda_forge_cuda()],
        lambda: [macos.mps()],
        lambda: torch_dependents.pip_dependents().values(),
        lambda: torch_dependents.conda_dependents().values(),
    ],
)
def test_every_typed_row_is_frozen_and_sourced(rows):
    rows = list(rows())
    assert rows
    for row in rows:
        assert dataclasses.is_dataclass(row) and row.__dataclass_params__.frozen
        assert row.source, row


def test_facts_stated_once():
    # the pytorch channel's last release and its pytorch-cuda versions: torch_releases.toml's
    assert conda_channels.pytorch_channel().last_release == knowledge.release_channels().pytorch_last == "2.5.1"
    assert conda_channels.pytorch_channel().pytorch_cuda == ("11.6", "11.7", "11.8", "12.1", "12.4")
    assert "last_release" not in knowledge.load("conda_channels")["pytorch_channel"]
    assert "pytorch_cuda" not in knowledge.load("conda_channels")["pytorch_channel"]
    # the defaults channel names: conda_channels.toml's, for checks (builder) and envspec alike
    from conda_torchcheck.checks.facts import builder
    from conda_torchcheck.envspec.intent import facts

    assert "defaults" not in knowledge.load("env_files")
    assert facts()["defaults"]["names"] == list(conda_channels.defaults_names())
    assert all(builder(name) == "anaconda" for name in conda_channels.defaults_names())


def test_the_msvcp140_floor_is_data():
    assert windows.runtime_minimum("msvcp140.dll", "2.9.0") == "14.40"
    assert windows.runtime_minimum("MSVCP140.dll", "2.15.0+cu132") == "14.40"
    assert windows.runtime_minimum("msvcp140.dll", "2.8.0") is None
    assert windows.runtime_minimum("msvcp140.dll", None) is None


def test_spot_checks():
    assert cuda.family_minimum("12", "linux") == "525.60.13" and cuda.family_minimum("12", "darwin") is None
    assert cuda.toolkit_driver("12.6", "windows") == "560.76"
    assert cuda.arch_build("2.14", "cu126").archs[0] == "5.0" and cuda.arch_build("2.15", "cu132") is None
    assert windows.os_name((6, 1)) == "Windows 7" and windows.last_torch_without_new_os_functions() == "2.3"
    assert linux.gcc_for_symbol_version("GLIBCXX_3.4.30") == "12.1.0"
    assert linux.conda_package_for("libcudnn_ops.so.9") == "cudnn"
    assert linux.nvidia_base_for("libnccl.so.2") == ("nvidia-nccl", "nccl")
    assert macos.mps().needed_macos("2.5.1") == "13.0" and macos.mps().needed_macos("2.4.0") == "12.3"
    assert "typing" in python_env.torch_import_modules()
    assert python_env.import_time_requirements() == {"typing-extensions": "typing_extensions"}


def test_a_torch_newer_than_the_tables_is_named_with_the_newest_known():
    newest = knowledge.known_torch_minors()[-1]
    major, minor = (int(x) for x in newest.split("."))
    assert knowledge.beyond_tables(f"{major}.{minor + 1}.0") == newest
    assert knowledge.beyond_tables(f"{major}.{minor + 1}.0.dev20270101+cu132") == newest
    assert knowledge.beyond_tables(f"{newest}.0") is None and knowledge.beyond_tables("2.5.1") is None
    assert knowledge.beyond_tables(None) is None and knowledge.beyond_tables("garbage") is None
