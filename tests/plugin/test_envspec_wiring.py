"""plugin.py registers the environment.yml integration (``envspec/conda_integration.py``): the exporter behind
``conda export --format torchcheck`` and the pre-command on ``conda env create -f``. Its behaviour is tested
in tests/envspec; here only that conda reaches it through the plugin."""

from __future__ import annotations

import pytest

from tests.plugin.conftest import CONDA, SKIP_REASON
from tests.plugin.helpers import CHANNELS

pytestmark = [pytest.mark.skipif(not CONDA, reason=SKIP_REASON), pytest.mark.conda]

integration = pytest.importorskip(
    "conda_torchcheck.envspec.conda_integration", reason="the environment.yml integration is not on this branch"
)


def test_exporter_and_pre_command_are_registered():
    from conda.base.context import context

    pm = context.plugin_manager
    assert integration.FORMAT_NAME in {e.name for e in pm.get_environment_exporters()}
    assert integration.PRE_COMMAND_NAME in {c.name for c in pm.get_hook_results("pre_commands")}


@pytest.mark.slow
def test_conda_export_format_torchcheck(conda_cli, conda_home):
    prefix = conda_home / "exported"
    conda_cli("create", "-p", prefix, *CHANNELS, "-y", "pytorch=2.5.1")
    out, err, rc = conda_cli("export", "-p", prefix, "--format", integration.FORMAT_NAME)
    assert rc == 0 and "pytorch" in out


def test_a_broken_integration_does_not_break_conda(monkeypatch, capsys):
    from conda_torchcheck import plugin

    def broken():
        raise RuntimeError("bug in the integration")

    monkeypatch.setattr(integration, "environment_exporters", broken)
    assert list(plugin.conda_environment_exporters()) == []
    err = capsys.readouterr().err
    assert "the environment.yml integration is unavailable (RuntimeError: bug in the integration)" in err
