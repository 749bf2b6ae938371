"""TC452: an x86_64 Python on macOS has no torch wheels after 2.2.2."""

from __future__ import annotations

from conda_torchcheck.findings import Severity
from tests.checks.tc_helpers import PY_DEP, run_check


def test_pip_torch_222_on_x86_64_is_info(make_env):
    b = make_env(os="darwin", arch="x86_64", layout="venv")
    b.pip_torch("2.2.2")
    [f] = run_check(b, "mac_x86")
    assert f.id == "TC452" and f.severity is Severity.INFO
    assert "2.2.2" in f.title.render() and "No matching distribution found" in f.explanation.render()
    assert "upgrades stop there" in f.explanation.render()


def test_a_package_needing_a_newer_torch_is_a_warning(make_env):
    b = make_env(os="darwin", arch="x86_64", layout="venv")
    b.pip_torch("2.2.2")
    b.dist("torchvision", "0.20.1", requires=["torch==2.5.1"])
    [f] = run_check(b, "mac_x86")
    assert f.severity is Severity.WARNING
    assert f.evidence["required_by"] == "torchvision 0.20.1" and f.evidence["specifier"] == "==2.5.1"
    assert "torch>=2.5.1" in f.explanation.render() and "torchvision 0.20.1" in f.explanation.render("zh_CN")
    assert [x.summary.key for x in f.fixes] == ["TC452.fix.arm64_env", "TC452.fix.conda_forge", "TC452.fix.pin"]


def test_not_for_conda_forge_pytorch_nor_arm64(make_env):
    b = make_env(os="darwin", arch="x86_64")
    b.conda_pytorch("2.5.1", "cpu_generic_py311_h0000000_0", depends=PY_DEP)
    assert run_check(b, "mac_x86") == []
    b = make_env(os="darwin", arch="arm64", layout="venv")
    b.pip_torch("2.2.2")
    assert run_check(b, "mac_x86") == []


def test_x86_64_python_on_apple_silicon_is_rosetta(make_env, tmp_path):
    from tests.loader.macos_layouts import system_root

    root = system_root(tmp_path / "root", "14.5")
    b = make_env(os="darwin", arch="x86_64", layout="venv")
    b.pip_torch("2.2.2")
    assert [f.title.key for f in run_check(b, "mac_x86", system_root=root)] == ["TC452.title"]  # an Intel Mac?
    runtime = root / "Library/Apple/usr/libexec/oah/libRosettaRuntime"
    runtime.parent.mkdir(parents=True)
    runtime.write_bytes(b"")
    f, stuck = run_check(b, "mac_x86", system_root=root)
    assert f.title.key == "TC452.rosetta.title" and f.severity is Severity.WARNING
    assert f.evidence["host_from"] == "system-root: Library/Apple/usr/libexec/oah/libRosettaRuntime"
    assert "torch.backends.mps.is_available() is False" in f.explanation.render()
    assert stuck.severity is Severity.INFO
    arm = make_env(os="darwin", arch="arm64", layout="venv")
    arm.pip_torch("2.5.1")
    assert run_check(arm, "mac_x86", system_root=root) == []


def test_no_torch_yet_on_x86_64_is_a_warning(make_env):
    """`pip install torch>2.2.2` here finds no distribution (x017, x019, x067)."""
    b = make_env(os="darwin", arch="x86_64", layout="venv")
    [f] = run_check(b, "mac_x86")
    assert f.severity is Severity.WARNING and "is not installed in this env yet" in f.explanation.render()
    assert run_check(make_env(os="darwin", arch="arm64", layout="venv"), "mac_x86") == []
