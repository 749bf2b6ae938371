from __future__ import annotations

import pytest

from conda_torchcheck.checks import cuda_driver


@pytest.fixture
def root(tmp_path, monkeypatch):
    """A fake file-system root the NVIDIA driver is read from (the machine running the tests has no driver)."""
    base = tmp_path / "root"
    base.mkdir()
    monkeypatch.setattr(cuda_driver, "ROOT", base)
    return base
