from __future__ import annotations

import json

import pytest

from tests.checks.tc_helpers import LAYOUTS, PY_DEP, all_commands, healthy, ids, run_check, variant_of
from tests.envbuilder import EnvBuilder


def _user_site(tmp_path, os):
    if os == "windows":
        appdata = tmp_path / "AppData" / "Roaming"
        return {"APPDATA": str(appdata)}, appdata / "Python" / "Python311" / "site-packages"
    home = tmp_path / "someone"
    return {"HOME": str(home)}, home / ".local" / "lib" / "python3.11" / "site-packages"


@pytest.mark.parametrize(("os", "layout"), LAYOUTS)
def test_silent_on_healthy_env(make_env, os, layout, tmp_path):
    variables, user_site = _user_site(tmp_path, os)
    user_site.mkdir(parents=True)  # an existing but torch-free user site
    b = healthy(make_env(os=os, layout=layout))
    assert run_check(b, "shadowing", env=variables) == []


# --- TC205 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("os", ["linux", "windows"])
def test_user_site_torch_shadows_the_envs(make_env, os, tmp_path):
    variables, user_site = _user_site(tmp_path, os)
    b = healthy(make_env(os=os, layout="conda"))
    b.pip_torch("2.3.0", site=user_site)
    b.dist("torchvision", "0.18.0", site=user_site)
    [f] = run_check(b, "shadowing", env=variables)
    # an error since issue 21: the user site comes before site-packages, so another torch is what loads
    assert (f.id, variant_of(f), f.severity.value) == ("TC205", "shadow", "error")
    assert f.evidence["env's own torch"] == "yes"
    remove, isolate = f.fixes
    assert remove.commands[0].endswith("-m pip uninstall -y torch torchvision")
    assert isolate.commands == (f'conda env config vars set -p "{b.prefix}" PYTHONNOUSERSITE=1',)


def test_user_site_torch_when_the_env_has_none(make_env, tmp_path):
    variables, user_site = _user_site(tmp_path, "linux")
    b = make_env()
    EnvBuilder.pip_torch(b, "2.3.0", site=user_site)
    [f] = run_check(b, "shadowing", env=variables)
    assert variant_of(f) == "only"


def test_pythonnousersite_turns_the_user_site_off(make_env, tmp_path):
    variables, user_site = _user_site(tmp_path, "linux")
    b = healthy(make_env())
    b.pip_torch("2.3.0", site=user_site)
    assert run_check(b, "shadowing", env={**variables, "PYTHONNOUSERSITE": "1"}) == []


@pytest.mark.parametrize("os", ["linux", "windows"])
def test_a_venv_without_system_site_packages_ignores_the_user_site(make_env, os, tmp_path):
    variables, user_site = _user_site(tmp_path, os)
    b = healthy(make_env(os=os, layout="venv"))
    b.pip_torch("2.3.0", site=user_site)
    assert run_check(b, "shadowing", env=variables) == []


def test_a_venv_with_system_site_packages_reads_the_user_site(make_env, tmp_path):
    variables, user_site = _user_site(tmp_path, "linux")
    b = healthy(make_env(layout="venv"))
    cfg = b.prefix / "pyvenv.cfg"
    cfg.write_text(cfg.read_text().replace("= false", "= true"), encoding="utf-8")
    b.pip_torch("2.3.0", site=user_site)
    [f] = run_check(b, "shadowing", env=variables)
    assert f.id == "TC205"
    assert len(f.fixes) == 1  # no conda env variables for a venv


# --- TC206 -------------------------------------------------------------------------------------------


def test_pythonpath_entry_with_torch(make_env, tmp_path):
    other = make_env(name="other")
    other.pip_torch("2.1.0")
    b = healthy(make_env())
    plain = tmp_path / "mycode"
    plain.mkdir()
    [f] = run_check(b, "shadowing", env={"PYTHONPATH": f"{plain}:{other.site_packages}"})
    # another env's site-packages: that env's packages under this python (not a torch folder of its own)
    # an error since issue 21: PYTHONPATH comes before site-packages, so that env's torch is what loads
    assert (f.id, variant_of(f), f.severity.value) == ("TC206", "foreign_site", "error")
    assert f.evidence["torch package"] == other.site_packages / "torch"
    assert f.title.params["entry"] == str(other.site_packages)
    assert all_commands(f) == [f'export PYTHONPATH="{plain}"']


def test_pythonpath_another_envs_site_packages_without_torch(make_env):
    other = make_env(name="other")
    b = healthy(make_env())
    [f] = run_check(b, "shadowing", env={"PYTHONPATH": str(other.site_packages)})
    assert (variant_of(f), f.severity.value) == ("foreign_site", "warning")  # no other torch in it
    assert all_commands(f) == ["unset PYTHONPATH"]


def test_pythonpath_set_by_conda_env_vars(make_env):
    other = make_env(name="other")
    b = healthy(make_env())
    (b.prefix / "conda-meta" / "state").write_text(
        json.dumps({"env_vars": {"PYTHONPATH": str(other.site_packages)}}), encoding="utf-8"
    )
    [f] = run_check(b, "shadowing", env={"PYTHONPATH": str(other.site_packages)})
    assert all_commands(f)[-1] == f'conda env config vars unset -p "{b.prefix}" PYTHONPATH'


def test_windows_pythonpath_uses_set(make_env):
    other = make_env(name="other", os="windows")
    other.pip_torch("2.1.0")
    b = healthy(make_env(os="windows"))
    [f] = run_check(b, "shadowing", env={"PYTHONPATH": str(other.site_packages)})
    assert all_commands(f) == ["set PYTHONPATH="]


def test_pytorch_source_checkout_on_pythonpath(make_env, tmp_path):
    checkout = tmp_path / "pytorch"
    (checkout / "torch" / "csrc").mkdir(parents=True)
    (checkout / "torch" / "__init__.py").write_text("", encoding="utf-8")
    (checkout / "setup.py").write_text("", encoding="utf-8")
    b = healthy(make_env())
    [f] = run_check(b, "shadowing", env={"PYTHONPATH": str(checkout)})
    assert variant_of(f) == "torch" and f.evidence["source checkout"] == "setup.py + torch/csrc"
    assert f.severity.value == "error"  # the checkout's torch is what `import torch` gets


def test_a_torch_py_on_pythonpath_is_an_error(make_env, tmp_path):
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "torch.py").write_text("import torch\nprint(torch.ones(2))\n", encoding="utf-8")
    b = healthy(make_env())
    [f] = run_check(b, "shadowing", env={"PYTHONPATH": str(scripts)})
    assert (f.id, variant_of(f), f.severity.value) == ("TC206", "pythonpath_module", "error")
    assert f.evidence["files"] == [str(scripts / "torch.py")]
    assert all_commands(f) == ["unset PYTHONPATH"]


def test_pythonpath_without_packages_is_silent(make_env, tmp_path):
    b = healthy(make_env())
    (tmp_path / "src").mkdir()
    assert run_check(b, "shadowing", env={"PYTHONPATH": str(tmp_path / "src")}) == []


def test_pth_file_pointing_at_another_env(make_env):
    other = make_env(name="other")
    b = make_env()
    b.conda_python_package("numpy", "2.1.0", "py311h0_0", depends=PY_DEP)
    (b.site_packages / "other-env.pth").write_text(f"{other.site_packages}\n", encoding="utf-8")
    [f] = run_check(b, "shadowing")
    assert (f.id, variant_of(f)) == ("TC206", "pth")
    assert f.evidence[".pth file"] == str(b.site_packages / "other-env.pth")
    assert str(b.site_packages / "other-env.pth") in f.fixes[0].summary.render()


def test_a_pth_folder_with_torch_is_an_error_only_where_the_env_has_no_torch(make_env):
    """A .pth folder comes after site-packages: its torch loads only in place of a missing one."""
    other = make_env(name="other")
    other.pip_torch("2.1.0")
    b = make_env()
    (b.site_packages / "other-env.pth").write_text(f"{other.site_packages}\n", encoding="utf-8")
    [f] = run_check(b, "shadowing")
    assert (variant_of(f), f.severity.value) == ("pth", "error")
    b.pip_torch("2.5.1")
    [f] = run_check(b, "shadowing")
    assert (variant_of(f), f.severity.value) == ("pth", "warning")


def test_editable_torch_checkout_is_the_developers_own_build(make_env, tmp_path):
    checkout = tmp_path / "pytorch"
    (checkout / "torch" / "csrc").mkdir(parents=True)
    (checkout / "torch" / "__init__.py").write_text("", encoding="utf-8")
    (checkout / "setup.py").write_text("", encoding="utf-8")
    b = make_env()
    (b.site_packages / "easy-install.pth").write_text(f"{checkout}\n", encoding="utf-8")
    (b.site_packages / "torch.egg-link").write_text(f"{checkout}\n.\n", encoding="utf-8")
    assert run_check(b, "shadowing") == []
    (b.site_packages / "torch.egg-link").unlink()
    [f] = run_check(b, "shadowing")
    assert (variant_of(f), f.evidence["source checkout"]) == ("pth", "setup.py + torch/csrc")


def test_working_directory_with_a_torch_folder(make_env, tmp_path):
    work = tmp_path / "work"
    (work / "torch").mkdir(parents=True)
    (work / "torch" / "__init__.py").write_text("", encoding="utf-8")
    b = healthy(make_env())
    [f] = run_check(b, "shadowing", live=True, cwd=work)
    assert (f.id, variant_of(f), f.severity.value) == ("TC206", "cwd", "warning")


def test_working_directory_offline_is_only_the_one_given(make_env, tmp_path):
    """An env examined from elsewhere knows no working directory: only --cwd DIR (cwd=) names one."""
    work = tmp_path / "work"
    (work / "torch").mkdir(parents=True)
    (work / "torch" / "__init__.py").write_text("", encoding="utf-8")
    b = healthy(make_env())
    assert ids(run_check(b, "shadowing")) == []
    [f] = run_check(b, "shadowing", cwd=work)
    assert (variant_of(f), f.evidence["working directory"]) == ("cwd", work)


def test_user_file_named_like_a_module_torch_imports(make_env, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    for name in ("org.py", "test.py", "train.py"):
        (work / name).write_text("import torch\n", encoding="utf-8")
    b = healthy(make_env())
    [f] = run_check(b, "shadowing", cwd=work)
    assert (f.id, variant_of(f), f.severity.value) == ("TC206", "cwd_module", "warning")
    assert f.evidence["files"] == [str(work / "org.py")]  # test.py and train.py hide nothing torch imports
    assert "NameError: name '_C' is not defined" in f.explanation.render()
    (work / "org.py").unlink()
    assert run_check(b, "shadowing", cwd=work) == []
