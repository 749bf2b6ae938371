from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def torch_linux_lib():
    from tests.realdata import extract

    root = extract("torch-2.13.0-linux-cpu", ("torch/lib/*", "torch/_C*.so"))
    return root / "torch" / "lib"
