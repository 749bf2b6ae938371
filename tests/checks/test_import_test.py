"""The opt-in import test against a real interpreter (a venv of this Python) with a fake ``torch`` package."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
import venv
from pathlib import Path

import pytest

from conda_torchcheck.checks import import_test
from conda_torchcheck.checks.context import CheckContext, CheckOptions
from conda_torchcheck.findings import Severity
from conda_torchcheck.inventory import load_environment

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the fake envs below use a POSIX venv layout")


@pytest.fixture(scope="session")
def real_venv(tmp_path_factory) -> Path:
    """A real venv (no pip: fast) whose interpreter is this Python."""
    prefix = tmp_path_factory.mktemp("import-test") / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(prefix)
    return prefix


def site_packages(prefix: Path) -> Path:
    return next(prefix.glob("lib/python3*/site-packages"))


@pytest.fixture
def fake_torch(real_venv):
    """Install ``torch/__init__.py`` with the given body into the venv; removed afterwards."""
    pkg = site_packages(real_venv) / "torch"

    def install(body: str, *, where: Path | None = None) -> Path:
        target = (where or site_packages(real_venv)) / "torch"
        target.mkdir(parents=True, exist_ok=True)
        (target / "__init__.py").write_text(textwrap.dedent(body), encoding="utf-8")
        return target

    yield install
    if pkg.exists():
        for p in sorted(pkg.rglob("*"), reverse=True):
            p.unlink() if p.is_file() else p.rmdir()
        pkg.rmdir()


def context(prefix: Path, *, run: bool = True, timeout: float = 30.0, env: dict | None = None) -> CheckContext:
    environment, host = load_environment(prefix, host_overrides=env or {})
    return CheckContext(environment, host, CheckOptions(import_test=run, import_timeout=timeout))


def run(ctx: CheckContext):
    return list(import_test.CHECK.run(ctx))


CPU_TORCH = """
    __version__ = "2.5.1+cpu"
    class version:
        cuda = None
        hip = None
    class cuda:
        @staticmethod
        def is_available():
            return False
"""


def test_success_reports_version_and_build(real_venv, fake_torch):
    fake_torch(CPU_TORCH)
    ctx = context(real_venv)
    findings = run(ctx)
    assert [(f.id, f.severity) for f in findings] == [("TC703", Severity.INFO)]
    title = findings[0].title.render("en")
    assert "2.5.1+cpu" in title and "CPU-only" in title
    result = ctx.import_test
    assert result["outcome"] == "ok" and result["version"] == "2.5.1+cpu"
    assert result["ran_at"].endswith("+00:00")
    assert result["environment"] == "activated"  # the venv is not the active env: activation is emulated
    assert result["command"][1] == "-c" and result["command"][2] == "<import test script>"
    # nothing was written into the env
    assert not list((site_packages(real_venv) / "torch").glob("__pycache__"))


def test_failure_is_explained(real_venv, fake_torch):
    fake_torch('raise ImportError("libcudnn.so.9: cannot open shared object file: No such file or directory")')
    findings = run(context(real_venv))
    [f] = findings
    assert f.id == "TC701" and f.severity is Severity.ERROR
    assert f.title.key == "TC701.title"  # recognised
    assert "libcudnn.so.9" in f.title.render("en")
    assert f.evidence["recognised"] == ["cannot-open-shared-object"]
    assert "nvidia-wheels-missing" in f.evidence["likely_causes"]
    assert "ImportError" in f.explanation.render("en")
    assert "导入测试" in f.explanation.render("zh_CN")
    assert any("libcudnn.so.9" in line for line in f.evidence["output"])


def test_unrecognised_failure_keeps_the_output(real_venv, fake_torch):
    fake_torch('raise RuntimeError("something nobody has seen")')
    [f] = run(context(real_venv))
    assert f.id == "TC701" and f.title.key == "TC701.unrecognised.title"
    assert "something nobody has seen" in f.title.render("en")


def test_crash_without_report_uses_stderr(real_venv, fake_torch):
    fake_torch(
        """
        import os, sys
        sys.stderr.write("OMP: Error #15: Initializing libiomp5.so, but found libiomp5.so already initialized.\\n")
        sys.stderr.write("OMP: Hint This means that multiple copies of the OpenMP runtime have been linked.\\n")
        sys.stderr.flush()
        os._exit(3)
        """
    )
    ctx = context(real_venv)
    [f] = run(ctx)
    assert ctx.import_test["outcome"] == "crashed" and ctx.import_test["returncode"] == 3
    assert f.id == "TC701" and f.evidence["recognised"] == ["omp-error-15"]
    assert "OMP: Error #15" in f.title.render("en")


def test_timeout_kills_the_interpreter(real_venv, fake_torch):
    fake_torch("import time\ntime.sleep(60)\n")
    ctx = context(real_venv, timeout=1.5)
    start = time.monotonic()
    [f] = run(ctx)
    assert time.monotonic() - start < 20
    assert f.id == "TC702" and f.severity is Severity.ERROR
    assert "1.5" in f.title.render("en")
    assert ctx.import_test["outcome"] == "timeout" and ctx.import_test["returncode"] is None


def test_cuda_build_without_cuda_explains_the_warning(real_venv, fake_torch):
    fake_torch(
        """
        import warnings
        __version__ = "2.5.1+cu124"
        class version:
            cuda = "12.4"
            hip = None
        class cuda:
            @staticmethod
            def is_available():
                warnings.warn("CUDA initialization: The NVIDIA driver on your system is too old (found version 11040).")
                return False
        """
    )
    findings = run(context(real_venv))
    assert [f.id for f in findings] == ["TC703", "TC704"]
    tc704 = findings[1]
    assert tc704.evidence["recognised"] == ["cuda-driver-too-old"]
    assert "11.4" in tc704.explanation.render("en")


def test_torch_imported_from_elsewhere(real_venv, fake_torch, tmp_path):
    """What files cannot show: code run at start-up that puts another folder first on sys.path.

    An ``import`` line of a .pth file, not a sitecustomize.py: Debian's python3 has its own sitecustomize in the
    standard library, which shadows one in site-packages."""
    fake_torch(CPU_TORCH)
    other = tmp_path / "elsewhere"
    fake_torch(CPU_TORCH, where=other)
    hook = site_packages(real_venv) / "zz_elsewhere_first.pth"
    hook.write_text(f"import sys; sys.path.insert(0, {str(other)!r})\n", encoding="utf-8")
    try:
        findings = run(context(real_venv))
    finally:
        hook.unlink()
    assert [f.id for f in findings] == ["TC703", "TC706"]
    assert str(other / "torch") in findings[1].title.render("en")
    assert str(other) in findings[1].evidence["sys_path"]


def test_never_runs_unless_asked(real_venv, fake_torch, monkeypatch):
    fake_torch(CPU_TORCH)

    def forbidden(*args, **kwargs):
        raise AssertionError("the import test must not start a process")

    monkeypatch.setattr(subprocess, "Popen", forbidden)
    ctx = context(real_venv, run=False)
    assert run(ctx) == []
    assert ctx.import_test is None


def test_runs_once_per_context(real_venv, fake_torch, monkeypatch):
    fake_torch(CPU_TORCH)
    calls = []
    real = import_test.run_import_test
    monkeypatch.setattr(import_test, "run_import_test", lambda *a: calls.append(1) or real(*a))
    ctx = context(real_venv)
    run(ctx)
    import_test.import_test_result(ctx)
    assert len(calls) == 1


def test_windows_env_cannot_run_here(make_env):
    b = make_env(os="windows", layout="conda")
    b.pip_torch("2.5.1+cpu")
    [f] = run(context(b.prefix))
    assert f.id == "TC705" and f.severity is Severity.WARNING
    assert "windows" in f.title.render("en")


def test_unstartable_interpreter(make_env):
    b = make_env(os="linux", layout="conda")  # bin/python3 is a header-only stub, not a program
    b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0000000_100")
    [f] = run(context(b.prefix))
    assert f.id == "TC705"
    assert "failed" in f.title.render("en")


def test_check_cli_reports_when_it_ran(real_venv, fake_torch, capsys):
    from conda_torchcheck.cli.main import main

    fake_torch(CPU_TORCH)
    assert main(["check", "-p", str(real_venv), "--import-test", "--json", "--only", "TC7"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["import_test"]["outcome"] == "ok" and doc["import_test"]["ran_at"]
    assert [f["id"] for f in doc["findings"]] == ["TC703"]
    assert main(["check", "-p", str(real_venv), "--import-test", "--format", "markdown", "--only", "TC7"]) == 0
    out = capsys.readouterr().out
    assert "| Import test | run at " in out
    assert main(["check", "-p", str(real_venv), "--format", "markdown", "--only", "TC7"]) == 0
    assert "| Import test | not run" in capsys.readouterr().out
    assert main(["check", "-p", str(real_venv), "--import-test", "--only", "TC7", "--lang", "zh_CN"]) == 0
    out = capsys.readouterr().out
    assert "导入测试运行于 " in out and "torch 2.5.1+cpu 导入成功" in out
