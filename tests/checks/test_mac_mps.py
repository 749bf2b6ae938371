"""TC455: MPS available (info) for arm64 torch on a macOS its MPS supports (12.3+, 13.0+ from torch 2.5); a
warning on an older macOS or for a torch that predates MPS; nothing for x86_64."""

from __future__ import annotations

import pytest

from conda_torchcheck.findings import Severity
from tests.checks.tc_helpers import run_check
from tests.loader.macos_layouts import install_real_torch, mac_env, system_root

pytestmark = pytest.mark.realdata


@pytest.mark.parametrize(
    ("version", "variant"),
    [(None, ""), ("14.5", ""), ("13.0", ""), ("12.7.6", "old"), ("12.3", "old"), ("12.2.1", "old")],
)
def test_mps_by_host_macos(tmp_path, version, variant):
    b = mac_env(tmp_path / "env")
    install_real_torch(b)
    root = system_root(tmp_path / "root", version) if version else None
    [f] = run_check(b, "mac_mps", system_root=root)
    assert f.id == "TC455" and f.severity is (Severity.WARNING if variant else Severity.INFO)
    assert f.title.key == ("TC455.old.title" if variant else "TC455.title")
    assert f.evidence["host_macos"] == version
    assert f.evidence["needs_macos"] == "13.0"  # torch 2.5.1 (pytorch/pytorch#139425)


def test_no_mps_for_x86_64_torch(tmp_path):
    b = mac_env(tmp_path / "env", python_arch="x86_64")
    install_real_torch(b, "x86_64")
    assert run_check(b, "mac_mps") == []


def test_torch_older_than_mps_is_a_warning(make_env):
    b = make_env(os="darwin", arch="arm64", layout="venv")
    b.pip_torch("1.11.0")
    [f] = run_check(b, "mac_mps")
    assert f.title.key == "TC455.no_backend.title" and f.severity is Severity.WARNING
    assert "1.12" in f.title.render() and "device type at start of device string: mps" in f.explanation.render()
    b = make_env(os="linux", layout="venv")
    b.pip_torch("1.11.0")
    assert run_check(b, "mac_mps") == []
