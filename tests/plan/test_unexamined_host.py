"""A real venv read without its machine (--ignore-environment: the host's libraries are assumed, not read): a
torch library of another build still shows, because torch's own symbols (c10::, at::, caffe2 flags) can come
from no machine library; the healthy twin is told that the machine was not examined, never that nothing stops
`import torch`."""

from __future__ import annotations

import shutil

from conda_torchcheck.inventory import load_environment
from conda_torchcheck.render.text import render_text
from conda_torchcheck.report import check_environment
from tests.plan import realenvs


def _report(venv):
    env, host = load_environment(venv, use_live_host=False)
    return check_environment(env, host)


def test_another_builds_libc10_is_found_without_the_machine(real_env):
    venv, _ = real_env
    lib = realenvs.site(venv) / "torch" / "lib"
    (lib / "libc10.so").unlink()
    shutil.copy(lib / "libtorch.so", lib / "libc10.so")
    assert realenvs.real_import(venv) is not None  # really broken
    report = _report(venv)
    [f] = [f for f in report.findings if f.id == "TC403"]
    assert f.severity.value == "error" and f.evidence["count"] > 100


def test_the_healthy_twin_says_the_machine_was_not_examined(real_env):
    venv, _ = real_env
    report = _report(venv)
    assert [f.id for f in report.findings if f.severity.value == "error"] == []
    text = render_text(report)
    assert "nothing here stops" not in text
