from __future__ import annotations

import pytest

from tests.envbuilder import EnvBuilder
from tests.wine import wine_prefix  # noqa: F401 - session fixture


@pytest.fixture
def make_env(tmp_path):
    """Factory: ``make_env(os="windows", layout="conda", name="env")`` → EnvBuilder."""
    counter = iter(range(1000))

    def factory(*, os: str = "linux", layout: str = "conda", name: str | None = None, **kwargs) -> EnvBuilder:
        return EnvBuilder(tmp_path / (name or f"env{next(counter)}"), os=os, layout=layout, **kwargs)

    return factory


@pytest.fixture(autouse=True)
def _isolate_environment(monkeypatch, tmp_path):
    """Tests never see the developer's CONDA_PREFIX, PYTHONPATH, user site or locale."""
    for var in (
        "CONDA_PREFIX",
        "CONDA_DEFAULT_ENV",
        "CONDA_SHLVL",
        "VIRTUAL_ENV",
        "PYTHONPATH",
        "PYTHONUSERBASE",
        "LD_LIBRARY_PATH",
        "LC_ALL",
        "LC_MESSAGES",
        "CONDA_TORCHCHECK_LANG",
        "KMP_DUPLICATE_LIB_OK",
        # where uv's and pyenv's Pythons are found (--all-envs): the developer's own are not the test's
        "PYENV_ROOT",
        "UV_PYTHON_INSTALL_DIR",
        "XDG_DATA_HOME",
        "XDG_CACHE_HOME",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("NO_COLOR", "1")
    # results are computed, not read from a cache filled by an earlier test (tests of the caches turn them on)
    monkeypatch.setenv("CONDA_TORCHCHECK_NO_CACHE", "1")
    from conda_torchcheck.inventory import fs
    from conda_torchcheck.messages import set_language

    fs.clear_cache()
    set_language(None)
    yield
    fs.clear_cache()
    set_language(None)
