"""TC504: a PyPI/download.pytorch.org aarch64 CUDA torch on an NVIDIA Jetson (machine read under a root)."""

from __future__ import annotations

import pytest

from conda_torchcheck.checks.linux_jetson import read_jetson
from tests.checks.tc_helpers import run_check


def _root(tmp_path, release: str | None = "R36", model: str | None = "NVIDIA Jetson AGX Orin Developer Kit"):
    root = tmp_path / "root"
    if release:
        (root / "etc").mkdir(parents=True)
        (root / "etc" / "nv_tegra_release").write_text(f"# {release} (release), REVISION: 4.0, GCID: 1\n")
    if model:
        (root / "proc" / "device-tree").mkdir(parents=True)
        (root / "proc" / "device-tree" / "model").write_bytes(model.encode() + b"\0")
    root.mkdir(exist_ok=True)
    return root


def _env(make_env, version="2.7.0+cu126", cuda="12.6", arch="aarch64"):
    b = make_env(layout="venv", arch=arch)
    b.pip_torch(version, cuda=cuda)
    return b


def test_sbsa_wheel_on_orin(make_env, tmp_path):
    [f] = run_check(_env(make_env), "linux_jetson", system_root=_root(tmp_path))
    assert f.id == "TC504" and f.severity.value == "warning"
    assert f.evidence["machine"] == "NVIDIA Jetson AGX Orin Developer Kit" and f.evidence["l4t"] == "36.4.0"


def test_model_file_alone_is_enough(make_env, tmp_path):
    [f] = run_check(_env(make_env), "linux_jetson", system_root=_root(tmp_path, release=None))
    assert f.evidence["read_from"] == "/proc/device-tree/model" and f.evidence["l4t"] is None


@pytest.mark.parametrize(
    ("version", "cuda", "arch", "release", "model"),
    [
        ("2.5.0a0+872d972e41.nv24.08", "12.6", "aarch64", "R36", "NVIDIA Jetson AGX Orin"),  # JetPack wheel
        ("2.7.0+cpu", None, "aarch64", "R36", "NVIDIA Jetson AGX Orin"),  # no CUDA
        ("2.9.0+cu130", "13.0", "aarch64", "R38", "NVIDIA Jetson AGX Thor"),  # Thor is SBSA
        ("2.7.0+cu126", "12.6", "aarch64", None, "Raspberry Pi 5 Model B Rev 1.0"),  # not a Jetson
        ("2.7.0+cu126", "12.6", "x86_64", "R36", "NVIDIA Jetson AGX Orin"),  # not an aarch64 env
    ],
)
def test_not_reported(make_env, tmp_path, version, cuda, arch, release, model):
    b = _env(make_env, version, cuda, arch)
    assert run_check(b, "linux_jetson", system_root=_root(tmp_path, release, model)) == []


def test_foreign_machine_without_a_root_is_not_read(make_env):
    assert run_check(_env(make_env), "linux_jetson") == []


def test_read_jetson_without_files(tmp_path):
    assert read_jetson(tmp_path) is None
