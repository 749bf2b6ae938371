"""TC455 (info only): MPS available for arm64 torch on macOS 12.3+, not on older macOS, never for x86_64."""

from __future__ import annotations

import pytest

from conda_torchcheck.findings import Severity
from tests.checks.tc_helpers import run_check
from tests.loader.macos_layouts import install_real_torch, mac_env, system_root

pytestmark = pytest.mark.realdata


@pytest.mark.parametrize(("version", "variant"), [(None, ""), ("14.5", ""), ("12.3", ""), ("12.2.1", "old")])
def test_mps_by_host_macos(tmp_path, version, variant):
    b = mac_env(tmp_path / "env")
    install_real_torch(b)
    root = system_root(tmp_path / "root", version) if version else None
    [f] = run_check(b, "mac_mps", system_root=root)
    assert f.id == "TC455" and f.severity is Severity.INFO
    assert f.title.key == ("TC455.old.title" if variant else "TC455.title")
    assert f.evidence["host_macos"] == version


def test_no_mps_for_x86_64_torch(tmp_path):
    b = mac_env(tmp_path / "env", python_arch="x86_64")
    install_real_torch(b, "x86_64")
    assert run_check(b, "mac_mps") == []
