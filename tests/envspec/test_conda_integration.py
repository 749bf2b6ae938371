"""Exporter fields and the pre-command hook, tested without conda (fake ``conda`` modules)."""

from __future__ import annotations

import sys
import types
from types import SimpleNamespace as NS

import pytest

from conda_torchcheck.envspec import conda_integration as ci

FROZEN = "channels:\n  - pytorch\n  - nvidia\ndependencies:\n  - python=3.12\n  - pytorch=2.6\n  - pytorch-cuda=12.4\n"
GOOD = (
    "channels: [conda-forge, nodefaults]\n"
    "dependencies: [python=3.12, conda-forge::pytorch=2.5.1=cuda*, cuda-version=12.6]\n"
)


class FakeCondaError(Exception):
    pass


@pytest.fixture
def fake_conda(monkeypatch):
    """Install stand-ins for conda.base.context and conda.exceptions; return the context to configure."""
    context = NS(_argparse_args=NS(file=None), quiet=False, plugins=NS(torchcheck_strict=False))
    conda = types.ModuleType("conda")
    base = types.ModuleType("conda.base")
    ctx_mod = types.ModuleType("conda.base.context")
    ctx_mod.context = context
    exc_mod = types.ModuleType("conda.exceptions")
    exc_mod.CondaError = FakeCondaError
    for name, mod in {
        "conda": conda,
        "conda.base": base,
        "conda.base.context": ctx_mod,
        "conda.exceptions": exc_mod,
    }.items():
        monkeypatch.setitem(sys.modules, name, mod)
    monkeypatch.setattr(ci, "_REFUSAL_CLASS", [])
    monkeypatch.delenv("CONDA_PLUGINS_TORCHCHECK_STRICT", raising=False)
    return context


def test_exporter_fields_do_not_claim_environment_yml():
    kw = ci.exporter_kwargs()
    assert kw["name"] == "torchcheck" and kw["aliases"] == ("torchcheck-yaml",)
    assert "environment.yml" not in kw["default_filenames"]
    assert callable(kw["export"])


def test_pre_command_warns_on_stderr(fake_conda, tmp_path, capsys):
    f = tmp_path / "environment.yml"
    f.write_text(FROZEN)
    fake_conda._argparse_args = NS(file=[str(f)])  # conda env create -f (26.7: a list)
    ci.pre_command("create")
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "TC605" in captured.err and "spec fix" in captured.err
    lines = captured.err.splitlines()
    # one hint per line (they used to run onto one line, three spaces apart)
    assert lines[-2] == f"  Details and fixes: conda torchcheck spec check {f}"
    assert lines[-1] == f"  Rewrite it (a diff first; --write changes the file): conda torchcheck spec fix {f}"


def test_pre_command_old_conda_string_file(fake_conda, tmp_path, capsys):
    f = tmp_path / "env.yaml"
    f.write_text(FROZEN)
    fake_conda._argparse_args = NS(file=str(f))  # conda ≤ 26.5 env_create
    ci.pre_command("env_create")
    assert "TC605" in capsys.readouterr().err


def test_pre_command_strict_refuses_errors(fake_conda, tmp_path):
    f = tmp_path / "environment.yml"
    f.write_text(FROZEN)
    fake_conda._argparse_args = NS(file=[str(f)])
    fake_conda.plugins = NS(torchcheck_strict=True)
    with pytest.raises(FakeCondaError) as info:
        ci.pre_command("create")
    assert type(info.value).__name__ == "TorchcheckStrictError"
    assert "torchcheck_strict" in str(info.value)


def test_pre_command_strict_from_environment_variable(fake_conda, tmp_path, monkeypatch):
    f = tmp_path / "environment.yml"
    f.write_text(FROZEN)
    fake_conda._argparse_args = NS(file=[str(f)])
    fake_conda.plugins = NS()  # setting not registered
    monkeypatch.setenv("CONDA_PLUGINS_TORCHCHECK_STRICT", "true")
    with pytest.raises(FakeCondaError):
        ci.pre_command("create")


def test_pre_command_strict_lets_warnings_pass(fake_conda, tmp_path, capsys):
    f = tmp_path / "environment.yml"
    f.write_text("channels: [conda-forge]\ndependencies: [python=3.12, pytorch]\n")
    fake_conda._argparse_args = NS(file=[str(f)])
    fake_conda.plugins = NS(torchcheck_strict=True)
    ci.pre_command("create")
    err = capsys.readouterr().err
    assert "TC611" in err
    # channel hygiene is an info note (issue 23): the hook, which shows what can break torch, leaves it out
    assert "TC603" not in err


def test_pre_command_quiet_for_good_files_and_other_commands(fake_conda, tmp_path, capsys):
    f = tmp_path / "environment.yml"
    f.write_text(GOOD)
    fake_conda._argparse_args = NS(file=[str(f)])
    ci.pre_command("create")
    bad = tmp_path / "bad.yml"
    bad.write_text(FROZEN)
    fake_conda._argparse_args = NS(file=[str(bad)])
    ci.pre_command("install")
    assert capsys.readouterr().err == ""


def test_pre_command_skips_non_yaml_missing_and_urls(fake_conda, tmp_path, capsys):
    req = tmp_path / "requirements.txt"
    req.write_text("pytorch=2.6\n")
    fake_conda._argparse_args = NS(file=[str(req), str(tmp_path / "missing.yml"), "https://x/env.yml"])
    ci.pre_command("create")
    fake_conda._argparse_args = NS(file=None, packages=["pytorch"])
    ci.pre_command("create")
    assert capsys.readouterr().err == ""


def test_pre_command_reports_an_unreadable_yaml_in_one_line(fake_conda, tmp_path, capsys):
    f = tmp_path / "environment.yml"
    f.write_text("dependencies:\n\t- pytorch\n")
    fake_conda._argparse_args = NS(file=[str(f)])
    fake_conda.plugins = NS(torchcheck_strict=True)
    ci.pre_command("create")  # conda reports the file itself; strict does not refuse our own reading problem
    err = capsys.readouterr().err
    assert "tab" in err and len(err.strip().splitlines()) == 1


def test_pre_command_never_breaks_on_its_own_errors(fake_conda, tmp_path, monkeypatch, capsys):
    f = tmp_path / "environment.yml"
    f.write_text(FROZEN)
    fake_conda._argparse_args = NS(file=[str(f)])
    fake_conda.plugins = NS(torchcheck_strict=True)

    def boom(*args, **kwargs):
        raise RuntimeError("bug")

    monkeypatch.setattr("conda_torchcheck.envspec.check_path", boom)
    ci.pre_command("create")  # no exception: the bug is logged at debug level only
    monkeypatch.setitem(sys.modules, "conda.base.context", None)  # import of conda's context fails
    ci.pre_command("create")


def test_check_files_result_shape(tmp_path):
    f = tmp_path / "environment.yml"
    f.write_text(FROZEN)
    [(path, findings, error)] = ci.check_files([str(f)])
    assert path == str(f) and error is None
    assert any(x.id == "TC605" for x in findings)
