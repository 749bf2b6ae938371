"""The plugin as conda sees it: hooks, their names and run_for sets, settings, and what importing it costs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.plugin.conftest import CONDA, SKIP_REASON

pytestmark = pytest.mark.skipif(not CONDA, reason=SKIP_REASON)


def test_conda_loads_the_plugin_and_its_hooks():
    from conda.base.context import context

    pm = context.plugin_manager
    assert "torchcheck" in pm.get_subcommands()
    assert "torch" in pm.get_health_checks()
    assert pm.get_health_checks()["torch"].fixer is not None  # conda >= 26.1 takes fixers
    post = {c.name: c for c in pm.get_hook_results("post_commands")}["conda-torchcheck-check"]
    # conda env create is `create` since 26.7 and `env_create` before; env update is `env_update`
    assert {"install", "create", "update", "remove", "env_create", "env_update"} <= post.run_for
    assert "conda-torchcheck-guard" in {s.name for s in pm.get_hook_results("post_solves")}
    assert "conda-torchcheck-record" in {a.name for a in pm.get_hook_results("post_transaction_actions")}
    assert "conda-torchcheck-snapshot" in {c.name for c in pm.get_hook_results("pre_commands")}


def test_run_for_sets_agree():
    from conda_torchcheck import plugin
    from conda_torchcheck.hooks import post_command

    assert plugin.RUN_FOR == post_command.RUN_FOR


def test_settings_defaults_condarc_names_and_environment_variables(monkeypatch):
    from conda.base.context import context, reset_context

    for name in ("AUTO", "STRICT", "ACTIVATION_HOOKS"):
        monkeypatch.delenv(f"CONDA_PLUGINS_TORCHCHECK_{name}", raising=False)
    reset_context()
    assert context.plugins.torchcheck_auto is True
    assert context.plugins.torchcheck_strict is False
    assert context.plugins.torchcheck_activation_hooks is False
    monkeypatch.setenv("CONDA_PLUGINS_TORCHCHECK_STRICT", "true")
    reset_context()
    assert context.plugins.torchcheck_strict is True
    from conda_torchcheck.hooks.settings import setting

    assert setting("torchcheck_strict") is True  # read through conda's context once conda is loaded


def test_condarc_plugins_section(tmp_path, monkeypatch):
    from conda.base.context import context, reset_context

    monkeypatch.delenv("CONDA_PLUGINS_TORCHCHECK_AUTO", raising=False)
    condarc = tmp_path / "condarc"
    condarc.write_text("plugins:\n  torchcheck_auto: false\n", encoding="utf-8")
    reset_context([condarc])
    try:
        assert context.plugins.torchcheck_auto is False
    finally:
        reset_context()


IMPORT_PROBE = r"""
import json, sys, time
import conda.plugins, conda.plugins.types, conda.base.context  # loaded by conda before it loads plugins
before = set(sys.modules)
t0 = time.perf_counter()
import conda_torchcheck.plugin
elapsed = time.perf_counter() - t0
print(json.dumps({"new": sorted(set(sys.modules) - before), "ms": elapsed * 1000}))
"""


def test_importing_the_plugin_loads_nothing_heavy():
    result = subprocess.run([sys.executable, "-c", IMPORT_PROBE], capture_output=True, text=True, check=True)
    new = set(json.loads(result.stdout)["new"])
    assert new <= {"conda_torchcheck", "conda_torchcheck.plugin"}, sorted(new)
    heavy = {"pefile", "ruamel", "ruamel.yaml", "elftools", "conda_torchcheck.checks", "conda_torchcheck.inventory"}
    assert not (new & heavy)
