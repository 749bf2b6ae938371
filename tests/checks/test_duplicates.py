from __future__ import annotations

import shutil

import pytest

from conda_torchcheck.checks.duplicates import leftover_package
from tests.checks.tc_helpers import LAYOUTS, PY_DEP, all_commands, healthy, ids, run_check, variant_of


@pytest.mark.parametrize(("os", "layout"), LAYOUTS)
def test_silent_on_healthy_env(make_env, os, layout):
    assert run_check(healthy(make_env(os=os, layout=layout)), "duplicates") == []


# --- TC203 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("os", "layout"), LAYOUTS)
def test_two_pip_torch_metadata_folders_in_one_site(make_env, os, layout):
    b = make_env(os=os, layout=layout)
    b.pip_torch("2.5.1")
    b.dist("torch", "2.4.0")  # left by an interrupted upgrade
    [f] = run_check(b, "duplicates")
    assert (f.id, variant_of(f)) == ("TC203", "same_site")
    assert f.title.params["versions"] == "2.4.0, 2.5.1"
    assert f.evidence["torch/version.py"] == "2.5.1"
    remove, reinstall = all_commands(f)
    stale = b.site_packages / "torch-2.4.0.dist-info"
    assert remove == (f'rmdir /s /q "{stale}"' if os == "windows" else f'rm -rf "{stale}"')
    assert reinstall.endswith("install --force-reinstall --no-deps torch==2.5.1")


def test_conda_folder_plus_one_pip_folder_is_left_to_tc201(make_env):
    b = make_env()
    b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0000000_100", depends=PY_DEP)
    b.dist("torch", "2.6.0")
    assert run_check(b, "duplicates") == []


def test_torch_in_venv_and_in_the_base_it_inherits(make_env):
    base = make_env(name="base-python", layout="venv")  # any folder with lib/python3.11/site-packages
    base.pip_torch("2.4.0")
    b = make_env(layout="venv")
    b.pip_torch("2.5.1")
    (b.prefix / "pyvenv.cfg").write_text(
        f"home = {base.prefix / 'bin'}\ninclude-system-site-packages = true\nversion = 3.11.9\n", encoding="utf-8"
    )
    [f] = run_check(b, "duplicates")
    assert (f.id, variant_of(f)) == ("TC203", "across_sites")
    assert f.title.params["used"] == str(b.site_packages)
    assert f'rm -rf "{base.site_packages / "torch"}"' in all_commands(f)


# --- TC204 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "package"),
    [
        ("~orch", "torch"),
        ("~orch-2.3.0.dist-info", "torch"),
        ("~orchvision", "torchvision"),
        ("~orchvision-0.18.0.dist-info", "torchvision"),
        ("~affe2", "caffe2"),
        ("~umpy", None),
        ("~vidia", "nvidia"),
    ],
)
def test_leftover_names(name, package):
    assert leftover_package(name) == package


@pytest.mark.parametrize(("os", "layout"), LAYOUTS)
def test_tilde_leftovers_of_torch(make_env, os, layout):
    b = healthy(make_env(os=os, layout=layout))
    (b.site_packages / "~orch" / "lib").mkdir(parents=True)
    (b.site_packages / "~orch-2.4.0.dist-info").mkdir()
    [f] = run_check(b, "duplicates")
    assert (f.id, variant_of(f), f.severity.value) == ("TC204", "tilde", "warning")
    assert f.evidence["belonged to"] == ["torch"]
    commands = all_commands(f)
    assert len(commands) == 3 and "install --force-reinstall --no-deps torch==2.5.1" in commands[-1]


def test_unrelated_tilde_leftover_is_information(make_env):
    b = healthy(make_env(layout="venv"))
    (b.site_packages / "~umpy").mkdir()
    [f] = run_check(b, "duplicates")
    assert f.severity.value == "info"
    assert all_commands(f) == [f'rm -rf "{b.site_packages / "~umpy"}"']


@pytest.mark.parametrize("os", ["linux", "windows"])
def test_torch_folder_without_metadata(make_env, os):
    b = make_env(os=os, layout="venv")
    b.torch_package("2.3.0")
    [f] = run_check(b, "duplicates")
    assert (f.id, variant_of(f), f.severity.value) == ("TC204", "orphan", "warning")
    assert f.title.params["path"] == str(b.site_packages / "torch")


@pytest.mark.parametrize(("os", "layout"), LAYOUTS)
def test_metadata_without_torch_folder(make_env, os, layout):
    b = healthy(make_env(os=os, layout=layout))
    shutil.rmtree(b.site_packages / "torch")
    findings = run_check(b, "duplicates")
    assert ids(findings) == ["TC204"]
    [f] = findings
    assert (variant_of(f), f.severity.value) == ("no_package", "error")
    command = all_commands(f)[0]
    if layout == "conda":
        assert '--force-reinstall "conda-forge::pytorch=2.5.1=cpu_mkl_py311_h0000000_100"' in command
    else:
        assert command.endswith("install --force-reinstall --no-deps torch==2.5.1")


def test_no_torch_anywhere_is_silent(make_env):
    b = make_env()
    b.conda_python_package("numpy", "2.1.0", "py311h0_0")
    assert run_check(b, "duplicates") == []
