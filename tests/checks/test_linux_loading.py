"""TC401 / TC402 / TC406 / TC903 on minitorch (gcc-built, torch-shaped) envs; the real wheel is covered in
tests/loader/test_linux_torch.py and test_linux_oracle.py."""

from __future__ import annotations

import pytest

from tests.loader.linux_layouts import FIX, context, minitorch_env, run_ids


@pytest.fixture
def mini(make_env):
    builder = make_env(layout="venv")
    pkg = minitorch_env(builder)
    return builder, pkg


def test_healthy_minitorch_has_no_loading_findings(mini):
    builder, _pkg = mini
    assert run_ids(context(builder.prefix), "TC401", "TC402", "TC406", "TC903") == []


def test_tc401_torch_library_missing(mini):
    builder, pkg = mini
    (pkg / "lib" / "libtorch_cpu.so").unlink()
    [f] = run_ids(context(builder.prefix), "TC401")
    assert f.severity.value == "error"
    assert f.evidence["library"] == "libtorch_cpu.so"
    assert [p.rsplit("/", 1)[-1] for p in f.evidence["chain"]][-2:] == ["libtorch_python.so", "libtorch_cpu.so"]
    assert f.evidence["searched"][0] == f"runpath {pkg / 'lib'} (DT_RUNPATH of libtorch_python.so)"
    assert f.fixes[0].kind == "pip" and "--force-reinstall --no-deps" in f.fixes[0].commands[0]
    assert "whl/cu126" in f.fixes[0].commands[0]


def test_tc401_nvidia_library_missing_points_at_the_pinned_wheel(make_env):
    builder = make_env(layout="venv")
    minitorch_env(builder, nccl=None)
    [f] = run_ids(context(builder.prefix), "TC401")
    assert f.evidence["library"] == "libnccl.so.2"
    assert any('pip install "nvidia-nccl-cu12==2.21.5"' in c for fix in f.fixes for c in fix.commands)


def test_tc401_global_deps_missing_fails_before_c(mini):
    builder, pkg = mini
    (pkg / "lib" / "libtorch_global_deps.so").unlink()
    found = run_ids(context(builder.prefix), "TC401")
    assert [f.evidence["library"] for f in found][0].endswith("libtorch_global_deps.so")
    assert found[0].evidence["reported_first"] is True


def test_tc401_foreign_variant_is_a_warning(make_env):
    builder = make_env(layout="venv")
    minitorch_env(builder, mkl=None)
    from conda_torchcheck.checks import run_checks
    from conda_torchcheck.checks.context import CheckContext
    from conda_torchcheck.inventory import load_environment

    env, host = load_environment(builder.prefix, use_live_host=False)
    [f] = [f for f in run_checks(CheckContext(env, host), only=["TC401"])]
    assert f.severity.value == "warning" and f.evidence["library"] == "libmkl_rt.so.2"
    assert "not examined" in f.explanation.render("en")


def test_tc402_version_not_met_by_the_winning_copy(mini):
    builder, pkg = mini
    # torch_cpu -> libmkl_rt.so.2 is unversioned; use the libv fixture for a versioned need instead
    from conda_torchcheck.loader import linux
    from tests.loader.linux_layouts import file_ctx

    load = linux.load_file(file_ctx(), FIX / "version" / "libapp.so")
    assert load.steps[0].version_failures


def test_tc402_gomp_on_ld_library_path(make_env):
    builder = make_env(layout="venv")
    minitorch_env(builder)
    # make the graph load a libgomp with an unmet GOMP_4.0 need: preload torch's real need shape via libapp
    ctx = context(builder.prefix, LD_LIBRARY_PATH=str(FIX / "gomp_old"))
    assert run_ids(ctx, "TC402") == []  # minitorch needs no libgomp: LD_LIBRARY_PATH alone is not a problem


def test_tc406_substituted_library_is_info(make_env, tmp_path):
    builder = make_env(layout="venv")
    pkg = minitorch_env(builder)
    (pkg / "lib" / "libmkl_rt.so.2").unlink()
    other = tmp_path / "sys"
    other.mkdir()
    (other / "libmkl_rt.so.2").write_bytes((FIX / "minitorch" / "mkl-2024.0" / "libmkl_rt.so.2").read_bytes())
    [f] = run_ids(context(builder.prefix, LD_LIBRARY_PATH=str(other)), "TC406", "TC401")
    assert f.id == "TC406" and f.severity.value == "info"
    assert f.evidence["loaded_copy"] == str(other / "libmkl_rt.so.2")
    assert f.evidence["expected"] == str(pkg / "lib" / "libmkl_rt.so.2")


def test_tc903_truncated_torch_library(mini):
    builder, pkg = mini
    path = pkg / "lib" / "libtorch_python.so"
    path.write_bytes(path.read_bytes()[:100])
    found = run_ids(context(builder.prefix), "TC903", "TC401")
    assert [f.id for f in found] == ["TC903"]
    assert found[0].evidence["file"] == path and found[0].severity.value == "error"


def test_tc401_extension_module_missing(mini):
    builder, pkg = mini
    (pkg / "_C.cpython-311-x86_64-linux-gnu.so").unlink()
    [f] = run_ids(context(builder.prefix), "TC401")
    assert f.evidence["library"] == "_C.cpython-311-x86_64-linux-gnu.so"
    assert f.evidence["loader_message"] == "ModuleNotFoundError: No module named 'torch._C'"
    assert "--force-reinstall" in f.fixes[0].commands[0]


def test_stand_in_torch_without_loading_code_is_not_reported(make_env):
    builder = make_env(layout="venv")
    builder.pip_torch("2.13.0")
    assert run_ids(context(builder.prefix), "TC4", "TC5") == []


def test_tc401_extension_of_another_package_needs_a_library_of_another_cuda(make_env):
    from tests.binaries.elfgen import make_elf

    builder = make_env(layout="venv")
    minitorch_env(builder)
    ext = make_elf(needed=["libtorch_cpu.so", "libcudart.so.9.2"])
    builder.dist("detectron2", "0.6", files={"detectron2/_C.cpython-311-x86_64-linux-gnu.so": ext})
    # a library a package loads only in some cases, and a module for another Python, are not imported
    other = make_elf(needed=["libtorch_cpu.so", "libcudart.so.11.0"])
    builder.dist(
        "bitsandbytes",
        "0.45.0",
        files={
            "bitsandbytes/libbitsandbytes_cuda110.so": other,
            "bitsandbytes/_x.cpython-310-x86_64-linux-gnu.so": other,
        },
        requires=["torch"],
    )
    [f] = run_ids(context(builder.prefix), "TC401")
    assert f.title.key == "TC401.extension.title" and f.evidence["library"] == "libcudart.so.9.2"
    assert f.evidence["package"] == "detectron2"


def test_tc401_nvidia_wheel_in_the_other_site_packages(make_env):
    builder = make_env(layout="venv")
    builder.site_packages = builder.prefix / "lib64" / "python3.11" / "site-packages"
    minitorch_env(builder, nccl=None)
    purelib = builder.prefix / "lib" / "python3.11" / "site-packages"
    nccl = {"nvidia/nccl/lib/libnccl.so.2": (FIX / "cuda" / "nccl-2.21" / "libnccl.so.2").read_bytes()}
    builder.dist("nvidia-nccl-cu12", "2.21.5", site=purelib, files=nccl)
    [f] = run_ids(context(builder.prefix), "TC401")
    assert f.evidence["in_another_site_packages"] == [str(purelib / "nvidia" / "nccl" / "lib" / "libnccl.so.2")]
    assert f.fixes[0].commands[0].startswith(f'export LD_LIBRARY_PATH="{purelib / "nvidia" / "nccl" / "lib"}')
