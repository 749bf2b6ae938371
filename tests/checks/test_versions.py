from __future__ import annotations

import pytest

from conda_torchcheck.checks.versions import expected_torchvision, torchaudio_ok
from tests.checks.tc_helpers import LAYOUTS, PY_DEP, all_commands, healthy, ids, run_check


@pytest.mark.parametrize(("os", "layout"), LAYOUTS)
def test_silent_on_healthy_env(make_env, os, layout):
    assert run_check(healthy(make_env(os=os, layout=layout)), "versions") == []


@pytest.mark.parametrize(("os", "layout"), LAYOUTS)
def test_torchvision_for_another_torch(make_env, os, layout):
    b = healthy(make_env(os=os, layout=layout), torch="2.5.1", vision="0.19.1")
    [f] = run_check(b, "versions")
    assert f.id == "TC104" and f.severity.value == "error"
    assert f.evidence["torchvision"]["expected"] == "0.20"
    assert f.title.params["packages"] == "torchvision 0.19.1"
    [command] = all_commands(f)
    if layout == "venv":
        python = b.prefix / ("Scripts/python.exe" if os == "windows" else "bin/python")
        assert command.startswith(f'"{python}" -m pip install torch==2.5.1 "torchvision==0.20.*"')
    else:
        assert command.startswith("conda install -p ")
        assert '"conda-forge::pytorch=2.5.1=cpu*"' in command and "conda-forge::torchvision" in command


def test_pip_fix_keeps_torchs_index(make_env):
    b = make_env(layout="venv")
    b.pip_torch("2.5.1+cu124", cuda="12.4")
    b.dist("torchvision", "0.19.1+cu124")
    [f] = run_check(b, "versions")
    [command] = all_commands(f)
    assert command.endswith("--index-url https://download.pytorch.org/whl/cu124")


def test_torch_version_comes_from_the_files_not_the_metadata(make_env):
    """A stale dist-info says 2.4.0, but version.py of the package that imports says 2.5.1."""
    b = make_env(layout="venv")
    b.torch_package("2.5.1")
    b.dist("torch", "2.4.0")
    b.dist("torchvision", "0.20.1")
    assert run_check(b, "versions") == []


@pytest.mark.parametrize(
    ("torch", "audio", "ok"),
    [
        ("2.5.1", "2.5.1", True),
        ("2.5.1", "2.5.0", True),  # same minor
        ("2.5.1", "2.4.1", False),
        ("2.13.0", "2.11.0", True),  # stable ABI: every later torch
        ("2.12.1", "2.11.0", True),
        ("2.10.0", "2.11.0", False),  # but not an earlier one
        ("2.11.0", "2.11.0", True),
        ("2.11.0", "2.10.0", False),
    ],
)
def test_torchaudio_rules(torch, audio, ok):
    assert torchaudio_ok(torch, audio)[0] is ok


def test_torchaudio_mismatch_finding(make_env):
    b = make_env(layout="venv")
    b.pip_torch("2.10.0")
    b.dist("torchaudio", "2.11.0")
    [f] = run_check(b, "versions")
    assert f.evidence["torchaudio"]["expected"] == "torch >= 2.11"


def test_stable_abi_torchaudio_with_newer_torch_is_fine(make_env):
    b = make_env(layout="venv")
    b.pip_torch("2.13.0")
    b.dist("torchvision", "0.28.0")
    b.dist("torchaudio", "2.11.0")
    assert run_check(b, "versions") == []


def test_torchvision_patch_pairs_from_the_table():
    assert expected_torchvision("2.0.1") == (("0.15.2",), False)
    assert expected_torchvision("2.5.1") == (("0.20",), False)


def test_torch_newer_than_the_table_uses_the_numbering_rule(make_env):
    assert expected_torchvision("2.20.0") == (("0.35",), True)
    b = make_env(layout="venv")
    b.pip_torch("2.20.0")
    b.dist("torchvision", "0.34.0")
    [f] = run_check(b, "versions")
    assert "2.x numbering rule" in f.evidence["torchvision"]["expected"]


def test_conda_torch_with_pip_torchaudio_for_another_release(make_env):
    b = make_env()
    b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0000000_100", depends=PY_DEP)
    b.dist("torchaudio", "2.4.0")
    [f] = run_check(b, "versions")
    uninstall, install = all_commands(f)
    assert uninstall.endswith("-m pip uninstall -y torchaudio")
    assert install.endswith("conda-forge::torchaudio")


def test_conda_torchvision_for_another_conda_torch(make_env):
    b = make_env(os="windows")
    b.conda_pytorch("2.5.1", "cuda126_mkl_py311_h0000000_303", depends=PY_DEP, cuda="12.6")
    b.conda_python_package("torchvision", "0.21.0", "cuda126_py311_h0000000_1")
    [f] = run_check(b, "versions")
    assert f.id == "TC104"
    assert '"conda-forge::pytorch=2.5.1=cuda*"' in all_commands(f)[0]


# --- TC207 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("os", ["linux", "windows"])
def test_cpu_torch_with_cuda_torchvision(make_env, os):
    b = make_env(os=os, layout="venv")
    b.pip_torch("2.5.1+cpu")
    b.dist("torchvision", "0.20.1+cu121")
    [f] = run_check(b, "versions")
    assert f.id == "TC207" and f.severity.value == "warning"
    assert f.title.params["torch_build"] == "cpu"
    assert f.evidence["torchvision"] == "0.20.1+cu121 → CUDA 12.1"
    [command] = all_commands(f)
    assert '--force-reinstall --no-deps "torchvision==0.20.*"' in command
    assert command.endswith("--index-url https://download.pytorch.org/whl/cpu")


def test_cuda_versions_differ_between_wheels(make_env):
    b = make_env(layout="venv")
    b.pip_torch("2.5.1+cu124", cuda="12.4")
    b.dist("torchvision", "0.20.1+cu124")
    b.dist("torchaudio", "2.5.1+cu121")
    [f] = run_check(b, "versions")
    assert f.title.params["packages"] == "torchaudio"
    assert all_commands(f)[0].endswith("--index-url https://download.pytorch.org/whl/cu124")


def test_matching_local_versions_are_silent(make_env):
    b = make_env(layout="venv")
    b.pip_torch("2.5.1+cu124", cuda="12.4")
    b.dist("torchvision", "0.20.1+cu124")
    b.dist("torchaudio", "2.5.1")  # no tag: PyPI's default build, nothing explicit to compare
    assert ids(run_check(b, "versions")) == []
