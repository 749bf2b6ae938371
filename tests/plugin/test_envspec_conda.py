"""environment.yml integration against a real conda (skipped where `import conda` fails).

- the exporter object conda validates, and an export through conda's own ``Environment.from_prefix``;
- the pre-command hook, end to end: ``conda env create -f FILE --dry-run --offline`` warns before the solve,
  and refuses with ``torchcheck_strict``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import entry_points

import pytest

from tests.conda_skip import CONDA_SKIP_REASON

conda = pytest.importorskip("conda", reason=CONDA_SKIP_REASON)

pytestmark = pytest.mark.conda

FROZEN = "channels:\n  - pytorch\n  - nvidia\ndependencies:\n  - python=3.12\n  - pytorch=2.6\n  - pytorch-cuda=12.4\n"


def test_exporter_is_accepted_by_conda():
    from conda.plugins.types import CondaEnvironmentExporter

    from conda_torchcheck.envspec.conda_integration import environment_exporters, exporter

    exp = exporter()
    assert isinstance(exp, CondaEnvironmentExporter)
    assert exp.name == "torchcheck" and exp.aliases == ("torchcheck-yaml",)
    assert [e.name for e in environment_exporters()] == ["torchcheck"]


def test_pre_command_object():
    from conda.plugins.types import CondaPreCommand

    from conda_torchcheck.envspec.conda_integration import pre_commands

    [hook] = list(pre_commands())
    assert isinstance(hook, CondaPreCommand)
    assert {"create", "env_create"} <= set(hook.run_for)


def test_export_through_condas_environment_model(make_env):
    from conda.models.environment import Environment

    from conda_torchcheck.envspec.conda_integration import export
    from conda_torchcheck.envspec.parse import parse_text

    b = make_env(name="exp", python="3.11.9")
    b.conda_pytorch("2.5.1", "cuda126_generic_py311_h1234567_303", cuda="12.6", requested_spec="pytorch")
    b.conda_record("cuda-version", "12.6", "h7480c83_3", noarch=True)
    env = Environment.from_prefix(str(b.prefix), "exp", "linux-64")
    text = export(env)
    deps = [d.text for d in parse_text(text).deps]
    assert "conda-forge::pytorch=2.5.1=cuda126_generic_py311_h1234567_303" in deps
    assert any(d.startswith("cuda-version=12.6") for d in deps)


def _plugin_registered() -> bool:
    return any(e.value == "conda_torchcheck.plugin" for e in entry_points(group="conda"))


@pytest.fixture
def conda_run(tmp_path):
    if not _plugin_registered():
        pytest.skip("conda-torchcheck's conda entry point is not installed in this environment")
    env = dict(os.environ)
    env.update(
        CONDA_SOLVER="classic",
        CONDA_PKGS_DIRS=str(tmp_path / "pkgs"),
        CONDA_ENVS_DIRS=str(tmp_path / "envs"),
        CONDA_OVERRIDE_CUDA="",
        CONDA_REPORT_ERRORS="false",
    )
    env.pop("CONDA_PLUGINS_TORCHCHECK_STRICT", None)

    def run(*args: str, **extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "conda", *args],
            cwd=tmp_path,
            env={**env, **extra},
            capture_output=True,
            text=True,
            timeout=300,
        )

    return run


def test_env_create_warns_before_the_solve(conda_run, tmp_path):
    (tmp_path / "environment.yml").write_text(FROZEN)
    proc = conda_run("env", "create", "-f", "environment.yml", "-n", "tcx", "--dry-run", "--offline")
    assert "TC605" in proc.stderr
    assert "TorchcheckStrictError" not in proc.stderr + proc.stdout


def test_env_create_strict_refuses(conda_run, tmp_path):
    (tmp_path / "environment.yml").write_text(FROZEN)
    proc = conda_run(
        "env",
        "create",
        "-f",
        "environment.yml",
        "-n",
        "tcx",
        "--dry-run",
        "--offline",
        CONDA_PLUGINS_TORCHCHECK_STRICT="true",
    )
    assert proc.returncode != 0
    assert "TorchcheckStrictError" in proc.stderr + proc.stdout
    assert "Solving environment" not in proc.stdout  # refused before the solve
