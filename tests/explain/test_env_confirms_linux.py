"""explain with a Linux env: each corpus cause that an env-side check can show is CONFIRMED by that check on an env
that really has the problem, and not confirmed on its healthy twin (issue 12, item 4).

Every test runs the real thing: ``explain(paste, ctx)`` without ``findings=``, so the checks that the causes'
``confirm`` lists run on the env. Envs are built as the checks' own tests build them (tests/loader/linux_layouts:
minitorch, gcc-built ELF fixtures read by the loader model; tests/checks/tc_helpers for record-only envs).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.explain import explain
from conda_torchcheck.inventory import load_environment
from tests.checks.tc_helpers import PY_DEP, healthy
from tests.explain.confirming import assert_confirmed, assert_not_confirmed, cause_of, described, paste
from tests.loader.linux_layouts import FIX, minitorch_env


def ctx_of(prefix, *, live: bool = False, system_root: Path | None = None, **overrides: str) -> CheckContext:
    env, host = load_environment(prefix, use_live_host=live, host_overrides=overrides or None, system_root=system_root)
    return CheckContext(env, host)


# --- MKL without iJIT_NotifyEvent ---------------------------------------------------------------------------


def _pytorch_channel_minitorch(make_env, mkl: str):
    """A pytorch-channel conda torch (its libtorch_cpu.so needs iJIT_NotifyEvent from the env's MKL)."""
    builder = make_env(layout="conda")
    minitorch_env(builder, mkl=mkl)
    info = next(builder.site_packages.glob("torch-*.dist-info"))
    (info / "INSTALLER").write_text("conda\n", encoding="utf-8")
    metadata = f"{builder.site_rel}/{info.name}/METADATA"
    builder.conda_record(
        "pytorch", "2.2.2", "py3.11_cpu_0", channel="pytorch", files={metadata: (info / "METADATA").read_bytes()}
    )
    builder.conda_record("mkl", f"{mkl}.0", "h0000000_0", channel="defaults")
    return builder


@pytest.mark.parametrize("report", ["x001", "x002"])
def test_mkl_without_ijit_is_confirmed_by_tc105_and_the_binaries(make_env, report):
    sick = _pytorch_channel_minitorch(make_env, "2024.1")
    assert_confirmed(explain(paste(report), ctx_of(sick.prefix)), "mkl-ijit")
    well = _pytorch_channel_minitorch(make_env, "2024.0")
    assert_not_confirmed(explain(paste(report), ctx_of(well.prefix)), "mkl-ijit")


def test_oneapi_mkl_on_ld_library_path_is_confirmed_by_tc403(make_env, tmp_path):
    """A sourced oneAPI puts its MKL (without iJIT_NotifyEvent) on LD_LIBRARY_PATH, before torch's own copy."""
    builder = make_env(layout="venv")
    minitorch_env(builder, mkl="2024.0")
    oneapi = tmp_path / "opt" / "intel" / "oneapi" / "mkl" / "2024.2" / "lib"
    oneapi.mkdir(parents=True)
    (oneapi / "libmkl_rt.so.2").write_bytes((FIX / "minitorch" / "mkl-2024.1" / "libmkl_rt.so.2").read_bytes())
    sick = explain(paste("x003"), ctx_of(builder.prefix, LD_LIBRARY_PATH=str(oneapi)))
    assert_confirmed(sick, "oneapi-mkl-ijit")
    assert_not_confirmed(explain(paste("x003"), ctx_of(builder.prefix)), "oneapi-mkl-ijit")


# --- the torch family ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["venv", "conda"])
@pytest.mark.parametrize("report", ["x006", "x035"])
def test_torchvision_for_another_torch_is_confirmed_by_tc104(make_env, layout, report):
    sick = healthy(make_env(layout=layout), torch="2.5.1", vision="0.19.1")
    assert_confirmed(explain(paste(report), ctx_of(sick.prefix)), "torchvision-torch-mismatch")
    well = healthy(make_env(layout=layout))
    assert_not_confirmed(explain(paste(report), ctx_of(well.prefix)), "torchvision-torch-mismatch")


@pytest.mark.parametrize("report", ["x008", "x037"])
def test_torchaudio_extension_for_another_torch_is_confirmed_by_tc104(make_env, report):
    sick = healthy(make_env(layout="venv"), torch="2.5.1", audio="2.4.1")
    assert_confirmed(explain(paste(report), ctx_of(sick.prefix)), "extension-for-other-torch")
    well = healthy(make_env(layout="venv"))
    assert_not_confirmed(explain(paste(report), ctx_of(well.prefix)), "extension-for-other-torch")


def test_cpu_pytorch_beside_cuda_packages_is_confirmed_by_tc102(make_env):
    """cpuonly dragged into a CUDA install: conda solved the CPU pytorch next to CUDA torchvision/pytorch-cuda."""

    def env(cpu: bool):
        b = make_env(layout="conda")
        if cpu:
            b.conda_pytorch("2.5.1", "py3.11_cpu_0", channel="pytorch", depends=PY_DEP)
            b.conda_record("cpuonly", "2.0", "0", channel="pytorch", noarch=True)
        else:
            b.conda_pytorch(
                "2.5.1",
                "py3.11_cuda12.4_cudnn9_0",
                channel="pytorch",
                depends=(*PY_DEP, "pytorch-cuda 12.4.*"),
                cuda="12.4",
            )
        b.conda_record("pytorch-cuda", "12.4", "hc786d27_7", channel="pytorch")
        b.conda_python_package("torchvision", "0.20.1", "py311_cu124", channel="pytorch")
        return b

    assert_confirmed(explain(paste("x026"), ctx_of(env(cpu=True).prefix)), "cpu-build-installed")
    assert_not_confirmed(explain(paste("x026"), ctx_of(env(cpu=False).prefix)), "cpu-build-installed")


# --- the NVIDIA driver and GPU of the machine (read under --system-root) --------------------------------------


def _machine(tmp_path, name: str, version: str | None, gpus=()) -> Path:
    from tests.checks.test_cuda_driver import driver

    root = tmp_path / name
    root.mkdir()
    driver(root, version, gpus=gpus)
    return root


@pytest.mark.parametrize("report", ["x021", "x077"])
def test_driver_older_than_the_build_is_confirmed_by_tc501(make_env, tmp_path, report):
    builder = make_env(layout="venv")
    minitorch_env(builder, cuda="12.6")
    old = _machine(tmp_path, f"old-{report}", "470.82.01")
    assert_confirmed(explain(paste(report), ctx_of(builder.prefix, system_root=old)), "driver-older-than-build")
    new = _machine(tmp_path, f"new-{report}", "550.54.14")
    assert_not_confirmed(explain(paste(report), ctx_of(builder.prefix, system_root=new)), "driver-older-than-build")


@pytest.mark.parametrize("report", ["x015", "x016"])
def test_gpu_arch_not_in_the_build_is_confirmed_by_tc503(make_env, tmp_path, report):
    builder = make_env(layout="venv")
    minitorch_env(builder, cuda="12.6")
    blackwell = _machine(tmp_path, f"b-{report}", "575.51.03", gpus=["NVIDIA GeForce RTX 5090"])
    assert_confirmed(explain(paste(report), ctx_of(builder.prefix, system_root=blackwell)), "gpu-arch-not-in-build")
    hopper = _machine(tmp_path, f"h-{report}", "575.51.03", gpus=["NVIDIA H100 80GB HBM3"])
    assert_not_confirmed(explain(paste(report), ctx_of(builder.prefix, system_root=hopper)), "gpu-arch-not-in-build")


def test_no_driver_is_confirmed_by_tc502_although_it_is_information(make_env, tmp_path):
    """TC502 sees the missing driver. To `check` it is information (a CUDA build runs on a machine without a
    GPU); beside "Found no NVIDIA driver on your system" it is the answer (the cause says confirm_info)."""
    builder = make_env(layout="venv")
    minitorch_env(builder, cuda="12.6")
    bare = _machine(tmp_path, "bare", None)
    result = explain(paste("x020"), ctx_of(builder.prefix, system_root=bare))
    assert [(f.id, f.severity.value) for f in result.findings] == [("TC502", "info")]
    assert_confirmed(result, "no-nvidia-driver")
    with_driver = _machine(tmp_path, "driver", "560.35.03")
    assert_not_confirmed(explain(paste("x020"), ctx_of(builder.prefix, system_root=with_driver)), "no-nvidia-driver")


# --- the loader: libraries on LD_LIBRARY_PATH, NVIDIA wheels -------------------------------------------------

CUDA = FIX / "cuda"


def test_nccl_on_ld_library_path_is_confirmed_by_tc403_and_tc404(make_env):
    """An older libnccl.so.2 on LD_LIBRARY_PATH loads before the wheel's (ld.so searches it before RUNPATH)."""
    builder = make_env(layout="venv")
    minitorch_env(builder, nccl="2.21")
    sick = explain(paste("x080"), ctx_of(builder.prefix, LD_LIBRARY_PATH=str(CUDA / "nccl-2.18")))
    assert_confirmed(sick, "ld-library-path-shadowing")
    assert {f.id for f in cause_of(sick, "ld-library-path-shadowing")[0].confirmed_by} == {"TC403", "TC404"}
    assert_not_confirmed(explain(paste("x080"), ctx_of(builder.prefix)), "ld-library-path-shadowing")


def test_nvidia_wheel_other_than_torchs_pin_is_confirmed_by_tc410_and_tc403(make_env):
    """nvidia-nccl-cu12 2.18.1 under a torch that pins 2.21.5: its libnccl.so.2 lacks a symbol torch binds."""
    sick = make_env(layout="venv")
    minitorch_env(sick, nccl="2.18", nccl_dist="2.18.1")
    assert_confirmed(explain(paste("x076"), ctx_of(sick.prefix)), "nvidia-wheels-mismatch")
    well = make_env(layout="venv")
    minitorch_env(well)
    assert_not_confirmed(explain(paste("x076"), ctx_of(well.prefix)), "nvidia-wheels-mismatch")


def test_nvidia_wheel_torch_requires_is_missing_is_confirmed_by_tc410(make_env):
    sick = make_env(layout="venv")
    minitorch_env(sick, nccl=None)
    result = explain(paste("x069"), ctx_of(sick.prefix))
    assert_confirmed(result, "nvidia-wheels-missing")
    assert "TC410" in {f.id for f in cause_of(result, "nvidia-wheels-missing")[0].confirmed_by}
    well = make_env(layout="venv")
    minitorch_env(well)
    assert_not_confirmed(explain(paste("x069"), ctx_of(well.prefix)), "nvidia-wheels-missing")


def _split_env(make_env, *, split: bool):
    """torch in lib64/.../site-packages (platlib); nvidia-nccl-cu12 in lib/... (purelib) when ``split``."""
    builder = make_env(layout="venv")
    platlib = builder.prefix / "lib64" / "python3.11" / "site-packages"
    builder.site_packages = platlib
    minitorch_env(builder, nccl=None)
    purelib = builder.prefix / "lib" / "python3.11" / "site-packages"
    nccl = {"nvidia/nccl/lib/libnccl.so.2": (CUDA / "nccl-2.21" / "libnccl.so.2").read_bytes()}
    builder.dist("nvidia-nccl-cu12", "2.21.5", site=purelib if split else platlib, files=nccl)
    return builder


@pytest.mark.parametrize("report", ["x005", "x059"])
def test_purelib_platlib_split_is_confirmed_by_tc401(make_env, report):
    sick = explain(paste(report), ctx_of(_split_env(make_env, split=True).prefix))
    assert_confirmed(sick, "purelib-platlib-split")
    [tc401] = [f for f in sick.findings if f.id == "TC401"]
    assert tc401.evidence["in_another_site_packages"][0].endswith(
        "lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2"
    )
    well = explain(paste(report), ctx_of(_split_env(make_env, split=False).prefix))
    assert_not_confirmed(well, "purelib-platlib-split")


def test_lib64_alone_is_no_split(make_env):
    """Everything in lib64 and the wheel really missing: that is nvidia-wheels-missing, not the split."""
    builder = make_env(layout="venv")
    builder.site_packages = builder.prefix / "lib64" / "python3.11" / "site-packages"
    minitorch_env(builder, nccl=None)
    result = explain(paste("x005"), ctx_of(builder.prefix))
    assert_not_confirmed(result, "purelib-platlib-split")
    assert result.likely_causes[0] == "nvidia-wheels-missing", described(result)


NVJITLINK_INIT = """# torch/__init__.py shaped like torch 2.13's loading code (only what the loader model reads)
def _preload_cuda_deps(err=None):
    cuda_libs = [
        ("cusparse", "libcusparse.so.*[0-9]"),
        ("nvjitlink", "libnvJitLink.so.*[0-9]"),
        ("nccl", "libnccl.so.*[0-9]"),
    ]

def _load_global_deps():
    with open("/proc/self/maps") as f:
        pass
"""


def _cusparse_env(make_env):
    """A CUDA minitorch whose libtorch_global_deps.so needs libnccl.so.2: torch preloads the NVIDIA wheels'
    libnvJitLink.so.12 (12.4), libcusparse.so.12 (needs __nvJitLinkComplete_12_4) and libnccl.so.2."""
    builder = make_env(layout="venv")
    torch = minitorch_env(builder)
    (torch / "__init__.py").write_text(NVJITLINK_INIT, encoding="utf-8")
    (torch / "lib" / "libtorch_global_deps.so").write_bytes(
        (FIX / "minitorch" / "cuda" / "libtorch_global_deps.so").read_bytes()
    )
    builder.dist(
        "nvidia-nvjitlink-cu12",
        "12.4.127",
        files={
            "nvidia/nvjitlink/lib/libnvJitLink.so.12": (CUDA / "nvjitlink-12.4" / "libnvJitLink.so.12").read_bytes()
        },
    )
    builder.dist(
        "nvidia-cusparse-cu12",
        "12.3.1.170",
        files={"nvidia/cusparse/lib/libcusparse.so.12": (CUDA / "libcusparse.so.12").read_bytes()},
    )
    return builder


def test_older_nvjitlink_on_ld_library_path_is_confirmed_by_tc403(make_env):
    """libcusparse.so.12 binds __nvJitLinkComplete_12_4 from the libnvJitLink.so.12 that LD_LIBRARY_PATH
    holds (12.1 lacks it); with a 12.4 copy there the import works."""
    builder = _cusparse_env(make_env)
    sick = explain(paste("x078"), ctx_of(builder.prefix, LD_LIBRARY_PATH=str(CUDA / "nvjitlink-12.1")))
    assert_confirmed(sick, "nvjitlink-shadowed")
    assert cause_of(sick, "nvjitlink-shadowed")[0].exact  # TC403 names the symbol and libcusparse.so.12
    well = explain(paste("x078"), ctx_of(builder.prefix, LD_LIBRARY_PATH=str(CUDA / "nvjitlink-12.4")))
    assert_not_confirmed(well, "nvjitlink-shadowed")


@pytest.mark.parametrize(("toolkit", "sick"), [("11.0.221", True), ("11.1.74", False)])
def test_cudatoolkit_other_than_the_build_is_confirmed_by_tc103(make_env, toolkit, sick):
    """x054: cudatoolkit 11.0 under a pytorch-channel cu111 build (libcublas.so.11 / libcublasLt.so.11 of two
    minors)."""
    b = make_env(layout="conda")
    b.conda_pytorch("1.8.1", "py3.8_cuda11.1_cudnn8.0.5_0", channel="pytorch", depends=PY_DEP, cuda="11.1")
    b.conda_record("cudatoolkit", toolkit, "h6bb024c_0", channel="defaults")
    result = explain(paste("x054"), ctx_of(b.prefix))
    if sick:
        assert_confirmed(result, "conda-cuda-libs-mismatch")
    else:
        assert_not_confirmed(result, "conda-cuda-libs-mismatch")


def test_pytorch_cuda_other_than_the_build_is_confirmed_by_tc103(make_env):
    from tests.checks.test_variant import _pytorch_channel_cuda

    sick = _pytorch_channel_cuda(make_env(layout="conda"), cuda="12.1")
    sick.conda_record("pytorch-cuda", "12.4", "hc786d27_7", channel="pytorch")
    assert_confirmed(explain(paste("x054"), ctx_of(sick.prefix)), "conda-cuda-libs-mismatch")
    well = _pytorch_channel_cuda(make_env(layout="conda"), cuda="12.1")
    well.conda_record("pytorch-cuda", "12.1", "hc786d27_7", channel="pytorch")
    assert_not_confirmed(explain(paste("x054"), ctx_of(well.prefix)), "conda-cuda-libs-mismatch")


# --- C/C++ runtimes: synthetic torch libraries and runtime copies with chosen symbol versions -----------------


def _runtime(directory: Path, soname: str, defs: list[str]) -> Path:
    from tests.binaries.elfgen import make_elf

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / soname
    path.write_bytes(make_elf(soname=soname, version_defs=defs))
    return path


def glibcxx(newest: int) -> list[str]:
    """libstdc++'s version nodes up to GLIBCXX_3.4.<newest> (and CXXABI_1.3.<newest - 17>)."""
    return ["GLIBCXX_3.4", *(f"GLIBCXX_3.4.{i}" for i in range(1, newest + 1))] + [
        "CXXABI_1.3",
        *(f"CXXABI_1.3.{i}" for i in range(1, newest - 17)),
    ]


def glibc(newest: int) -> list[str]:
    return ["GLIBC_2.2.5", *(f"GLIBC_2.{i}" for i in range(3, newest + 1))]


def _synthetic_torch(builder, *, needs: dict[str, list[str]], conda_runpath: bool) -> Path:
    """A torch whose libtorch_cpu.so needs ``needs`` (soname -> versions); with ``conda_runpath`` its RUNPATH
    reaches the env's lib/ as conda-forge builds do ($ORIGIN/../../../..), else only $ORIGIN (a pip wheel)."""
    from tests.binaries.elfgen import make_elf
    from tests.loader.linux_layouts import TORCH_INIT

    runpath = "$ORIGIN:$ORIGIN/../../../.." if conda_runpath else "$ORIGIN"
    files = {
        "torch/__init__.py": TORCH_INIT.encode(),
        "torch/version.py": b"__version__ = '2.5.1'\ncuda = None\nhip = None\nxpu = None\n",
        "torch/_C.cpython-311-x86_64-linux-gnu.so": make_elf(needed=["libtorch_cpu.so"], runpath="$ORIGIN/lib"),
        "torch/lib/libtorch_global_deps.so": make_elf(soname="libtorch_global_deps.so", runpath="$ORIGIN"),
        "torch/lib/libtorch_cpu.so": make_elf(
            soname="libtorch_cpu.so", needed=list(needs), version_needs=list(needs.items()), runpath=runpath
        ),
    }
    builder.dist("torch", "2.5.1", files=files, installer="conda" if conda_runpath else "pip")
    return builder.site_packages / "torch"


@pytest.mark.parametrize(("report", "needed"), [("x060", 28), ("x061", 17)])
def test_glibc_older_than_the_build_is_confirmed_by_tc402(make_env, tmp_path, report, needed):
    """The machine's glibc is not examined offline: its libc.so.6 is given on LD_LIBRARY_PATH (CentOS 7 has
    glibc 2.17, AlmaLinux 8 2.28); a live host's comes from its ld.so.cache."""
    builder = make_env(layout="venv")
    _synthetic_torch(builder, needs={"libc.so.6": [f"GLIBC_2.{needed}"]}, conda_runpath=False)
    old = _runtime(tmp_path / "old" / "lib64", "libc.so.6", glibc(needed - 1)).parent
    assert_confirmed(explain(paste(report), ctx_of(builder.prefix, LD_LIBRARY_PATH=str(old))), "glibc-too-old")
    new = _runtime(tmp_path / "new" / "lib64", "libc.so.6", glibc(needed)).parent
    assert_not_confirmed(explain(paste(report), ctx_of(builder.prefix, LD_LIBRARY_PATH=str(new))), "glibc-too-old")


@pytest.mark.parametrize(("report", "needed"), [("x043", 29), ("x082", 32)])
def test_env_libstdcxx_too_old_is_confirmed_by_tc402(make_env, report, needed):
    """A conda-forge-style torch finds the env's lib/libstdc++.so.6 through its RUNPATH; that copy is too old."""

    def env(newest: int):
        b = make_env(layout="conda")
        _synthetic_torch(b, needs={"libstdc++.so.6": [f"GLIBCXX_3.4.{needed}"]}, conda_runpath=True)
        _runtime(b.prefix / "lib", "libstdc++.so.6", glibcxx(newest))
        return b

    assert_confirmed(explain(paste(report), ctx_of(env(needed - 1).prefix)), "env-libstdcxx-too-old")
    assert_not_confirmed(explain(paste(report), ctx_of(env(needed).prefix)), "env-libstdcxx-too-old")


def test_env_libstdcxx_that_lost_the_search_is_not_too_old(make_env, tmp_path):
    """An older system copy on LD_LIBRARY_PATH wins over the env's new one: the env's copy is not the cause."""
    builder = make_env(layout="conda")
    _synthetic_torch(builder, needs={"libstdc++.so.6": ["GLIBCXX_3.4.29"]}, conda_runpath=True)
    _runtime(builder.prefix / "lib", "libstdc++.so.6", glibcxx(32))
    system = _runtime(tmp_path / "usr" / "lib" / "x86_64-linux-gnu", "libstdc++.so.6", glibcxx(28)).parent
    result = explain(paste("x043"), ctx_of(builder.prefix, LD_LIBRARY_PATH=str(system)))
    assert_not_confirmed(result, "env-libstdcxx-too-old")
    assert cause_of(result, "ld-library-path-shadowing")[0].status == "confirmed", described(result)


@pytest.mark.parametrize(("report", "version"), [("x004", "GLIBCXX_3.4.30"), ("x083", "CXXABI_1.3.8")])
def test_system_libstdcxx_on_ld_library_path_winning_is_confirmed_by_tc402(make_env, tmp_path, report, version):
    builder = make_env(layout="conda")
    _synthetic_torch(builder, needs={"libstdc++.so.6": [version]}, conda_runpath=True)
    _runtime(builder.prefix / "lib", "libstdc++.so.6", glibcxx(32))
    system = _runtime(tmp_path / "usr" / "lib" / "x86_64-linux-gnu", "libstdc++.so.6", glibcxx(18)).parent
    sick = explain(paste(report), ctx_of(builder.prefix, LD_LIBRARY_PATH=str(system)))
    assert_confirmed(sick, "system-libstdcxx-wins")
    assert_not_confirmed(explain(paste(report), ctx_of(builder.prefix)), "system-libstdcxx-wins")


def test_system_libstdcxx_from_ld_so_cache_winning_is_confirmed_by_tc402(make_env):
    """Live host: a pip torch (RUNPATH $ORIGIN only) in a conda env binds the machine's libstdc++ from
    ld.so.cache, although the env's lib/ has a copy with the version. x004's paste with GLIBCXX_3.4.99 for its
    GLIBCXX_3.4.30 (no real machine's libstdc++ has 3.4.99; this one's may well have 3.4.30)."""
    import platform

    if platform.system() != "Linux" or platform.machine() != "x86_64":
        pytest.skip("reads this machine's ld.so.cache")
    builder = make_env(layout="conda")
    _synthetic_torch(builder, needs={"libstdc++.so.6": ["GLIBCXX_3.4.99"]}, conda_runpath=False)
    _runtime(builder.prefix / "lib", "libstdc++.so.6", glibcxx(99))
    text = paste("x004").replace("GLIBCXX_3.4.30", "GLIBCXX_3.4.99")
    sick = explain(text, ctx_of(builder.prefix, live=True))
    if not any(f.id == "TC402" for f in sick.findings):
        pytest.skip("this machine's ld.so.cache has no libstdc++.so.6")
    assert_confirmed(sick, "system-libstdcxx-wins")
    well = make_env(layout="conda")
    _synthetic_torch(well, needs={"libstdc++.so.6": ["GLIBCXX_3.4.99"]}, conda_runpath=True)
    _runtime(well.prefix / "lib", "libstdc++.so.6", glibcxx(99))
    assert_not_confirmed(explain(text, ctx_of(well.prefix, live=True)), "system-libstdcxx-wins")


# --- a library that is not there -----------------------------------------------------------------------------


@pytest.mark.parametrize("report", ["x013", "x014"])
def test_torchs_own_libc10_missing_is_confirmed_by_tc401_and_import_order_is_not_claimed(make_env, report):
    """x013/x014 ("libc10.so: cannot open shared object file") were extensions imported before torch: the env
    cannot show import order, so that cause stays unverifiable; a torch that really lacks libc10.so is
    linux-library-missing (TC401)."""
    from tests.binaries.elfgen import make_elf

    def env(with_libc10: bool):
        b = make_env(layout="venv")
        torch = _synthetic_torch(b, needs={"libc10.so": []}, conda_runpath=False)
        if with_libc10:
            (torch / "lib" / "libc10.so").write_bytes(make_elf(soname="libc10.so"))
        return b

    sick = explain(paste(report), ctx_of(env(with_libc10=False).prefix))
    assert_confirmed(sick, "linux-library-missing")
    assert {c.status for c in cause_of(sick, "extension-imported-before-torch")} == {"unverifiable"}
    assert_not_confirmed(explain(paste(report), ctx_of(env(with_libc10=True).prefix)), "linux-library-missing")


def test_openmp_runtime_missing_is_confirmed_by_tc401(make_env):
    def env(with_iomp: bool):
        b = make_env(layout="conda")
        _synthetic_torch(b, needs={"libiomp5.so": []}, conda_runpath=True)
        if with_iomp:
            (b.prefix / "lib" / "libiomp5.so").write_bytes((FIX / "openmp" / "libiomp5.so").read_bytes())
        return b

    assert_confirmed(explain(paste("x065"), ctx_of(env(with_iomp=False).prefix)), "openmp-runtime-missing")
    assert_not_confirmed(explain(paste("x065"), ctx_of(env(with_iomp=True).prefix)), "openmp-runtime-missing")


def test_build_linked_to_the_system_cuda_is_confirmed_by_tc401(make_env, tmp_path):
    """x090: a torch built against the machine's CUDA (no nvidia-* wheels) where libcurand.so.10 is not there;
    given the toolkit's lib64 on LD_LIBRARY_PATH it loads."""
    from tests.binaries.elfgen import make_elf

    builder = make_env(layout="venv")
    _synthetic_torch(builder, needs={"libcurand.so.10": []}, conda_runpath=False)
    sick = explain(paste("x090"), ctx_of(builder.prefix))
    assert_confirmed(sick, "build-needs-system-cuda")
    assert {c.status for c in cause_of(sick, "nvidia-wheels-missing")} == {"not-found"}
    cuda = tmp_path / "usr" / "local" / "cuda-10.2" / "lib64"
    cuda.mkdir(parents=True)
    (cuda / "libcurand.so.10").write_bytes(make_elf(soname="libcurand.so.10"))
    assert_not_confirmed(
        explain(paste("x090"), ctx_of(builder.prefix, LD_LIBRARY_PATH=str(cuda))), "build-needs-system-cuda"
    )


# --- an NVIDIA Jetson (read under --system-root) --------------------------------------------------------------


def _jetson_root(tmp_path, name: str, release: str, model: str) -> Path:
    root = tmp_path / name
    (root / "etc").mkdir(parents=True)
    (root / "etc" / "nv_tegra_release").write_text(
        f"# {release} (release), REVISION: 4.0, GCID: 38968081, BOARD: generic, EABI: aarch64, DATE: Tue Jan 7\n",
        encoding="utf-8",
    )
    (root / "proc" / "device-tree").mkdir(parents=True)
    (root / "proc" / "device-tree" / "model").write_bytes(model.encode() + b"\0")
    return root


def _aarch64_torch(make_env, version: str):
    builder = make_env(layout="venv", arch="aarch64")
    builder.pip_torch(version, cuda="12.6")
    builder.dist("nvidia-cublas-cu12", "12.6.4.1")
    return builder


def test_sbsa_cuda_wheel_on_a_jetson_is_confirmed_by_tc504(make_env, tmp_path):
    orin = _jetson_root(tmp_path, "orin", "R36", "NVIDIA Jetson AGX Orin Developer Kit")
    sick = _aarch64_torch(make_env, "2.7.0+cu126")
    result = explain(paste("x091"), ctx_of(sick.prefix, system_root=orin))
    assert_confirmed(result, "sbsa-wheel-on-jetson")
    [f] = [f for f in result.findings if f.id == "TC504"]
    assert f.evidence["l4t"] == "36.4.0" and f.evidence["sbsa_cuda_wheels"] == ["nvidia-cublas-cu12 12.6.4.1"]
    # NVIDIA's JetPack wheel on the same Orin; the SBSA wheel on a Thor (L4T R38 is SBSA)
    jetpack = _aarch64_torch(make_env, "2.5.0a0+872d972e41.nv24.08")
    assert_not_confirmed(explain(paste("x091"), ctx_of(jetpack.prefix, system_root=orin)), "sbsa-wheel-on-jetson")
    thor = _jetson_root(tmp_path, "thor", "R38", "NVIDIA Jetson AGX Thor Developer Kit")
    assert_not_confirmed(explain(paste("x091"), ctx_of(sick.prefix, system_root=thor)), "sbsa-wheel-on-jetson")


# --- extensions of other packages, imported after torch -------------------------------------------------------


def _torch_with_libc10(builder) -> Path:
    from tests.binaries.elfgen import make_elf

    torch = _synthetic_torch(builder, needs={"libc10.so": []}, conda_runpath=False)
    (torch / "lib" / "libc10.so").write_bytes(make_elf(soname="libc10.so"))
    return torch


@pytest.mark.parametrize(("report", "cudart"), [("x041", "libcudart.so.9.2"), ("x086", "libcudart.so.10.1")])
def test_extension_built_for_another_cuda_is_confirmed_by_tc401(make_env, report, cudart):
    """An extension (linked to torch's libc10.so) that needs the libcudart of the CUDA it was built with."""
    from tests.binaries.elfgen import make_elf

    def env(needed: list[str]):
        b = make_env(layout="venv")
        _torch_with_libc10(b)
        ext = make_elf(needed=needed)
        b.dist("detectron2", "0.6", files={"detectron2/_C.cpython-311-x86_64-linux-gnu.so": ext}, requires=["torch"])
        return b

    sick = explain(paste(report), ctx_of(env(["libc10.so", cudart]).prefix))
    assert_confirmed(sick, "extension-built-for-other-cuda")
    [f] = [f for f in sick.findings if f.id == "TC401"]
    assert f.evidence["package"] == "detectron2" and f.evidence["library"] == cudart
    assert_not_confirmed(explain(paste(report), ctx_of(env(["libc10.so"]).prefix)), "extension-built-for-other-cuda")


def test_extension_binding_a_symbol_nothing_defines_is_confirmed_by_tc403(make_env):
    """flash_attn_2_cuda.so (the fixture libuser.so, RUNPATH $ORIGIN/old) binds prov_new, which the copy of
    its provider there lacks: built against other libraries than the env has."""
    sym = FIX / "symbol"

    def env(provider: str):
        b = make_env(layout="venv")
        _torch_with_libc10(b)
        files = {
            "flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so": (sym / "libuser.so").read_bytes(),
            "old/libprov.so.1": (sym / provider / "libprov.so.1").read_bytes(),
        }
        b.dist("flash_attn", "2.7.4", files=files, requires=["torch", "einops"])
        return b

    sick = explain(paste("x049"), ctx_of(env("old").prefix))
    assert_confirmed(sick, "extension-for-other-torch")
    [f] = [f for f in sick.findings if f.id == "TC403"]
    assert f.evidence["symbol"] == "prov_new" and f.evidence["package"] == "flash_attn"
    assert_not_confirmed(explain(paste("x049"), ctx_of(env("new").prefix)), "extension-for-other-torch")


@pytest.mark.parametrize(("report", "package"), [("x057", "flash_attn"), ("x058", "frnn")])
def test_extension_needing_a_torch_library_of_another_release_is_confirmed_by_tc401(make_env, report, package):
    """libtorch_cuda_cu.so existed up to torch 1.12: an extension built then cannot load with this torch."""
    from tests.binaries.elfgen import make_elf

    def env(needed: list[str]):
        b = make_env(layout="venv")
        _torch_with_libc10(b)
        b.dist(package, "1.0", files={f"{package}/_C.cpython-311-x86_64-linux-gnu.so": make_elf(needed=needed)})
        return b

    sick = explain(paste(report), ctx_of(env(["libc10.so", "libtorch_cuda_cu.so"]).prefix))
    assert_confirmed(sick, "extension-for-other-torch")
    assert_not_confirmed(explain(paste(report), ctx_of(env(["libc10.so"]).prefix)), "extension-for-other-torch")


def test_extension_built_with_the_other_cxx11_abi_is_confirmed_by_tc403(make_env):
    """x040: ext.so needs c10::ClassType::create with a std::__cxx11::basic_string parameter; a torch built
    with _GLIBCXX_USE_CXX11_ABI=0 defines it with the old std::string (``Ss``) instead."""
    from tests.binaries.elfgen import make_elf

    wanted = (
        "_ZN3c109ClassType6createENS_8optionalINS_13QualifiedNameEEESt8weak_ptrIN5torch3jit15CompilationUnitEEb"
        "NSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
    )
    old_abi = wanted.replace("NSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE", "Ss")

    def env(defined: str):
        b = make_env(layout="venv")
        torch = _synthetic_torch(b, needs={"libc10.so": []}, conda_runpath=False)
        (torch / "lib" / "libc10.so").write_bytes(make_elf(soname="libc10.so", defines=[defined]))
        ext = make_elf(needed=["libc10.so"], undefined=[wanted])
        b.dist("myext", "0.1", files={"myext/ext.so": ext}, requires=["torch"])
        return b

    sick = explain(paste("x040"), ctx_of(env(old_abi).prefix))
    assert_confirmed(sick, "cxx11-abi-mismatch")
    assert_not_confirmed(explain(paste("x040"), ctx_of(env(wanted).prefix)), "cxx11-abi-mismatch")


# --- two OpenMP runtimes in one process ------------------------------------------------------------------------
# The corpus has OMP Error #15 pastes from Windows (w006-w008) and macOS only; the message is the same on Linux
# ("Initializing libiomp5.so, but found libiomp5.so already initialized"), so the Windows pastes are used
# against Linux envs here. The second runtime is put into the process with LD_PRELOAD (what importing another
# package that maps it does; the simulated import only loads torch and torch extensions).


def test_another_openmp_runtime_is_confirmed_by_tc420(make_env):
    builder = make_env(layout="venv")
    minitorch_env(builder)
    both = f"{FIX / 'gomp_old' / 'libgomp.so.1'} {FIX / 'openmp' / 'libiomp5.so'}"
    sick = explain(paste("w006"), ctx_of(builder.prefix, LD_PRELOAD=both))
    assert_confirmed(sick, "other-package-openmp")
    assert_not_confirmed(sick, "pip-torch-conda-openmp")  # no conda package's runtime involved
    one = str(FIX / "gomp_old" / "libgomp.so.1")
    assert_not_confirmed(explain(paste("w006"), ctx_of(builder.prefix, LD_PRELOAD=one)), "other-package-openmp")


@pytest.mark.parametrize("report", ["w007", "w008"])
def test_conda_intel_openmp_beside_a_pip_torch_is_confirmed_by_tc420(make_env, report):
    """A pip torch in a conda env whose intel-openmp (lib/libiomp5.so) gets into the process beside the GNU
    runtime: TC420 names the conda package."""
    builder = make_env(layout="conda")
    minitorch_env(builder)
    iomp = {"lib/libiomp5.so": (FIX / "openmp" / "libiomp5.so").read_bytes()}
    builder.conda_record("intel-openmp", "2024.0.0", "ha957f24_49657", channel="defaults", files=iomp)
    gomp = str(FIX / "gomp_old" / "libgomp.so.1")
    sick = explain(paste(report), ctx_of(builder.prefix, LD_PRELOAD=f"{gomp} {builder.prefix / 'lib' / 'libiomp5.so'}"))
    assert_confirmed(sick, "pip-torch-conda-openmp")
    assert_not_confirmed(explain(paste(report), ctx_of(builder.prefix, LD_PRELOAD=gomp)), "pip-torch-conda-openmp")
