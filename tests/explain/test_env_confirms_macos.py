"""Issue 12 item 4, macOS: every corpus cause with an env-side check is confirmed by that check on an env that
really has the problem (the real torch macOS wheels laid out as in tests/checks/test_mac_*.py, examined from
Linux), and not confirmed on its healthy twin. ``explain(paste, ctx)`` runs the checks itself (no findings=)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conda_torchcheck.explain import explain
from tests.binaries import machogen as gen
from tests.checks.tc_helpers import context
from tests.explain.confirming import assert_confirmed, assert_not_confirmed, paste, status_of
from tests.loader.macos_layouts import install_real_torch, install_sklearn_openmp, mac_env, system_root

pytestmark = pytest.mark.realdata


def arm64_torch(tmp: Path, layout: str = "venv"):
    b = mac_env(tmp, layout=layout)
    return b, install_real_torch(b)


# --- TC454: two OpenMP runtimes ----------------------------------------------------------------------------


@pytest.mark.parametrize("report", ["x024", "x025"])
def test_two_openmp_macos_is_confirmed_by_tc454_another_packages_runtime(tmp_path, report):
    b, _pkg = arm64_torch(tmp_path / "sick", layout="conda")
    b.conda_record(
        "intel-openmp", "2023.1.0", "h0000000_0",
        files={"lib/libiomp5.dylib": gen.image(install_name="@rpath/libiomp5.dylib")},
    )  # fmt: skip
    assert_confirmed(explain(paste(report), context(b)), "two-openmp-macos")
    twin, _ = arm64_torch(tmp_path / "twin", layout="conda")
    twin.conda_record(  # conda-forge's llvm-openmp: torch's own install name, one runtime
        "llvm-openmp", "19.1.4", "hdb05f8b_0",
        files={"lib/libomp.dylib": gen.image(install_name="@rpath/libomp.dylib")},
    )  # fmt: skip
    assert_not_confirmed(explain(paste(report), context(twin)), "two-openmp-macos")


def test_two_openmp_macos_with_sklearns_wheel_copy(tmp_path):
    b, _pkg = arm64_torch(tmp_path / "sick")
    install_sklearn_openmp(b)
    assert_confirmed(explain(paste("x024"), context(b)), "two-openmp-macos")


# --- TC450: libomp.dylib not found ---------------------------------------------------------------------------


@pytest.mark.parametrize("report", ["x044", "x045", "x046"])
def test_macos_libomp_not_bundled_is_confirmed_by_tc450_naming_libomp(tmp_path, report):
    b, pkg = arm64_torch(tmp_path / "sick")
    (pkg / "lib" / "libomp.dylib").unlink()
    assert_confirmed(explain(paste(report), context(b)), "macos-libomp-not-bundled")
    twin, _ = arm64_torch(tmp_path / "twin")
    assert_not_confirmed(explain(paste(report), context(twin)), "macos-libomp-not-bundled")
    other, other_pkg = arm64_torch(tmp_path / "other")  # TC450 for another library is not this cause
    (other_pkg / "lib" / "libc10.dylib").unlink()
    assert_not_confirmed(explain(paste(report), context(other)), "macos-libomp-not-bundled")


# --- TC451: wrong architecture -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("report", "python_arch", "torch_arch"), [("x066", "x86_64", "arm64"), ("x094", "arm64", "x86_64")]
)
def test_dyld_arch_mismatch_is_confirmed_by_tc451(tmp_path, report, python_arch, torch_arch):
    b = mac_env(tmp_path / "sick", python_arch=python_arch)
    install_real_torch(b, torch_arch)
    assert_confirmed(explain(paste(report), context(b)), "dyld-arch-mismatch")
    twin = mac_env(tmp_path / "twin", python_arch=torch_arch)
    install_real_torch(twin, torch_arch)
    assert_not_confirmed(explain(paste(report), context(twin)), "dyld-arch-mismatch")


# --- TC453: a binary built for a newer macOS -------------------------------------------------------------------


def test_macos_too_old_for_binary_is_confirmed_by_tc453(tmp_path):
    b, _pkg = arm64_torch(tmp_path / "env")
    old = context(b, system_root=system_root(tmp_path / "old", "10.15.7"))
    assert_confirmed(explain(paste("x063"), old), "macos-too-old-for-binary")
    new = context(b, system_root=system_root(tmp_path / "new", "14.5"))
    assert_not_confirmed(explain(paste("x063"), new), "macos-too-old-for-binary")


def torch_230_layout(tmp: Path):
    """torch 2.3.0's arm64 wheel as pytorch/pytorch#122705 describes it: torch/lib/libomp.dylib (@rpath, the real
    2.5.1 file here) and delocate's second copy in torch/.dylibs (install name /DLC/torch/.dylibs/libomp.dylib)."""
    b, pkg = arm64_torch(tmp)
    gen_copy = gen.image(install_name="/DLC/torch/.dylibs/libomp.dylib")
    (pkg / ".dylibs").mkdir()
    (pkg / ".dylibs" / "libomp.dylib").write_bytes(gen_copy)
    return b, pkg


def test_wheel_packaging_bug_is_tc454_own_two_runtimes_inside_torch_not_another_package(tmp_path):
    b, pkg = torch_230_layout(tmp_path / "sick")
    result = explain(paste("x056"), context(b))
    assert_confirmed(result, "wheel-packaging-bug")
    assert status_of(result, "two-openmp-macos") == "not-found"  # the corpus's false claim for x056
    [f] = [f for f in result.findings if f.id == "TC454"]
    assert f.title.key == "TC454.own.title" and f.evidence["second_copy"] == "torch-wheel"
    assert f.evidence["others"][0]["path"] == str(pkg / ".dylibs" / "libomp.dylib")
    twin, _ = arm64_torch(tmp_path / "twin")  # torch 2.5.1: one libomp.dylib
    assert_not_confirmed(explain(paste("x056"), context(twin)), "wheel-packaging-bug")


def test_torch_wheel_copy_and_another_packages_runtime_are_two_findings(tmp_path):
    b, _pkg = torch_230_layout(tmp_path / "env")
    install_sklearn_openmp(b)
    result = explain(paste("x056"), context(b))
    assert sorted(f.evidence["second_copy"] for f in result.findings if f.id == "TC454") == [
        "other-package",
        "torch-wheel",
    ]
    assert status_of(result, "wheel-packaging-bug") == "confirmed"
    assert status_of(result, "two-openmp-macos") == "confirmed"


# --- TC455 / TC452: why MPS is not there -----------------------------------------------------------------------


def test_macos_too_old_for_mps_is_confirmed_by_tc455_old(tmp_path):
    """x073: torch 2.5.1 on macOS 12.7.6; its MPS needs 13.0 although the message says 12.3+."""
    b, _pkg = arm64_torch(tmp_path / "env")
    old = context(b, system_root=system_root(tmp_path / "old", "12.7.6"))
    assert_confirmed(explain(paste("x073"), old), "macos-too-old-for-mps")
    new = context(b, system_root=system_root(tmp_path / "new", "13.6"))
    assert_not_confirmed(explain(paste("x073"), new), "macos-too-old-for-mps")


def test_torch_too_old_for_mps_is_confirmed_by_tc455_no_backend(make_env):
    """x047: "Expected one of cpu, cuda, ... device type at start of device string: mps" from a torch < 1.12."""
    b = make_env(os="darwin", arch="arm64", layout="venv")
    b.pip_torch("1.11.0")
    assert_confirmed(explain(paste("x047"), context(b)), "torch-too-old-for-mps")
    twin = make_env(os="darwin", arch="arm64", layout="venv")
    twin.pip_torch("2.5.1")
    assert_not_confirmed(explain(paste("x047"), context(twin)), "torch-too-old-for-mps")


def rosetta_root(tmp: Path) -> Path:
    root = system_root(tmp, "14.5")
    runtime = root / "Library/Apple/usr/libexec/oah/libRosettaRuntime"  # only an Apple silicon Mac has it
    runtime.parent.mkdir(parents=True)
    runtime.write_bytes(b"")
    return root


def test_python_under_rosetta_is_confirmed_by_tc452_rosetta(tmp_path):
    """x081: an Intel conda (x86_64 Python, the real torch 2.2.2 x86_64 wheel) on an M-series Mac: no MPS."""
    root = rosetta_root(tmp_path / "root")
    b = mac_env(tmp_path / "sick", python_arch="x86_64")
    install_real_torch(b, "x86_64")
    result = explain(paste("x081"), context(b, system_root=root))
    assert_confirmed(result, "python-under-rosetta")
    twin = mac_env(tmp_path / "twin", python_arch="arm64")  # the native arm64 conda
    install_real_torch(twin, "arm64")
    assert_not_confirmed(explain(paste("x081"), context(twin, system_root=root)), "python-under-rosetta")
    intel = context(b, system_root=system_root(tmp_path / "intel", "14.5"))  # no Rosetta: an Intel Mac
    assert_not_confirmed(explain(paste("x081"), intel), "python-under-rosetta")


def test_no_cuda_on_macos_is_decided_by_the_env_being_macos(tmp_path, make_env):
    """x084: no finding can say it (every Mac lacks CUDA; a warning on each would be noise): the cause stays
    unverifiable on a macOS env, is never displaced by the CPU-build cause there, and is ruled out elsewhere."""
    b, _pkg = arm64_torch(tmp_path / "mac")
    result = explain(paste("x084"), context(b))
    assert status_of(result, "no-cuda-on-macos") == "unverifiable"
    assert status_of(result, "cpu-build-installed") != "confirmed"
    linux = make_env(os="linux", layout="venv")
    linux.pip_torch("2.5.1")
    assert status_of(explain(paste("x084"), context(linux)), "no-cuda-on-macos") == "ruled-out"


def test_x079_torchs_bundled_libiomp5_beside_condas_libomp(tmp_path):
    """x079: torch bundling libiomp5.dylib in a conda env whose llvm-openmp brings libomp.dylib. The real torch
    2.2.2 x86_64 wheel loads functorch/.dylibs/libiomp5.dylib and also ships torch/lib/libiomp5.dylib: TC454 for
    conda's runtime (two-openmp-macos) and TC454.own for torch's second copy. (x079's truth also names
    wheel-packaging-bug, which omp-error-15 offers only for libomp.dylib twice, so it is not ranked here.)"""
    b = mac_env(tmp_path / "env", layout="conda", python_arch="x86_64")
    install_real_torch(b, "x86_64")
    b.conda_record(
        "llvm-openmp", "14.0.6", "h0dcd299_0",
        files={"lib/libomp.dylib": gen.image("x86_64", install_name="@rpath/libomp.dylib")},
    )  # fmt: skip
    result = explain(paste("x079"), context(b))
    assert_confirmed(result, "two-openmp-macos")
    copies = sorted(f.evidence["second_copy"] for f in result.findings if f.id == "TC454")
    assert copies == ["other-package", "torch-wheel"]
