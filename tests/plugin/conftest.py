"""conda's own pytest fixtures (``conda_cli``, ``tmp_env``, the context-aware ``monkeypatch`` ...) for the
plugin tests, only where conda imports. Imported here rather than through ``pytest_plugins``, which pytest
refuses in a conftest below the root."""

from __future__ import annotations

import importlib.util

import pytest

from tests.conda_skip import CONDA_SKIP_REASON

CONDA = importlib.util.find_spec("conda") is not None
SKIP_REASON = CONDA_SKIP_REASON

if CONDA:
    from conda.testing.fixtures import *  # noqa: F403 - conda's fixtures, including autouse ones

    from tests.plugin.channel import build_channels

    @pytest.fixture(scope="session")
    def fake_channels(tmp_path_factory):
        """Local file channels ``conda-forge`` and ``pytorch`` with small fake packages (built once)."""
        return build_channels(tmp_path_factory.mktemp("channels"))

    @pytest.fixture
    def conda_home(fake_channels, tmp_path, monkeypatch):
        """conda configured for the tests: the fake channels by name, private package cache and envs dir,
        classic solver, no network, no cuda detection subprocess. Returns the envs dir."""
        from conda.base.context import reset_context

        from conda_torchcheck.hooks import post_solve, transaction

        envs = tmp_path / "envs"
        envs.mkdir()
        settings = {
            "CONDA_CHANNEL_ALIAS": fake_channels.as_uri(),
            "CONDA_PKGS_DIRS": str(tmp_path / "pkgs"),
            "CONDA_ENVS_DIRS": str(envs),
            "CONDA_SOLVER": "classic",
            "CONDA_OVERRIDE_CUDA": "",
            "CONDA_REGISTER_ENVS": "false",
            "CONDA_NOTIFY_OUTDATED_CONDA": "false",
            "CONDA_ADD_PIP_AS_PYTHON_DEPENDENCY": "false",
            "CONDA_PLUGINS_TORCHCHECK_STRICT": "false",
            "CONDA_PLUGINS_TORCHCHECK_AUTO": "true",
            "CONDA_PLUGINS_TORCHCHECK_ACTIVATION_HOOKS": "false",
        }
        for key, value in settings.items():
            monkeypatch.setenv(key, value)
        reset_context()
        # conda caches parsed match specs with their Channel objects, bound to the channel_alias of the time
        # they were parsed, and reset_context does not clear that cache: a spec like `pytorch::pytorch` parsed
        # by an earlier test would point at anaconda.org instead of the local channels
        from conda.models import match_spec

        match_spec._PARSE_CACHE.clear()
        match_spec.MatchSpec._MATCHER_CACHE.clear()
        monkeypatch.setattr(transaction, "LOG", transaction.TransactionLog())
        monkeypatch.setattr(post_solve, "_REPORTED", set())
        return envs
