from __future__ import annotations

import pytest

from tests.plan import realenvs


@pytest.fixture(scope="session")
def real_base(tmp_path_factory):
    """(venv with the real torch 2.13.0+cpu, folder of real wheels to repair from); built once per session."""
    try:
        return realenvs.build_base(tmp_path_factory.mktemp("plan-real"))
    except realenvs.Unavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture
def real_env(real_base, tmp_path):
    venv, house = real_base
    return realenvs.clone(venv, tmp_path / "venv"), house
