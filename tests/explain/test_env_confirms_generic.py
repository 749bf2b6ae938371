"""Issue 12 item 4, the causes of any platform: each corpus cause with an env-side check is confirmed by that
check on an env that really has the problem, and not on its healthy twin. ``explain(paste, ctx)`` runs the
checks itself (no findings=)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conda_torchcheck.explain import explain
from tests.checks.tc_helpers import context, healthy
from tests.explain.confirming import assert_confirmed, assert_not_confirmed, paste, status_of

# --- pip finds no torch for this interpreter ---------------------------------------------------------------


@pytest.mark.parametrize("report", ["x017", "x018", "x019", "x067"])
def test_platform_without_wheels_is_confirmed_by_tc452_on_an_x86_64_mac_python(make_env, report):
    """pip lists torch up to 2.2.2 only: the env's Python is macOS x86_64 (no wheels after 2.2.2)."""
    b = make_env(os="darwin", arch="x86_64", layout="venv", python="3.12.3")
    assert_confirmed(explain(paste(report), context(b)), "platform-without-wheels")
    twin = make_env(os="darwin", arch="arm64", layout="venv", python="3.12.3")
    assert_not_confirmed(explain(paste(report), context(twin)), "platform-without-wheels")


def test_python_not_supported_is_confirmed_by_tc100_python_unsupported(make_env):
    """w027: `(from versions: none)` for a Python no torch supports yet (3.12 in October 2023; 3.99 here)."""
    b = make_env(os="windows", layout="venv", python="3.99.0")
    assert_confirmed(explain(paste("w027"), context(b)), "python-not-supported")
    twin = make_env(os="windows", layout="venv", python="3.11.9")
    assert_not_confirmed(explain(paste("w027"), context(twin)), "python-not-supported")


def test_python_32bit_is_confirmed_by_tc100_python_32bit(make_env):
    """w014: Python37-32, pip sees only the 0.1.2 placeholders."""
    b = make_env(os="windows", layout="venv", arch="x86", python="3.7.9")
    result = explain(paste("w014"), context(b))
    assert_confirmed(result, "python-32bit")
    assert status_of(result, "python-not-supported") == "not-found"
    twin = make_env(os="windows", layout="venv", arch="x86_64", python="3.7.9")
    assert_not_confirmed(explain(paste("w014"), context(twin)), "python-32bit")


# --- what the working directory or PYTHONPATH puts before the env -------------------------------------------


def checkout(at: Path) -> Path:
    """A PyTorch source checkout: setup.py, torch/__init__.py, torch/csrc, no built torch/_C."""
    (at / "torch" / "csrc").mkdir(parents=True)
    (at / "torch" / "__init__.py").write_text("", encoding="utf-8")
    (at / "setup.py").write_text("", encoding="utf-8")
    return at


@pytest.mark.parametrize("report", ["x030", "x031", "x032", "x033"])
@pytest.mark.parametrize("how", ["cwd", "pythonpath"])
def test_source_checkout_on_path_is_confirmed_by_tc206(make_env, tmp_path, report, how):
    """The working directory is the one python starts in: live, or given (`--cwd DIR`); offline nothing else
    names it. PYTHONPATH is the env's variables (live, or --env)."""
    src = checkout(tmp_path / "pytorch")
    b = healthy(make_env(os="darwin" if report == "x031" else "linux", arch="arm64" if report == "x031" else "x86_64"))
    ctx = context(b, cwd=src) if how == "cwd" else context(b, env={"PYTHONPATH": str(src)})
    assert_confirmed(explain(paste(report), ctx), "source-checkout-on-path")
    elsewhere = tmp_path / "work"
    elsewhere.mkdir()
    twin = context(b, cwd=elsewhere) if how == "cwd" else context(b)
    assert_not_confirmed(explain(paste(report), twin), "source-checkout-on-path")


def test_local_file_shadows_module_is_confirmed_by_tc206_cwd_module(make_env, tmp_path):
    """x034: the user's org.py (copy's and pickle's Jython probe imports `org`) in the working directory."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "org.py").write_text("import torch\n", encoding="utf-8")
    b = healthy(make_env())
    result = explain(paste("x034"), context(b, cwd=work))
    assert_confirmed(result, "local-file-shadows-module")
    assert status_of(result, "source-checkout-on-path") == "not-found"
    (work / "org.py").rename(work / "my_test.py")
    assert_not_confirmed(explain(paste("x034"), context(b, cwd=work)), "local-file-shadows-module")


# --- an env's packages run by another interpreter ----------------------------------------------------------------


def test_interpreter_not_env_is_confirmed_by_tc206_foreign_site(make_env):
    """w048: another program's Python runs a venv's torch. TouchDesigner adds the venv's site-packages to
    sys.path at run time (what no file shows); the env-visible form of the same cause is PYTHONPATH naming
    another env's site-packages, checked against the interpreter that runs."""
    venv = make_env(os="windows", layout="venv", name="TDDepthAnything")
    venv.pip_torch("2.3.0")
    interpreter = make_env(os="windows", layout="venv", name="embedded")
    ctx = context(interpreter, env={"PYTHONPATH": str(venv.site_packages)})
    assert_confirmed(explain(paste("w048"), ctx), "interpreter-not-env")
    assert_not_confirmed(explain(paste("w048"), context(interpreter)), "interpreter-not-env")


# --- "No module named 'torch'" from an env that has torch ----------------------------------------------------


@pytest.mark.parametrize("report", ["w029", "w041"])
def test_wrong_interpreter_is_confirmed_by_the_env_having_torch(make_env, report):
    """The checked env has torch, so the Python that found none was another one (TC107.has_torch, built from
    the env by explain: only the error says that some Python found no torch)."""
    b = healthy(make_env(os="windows", layout="conda"))
    result = explain(paste(report), context(b))
    assert_confirmed(result, "wrong-interpreter")
    [root] = [d.root_cause for d in result.diagnoses if d.root_cause is not None]
    assert root.confirmed_by[0].title.key == "TC107.has_torch.title"
    assert any(f.title.key == "TC107.has_torch.title" for f in result.findings)
    twin = make_env(os="windows", layout="conda")  # no torch here: nothing to confirm
    assert_not_confirmed(explain(paste(report), context(twin)), "wrong-interpreter")
