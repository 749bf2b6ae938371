"""TC454: torch's bundled libomp.dylib with scikit-learn's wheel copy (different install names: two runtimes)
is reported; conda-forge's llvm-openmp libomp.dylib (the same install name @rpath/libomp.dylib: dyld reuses one)
is not; torch's own spare copies are not."""

from __future__ import annotations

import pytest

from conda_torchcheck.findings import Severity
from tests.binaries import machogen as gen
from tests.checks.tc_helpers import run_check
from tests.loader.macos_layouts import install_real_torch, install_sklearn_openmp, mac_env

pytestmark = pytest.mark.realdata


def test_sklearn_wheel_libomp_beside_torchs(tmp_path):
    b = mac_env(tmp_path / "env", layout="venv")
    pkg = install_real_torch(b)
    sk = install_sklearn_openmp(b)
    [f] = run_check(b, "mac_openmp")
    assert f.id == "TC454" and f.severity is Severity.WARNING
    assert f.evidence["torch_runtime"] == str(pkg / "lib" / "libomp.dylib")
    assert f.evidence["torch_install_name"] == "@rpath/libomp.dylib"
    [other] = f.evidence["others"]
    assert other == {
        "path": str(sk),
        "install_name": "/DLC/sklearn/.dylibs/libomp.dylib",
        "from": "scikit-learn (pip wheel)",
    }
    text = f.explanation.render()
    assert "OMP: Error #15" in text and "/DLC/sklearn/.dylibs/libomp.dylib" in text
    assert "来自 scikit-learn" in f.explanation.render("zh_CN")


def test_conda_llvm_openmp_with_the_same_install_name_is_one_runtime(tmp_path):
    b = mac_env(tmp_path / "env", layout="conda")
    install_real_torch(b)
    b.conda_record(
        "llvm-openmp", "19.1.4", "hdb05f8b_0", files={"lib/libomp.dylib": gen.image(install_name="@rpath/libomp.dylib")}
    )
    assert run_check(b, "mac_openmp") == []


def test_an_intel_runtime_from_conda_is_another_runtime(tmp_path):
    b = mac_env(tmp_path / "env", layout="conda")
    install_real_torch(b)
    b.conda_record(
        "intel-openmp",
        "2023.1.0",
        "h0000000_0",
        files={"lib/libiomp5.dylib": gen.image(install_name="@rpath/libiomp5.dylib")},
    )
    [f] = run_check(b, "mac_openmp")
    assert f.evidence["others"][0]["install_name"] == "@rpath/libiomp5.dylib"
