from __future__ import annotations

import shutil

import pytest

from tests.checks.tc_helpers import CONDA_LAYOUTS, LAYOUTS, PY_DEP, all_commands, healthy, ids, run_check, variant_of


def _conda_torch(b, version="2.5.1"):
    b.conda_pytorch(version, "cpu_mkl_py311_h0000000_100", depends=PY_DEP)
    return b


def _pip_replaces_conda(b, new="2.6.0"):
    """What `pip install torch==<new>` does to conda's torch: uninstall via RECORD, install its own."""
    shutil.rmtree(b.site_packages / "torch-2.5.1.dist-info")
    shutil.rmtree(b.site_packages / "torch")
    b.pip_torch(new)
    return b


@pytest.mark.parametrize(("os", "layout"), LAYOUTS)
def test_silent_on_healthy_env(make_env, os, layout):
    assert run_check(healthy(make_env(os=os, layout=layout)), "pip_conda") == []


@pytest.mark.parametrize(("os", "layout"), CONDA_LAYOUTS)
def test_pip_install_over_conda_pytorch(make_env, os, layout):
    b = _pip_replaces_conda(_conda_torch(make_env(os=os, layout=layout)))
    [f] = run_check(b, "pip_conda")
    assert f.id == "TC202" and variant_of(f) == "gone"
    title = f.title.render()
    assert "2.6.0" in title and "2.5.1" in title and "`conda list` will delete" in title
    assert "conda-meta/pytorch-2.5.1-cpu_mkl_py311_h0000000_100.json" in f.explanation.render()
    assert (
        f.evidence["deleted by `conda list`"] == b.prefix / "conda-meta/pytorch-2.5.1-cpu_mkl_py311_h0000000_100.json"
    )
    backup, keep_conda, keep_pip = f.fixes
    assert backup.kind == "file" and backup.commands[0].startswith("copy " if os == "windows" else "cp ")
    assert keep_conda.commands[0].endswith("-m pip uninstall -y torch")
    assert keep_conda.commands[1] == (
        f'conda install -p "{b.prefix}" --force-reinstall "conda-forge::pytorch=2.5.1=cpu_mkl_py311_h0000000_100"'
    )
    assert keep_pip.commands == (
        f'conda remove -p "{b.prefix}" --force pytorch',
        keep_pip.commands[1],
    )
    assert "install --force-reinstall --no-deps torch==2.6.0" in keep_pip.commands[1]


def test_conda_list_deletion_needs_a_python_dependent_record(make_env):
    """conda's interop loader only looks at records that depend on python (PrefixGraph descendants)."""
    b = make_env()
    b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0000000_100", depends=["libtorch 2.5.1.*"])
    _pip_replaces_conda(b)
    [f] = run_check(b, "pip_conda")
    assert variant_of(f) == "gone_kept"
    assert "deleted by `conda list`" not in f.evidence
    assert f.fixes[0].kind != "file"


def test_dependency_through_another_record_counts(make_env):
    b = make_env()
    b.conda_record("libtorch", "2.5.1", "cpu_mkl_h0_100", depends=["python_abi 3.11.* *_cp311"])
    b.conda_record("python_abi", "3.11", "5_cp311", depends=["python 3.11.*"])
    b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0000000_100", depends=["libtorch 2.5.1.*"])
    _pip_replaces_conda(b)
    [f] = run_check(b, "pip_conda")
    assert variant_of(f) == "gone"


def test_force_reinstall_over_the_same_version(make_env):
    b = _conda_torch(make_env())
    b.pip_torch("2.5.1")  # same dist-info folder name: pip rewrote it, INSTALLER is now pip
    [f] = run_check(b, "pip_conda")
    assert (f.id, variant_of(f)) == ("TC202", "replaced")
    assert "INSTALLER: pip" in f.evidence["conda's metadata"]


def test_pip_uninstall_of_conda_torch(make_env):
    b = _conda_torch(make_env(os="windows"))
    shutil.rmtree(b.site_packages / "torch-2.5.1.dist-info")
    shutil.rmtree(b.site_packages / "torch")
    [f] = run_check(b, "pip_conda")
    assert (f.id, variant_of(f)) == ("TC202", "removed")
    assert all_commands(f)[-1].endswith('--force-reinstall "conda-forge::pytorch=2.5.1=cpu_mkl_py311_h0000000_100"')


@pytest.mark.parametrize(("os", "layout"), CONDA_LAYOUTS)
def test_pip_torch_beside_conda_torch(make_env, os, layout):
    """Both metadata folders are there (pip could not uninstall conda's, e.g. --ignore-installed)."""
    b = _conda_torch(make_env(os=os, layout=layout))
    b.dist("torch", "2.6.0")
    [f] = run_check(b, "pip_conda")
    assert f.id == "TC201" and f.severity.value == "warning"
    assert f.title.params == {"conda_version": "2.5.1", "pip_version": "2.6.0"}
    assert len(f.fixes) == 2


def test_pip_torch_in_the_user_site_is_not_tc201(make_env, tmp_path):
    """A user-site copy is TC205's finding; TC201 is about two managers in the env itself."""
    b = _conda_torch(make_env())
    home = tmp_path / "someone"
    b.pip_torch("2.6.0", site=home / ".local/lib/python3.11/site-packages")
    assert run_check(b, "pip_conda", env={"HOME": str(home)}) == []


# --- TC208 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("os", "layout"), CONDA_LAYOUTS)
def test_pip_torchvision_on_conda_torch(make_env, os, layout):
    b = _conda_torch(make_env(os=os, layout=layout))
    b.dist("torchvision", "0.20.1", requires=["torch==2.5.1"])
    [f] = run_check(b, "pip_conda")
    assert f.id == "TC208"
    assert f.title.params == {"packages": "torchvision", "manager": "conda"}
    uninstall, install = all_commands(f)
    assert uninstall.endswith("-m pip uninstall -y torchvision")
    assert install == f'conda install -p "{b.prefix}" conda-forge::torchvision'


def test_conda_torchvision_left_under_pip_torch(make_env):
    b = _pip_replaces_conda(_conda_torch(make_env()), new="2.6.0+cu124")
    b.conda_python_package("torchvision", "0.20.1", "cpu_py311_h0000000_1")
    findings = run_check(b, "pip_conda")
    assert ids(findings) == ["TC202", "TC208"]
    tc208 = findings[1]
    assert tc208.title.params["manager"] == "pip"
    remove, install = all_commands(tc208)
    assert remove == f'conda remove -p "{b.prefix}" --force torchvision'
    assert '"torchvision==0.21.*"' in install and install.endswith("https://download.pytorch.org/whl/cu124")


def test_uv_installed_torch_gets_uv_commands(make_env):
    """uv-made venvs often have no pip: the fix speaks uv when uv installed torch."""
    b = make_env()
    b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0000000_100", depends=PY_DEP)
    b.dist("torch", "2.6.0", installer="uv")
    [f] = run_check(b, "pip_conda")
    assert f.fixes[0].commands[0] == f'uv pip uninstall torch --python "{b.prefix}/bin/python"'
