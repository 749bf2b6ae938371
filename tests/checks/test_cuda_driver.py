"""TC501 / TC502 / TC503: driver version and GPU architecture against a CUDA build of torch, read from a fake
file-system root (the machine running the tests has no NVIDIA driver)."""

from __future__ import annotations

import pytest

from conda_torchcheck.checks import cuda_driver
from tests.loader.linux_layouts import context, minitorch_env, run_ids

PROC_VERSION = (
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  {v}  Thu Feb 22 01:44:30 UTC 2024\n"
    "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n"
)


def driver(root, version=None, gpus=(), libcuda=None):
    if version:
        p = root / "proc" / "driver" / "nvidia" / "version"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(PROC_VERSION.format(v=version))
    for i, model in enumerate(gpus):
        info = root / "proc" / "driver" / "nvidia" / "gpus" / f"0000:0{i}:00.0" / "information"
        info.parent.mkdir(parents=True, exist_ok=True)
        info.write_text(f"Model: \t\t {model}\nIRQ:   \t\t 42\nBus Type: \t PCIe\n")
    if libcuda:
        d = root / "usr" / "lib" / "x86_64-linux-gnu"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"libcuda.so.{libcuda}").write_bytes(b"")


@pytest.fixture
def cuda_env(make_env):
    builder = make_env(layout="venv")
    minitorch_env(builder, cuda="12.6")
    return builder


def test_driver_too_old_for_cuda_12(root, cuda_env):
    driver(root, "470.82.01")
    [f] = run_ids(context(cuda_env.prefix), "TC501")
    assert f.severity.value == "error"
    assert f.evidence["family_minimum"] == "525.60.13" and f.evidence["read_from"] == "/proc/driver/nvidia/version"
    assert f.fixes[0].needs_admin


def test_new_enough_driver(root, cuda_env):
    driver(root, "550.54.14", gpus=["NVIDIA H100 80GB HBM3"])
    assert run_ids(context(cuda_env.prefix), "TC501", "TC502", "TC503") == []


def test_driver_from_libcuda_file_name(root, cuda_env):
    driver(root, libcuda="515.105.01")
    [f] = run_ids(context(cuda_env.prefix), "TC501")
    assert f.evidence["driver"] == "515.105.01" and f.evidence["read_from"].endswith("libcuda.so.515.105.01")


def test_no_driver_is_information_only(root, cuda_env):
    [f] = run_ids(context(cuda_env.prefix), "TC501", "TC502")
    assert f.id == "TC502" and f.severity.value == "info"
    assert "whl/cpu" in f.fixes[0].commands[0]


def test_cpu_build_needs_no_driver(root, make_env):
    builder = make_env(layout="venv")
    minitorch_env(builder, cuda=None, requires=())
    assert run_ids(context(builder.prefix), "TC5") == []


def test_foreign_host_is_not_checked(root, cuda_env):
    driver(root, "470.82.01")
    from conda_torchcheck.checks import run_checks
    from conda_torchcheck.checks.context import CheckContext
    from conda_torchcheck.inventory import load_environment

    env, host = load_environment(cuda_env.prefix, use_live_host=False)
    assert run_checks(CheckContext(env, host), only=["TC5"]) == []


def test_blackwell_gpu_on_a_cuda_12_6_build(root, cuda_env):
    driver(root, "575.51.03", gpus=["NVIDIA GeForce RTX 5090"])
    [f] = run_ids(context(cuda_env.prefix), "TC503")
    assert f.severity.value == "error" and f.evidence["capability"] == "12.0"
    assert "cu128" in f.fixes[0].summary.render("en")


def test_pascal_gpu_on_a_cuda_13_build(root, make_env):
    builder = make_env(layout="venv")
    minitorch_env(builder, cuda="13.0", requires=())
    driver(root, "580.65.06", gpus=["NVIDIA GeForce GTX 1080 Ti"])
    [f] = run_ids(context(builder.prefix), "TC503")
    assert f.evidence["capability"] == "6.1" and "cu126" in f.fixes[0].summary.render("en")


def test_architecture_rules():
    archs = ["7.5", "8.0", "8.6", "9.0", "10.0", "12.0"]
    assert cuda_driver.supports(archs, "12.0", "8.9") == "yes"  # sm_86 cubins run on 8.9
    assert cuda_driver.supports(archs, "12.0", "12.1") == "yes"
    assert cuda_driver.supports(archs, "12.0", "13.0") == "ptx"
    assert cuda_driver.supports(archs, "12.0", "6.1") == "no"
    assert cuda_driver.supports(["5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"], None, "12.0") == "no"


def test_gpu_names_to_capability():
    assert cuda_driver.capability_of("NVIDIA GeForce RTX 4090") == "8.9"
    assert cuda_driver.capability_of("Tesla T4") == "7.5"
    assert cuda_driver.capability_of("NVIDIA A100-SXM4-80GB") == "8.0"
    assert cuda_driver.capability_of("NVIDIA A10") == "8.6"
    assert cuda_driver.capability_of("NVIDIA L40S") == "8.9"
    assert cuda_driver.capability_of("Some Future GPU") is None
