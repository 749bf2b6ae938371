"""CI must run the plugin tests against the real conda from ../shared/wheels, never skip them silently."""

from __future__ import annotations

import os
from pathlib import Path

from tests.plugin.conftest import CONDA

SHARED_WHEELS = Path(__file__).resolve().parents[3] / "shared" / "wheels"


def test_ci_with_shared_wheels_has_conda():
    # .ci/run installs conda from ../shared/wheels when that folder exists; if the install step broke, every
    # plugin test would skip and CI would still look green
    required = os.environ.get("CI", "").lower() in ("1", "true", "yes") and any(SHARED_WHEELS.glob("conda-*.whl"))
    assert CONDA or not required, f"CI has {SHARED_WHEELS} but conda is not importable: .ci/run did not install it"
