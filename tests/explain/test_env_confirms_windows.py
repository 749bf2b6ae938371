"""explain with a Windows env: every corpus cause that has an env-side check is CONFIRMED by that check on an env
that really has the problem, and not on its healthy twin (the problem fixed).

The pastes are the real reports of tests/data/reports (their truth `causes` name the cause); the envs are built the
way the checks' own tests build them (tests/checks/test_win_*.py): real wheels' binaries from tests/realdata.py
where the check reads binaries, the PE fixtures of tests/fixtures/pe otherwise, and a Windows folder for the host
facts (``--system-root``). ``explain`` runs the checks itself (no ``findings=``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conda_torchcheck.explain import explain
from tests.explain.confirming import REPORTS, assert_confirmed, assert_not_confirmed
from tests.loader import windows_layouts as wl
from tests.loader.test_windows import fake_torch, put


def explain_on(report: str, env, win: Path | None, **host):
    """``explain`` of the real paste ``report`` against ``env`` (an EnvBuilder), System32 read from ``win``."""
    text = (REPORTS / f"{report}.txt").read_text(encoding="utf-8")
    return explain(text, wl.context(env.prefix, system_root=win, path="", **host))


def renamed_import(fixture: str, old: bytes, new: bytes) -> bytes:
    """A PE fixture whose import of ``old`` is renamed ``new`` in place (the zero padding after it must hold it)."""
    data = bytearray(wl.fixture(fixture).read_bytes())
    at = data.find(old + b"\0")
    assert at > 0 and not any(data[at + len(old) : at + len(new) + 1]), "no room for the new name"
    data[at : at + len(new) + 1] = new + b"\0"
    return bytes(data)


def cudart() -> Path:
    return next(wl.realdata.extract("nvidia-cuda-runtime-cu12-12.4-win", ("*.dll",)).rglob("cudart64_12.dll"))


def clean_torch_215(tmp_path):
    """torch 2.15.0's real files and the 14.44 runtime beside python.exe: `import torch` works (no finding)."""
    b = wl.windows_env(tmp_path)
    wl.install_torch(b, "2.15.0")
    wl.install_runtime(b.prefix, "msvc-runtime-14.44")
    return b, wl.fake_windows(tmp_path / "Windows")


# --- TC301: a DLL is missing ---------------------------------------------------------------------------------


@pytest.mark.realdata
@pytest.mark.parametrize("report", ["w001", "w002"])
def test_libomp140_missing_is_tc301_libomp140_of_torch_240(tmp_path, report):
    b = wl.windows_env(tmp_path)
    wl.install_torch(b, "2.4.0")  # fbgemm.dll and torch_cpu.dll import libomp140.x86_64.dll; the wheel lacks it
    wl.install_runtime(b.prefix, "msvc-runtime-14.44")
    win = wl.fake_windows(tmp_path / "Windows")
    assert_confirmed(explain_on(report, b, win), "libomp140-missing")
    # an OpenMP runtime of that name in the env (Intel's exports the same __kmpc_/omp_ functions LLVM's does)
    b.conda_record("llvm-openmp", "20.1.8", "h0000000_0", files={"Library/bin/libomp140.x86_64.dll": b""})
    wl.replace_file(b.prefix / "Library" / "bin" / "libomp140.x86_64.dll", wl.openmp_dll().read_bytes())
    assert_not_confirmed(explain_on(report, b, win), "libomp140-missing")


@pytest.mark.realdata
@pytest.mark.parametrize("report", ["w052", "w057"])
def test_vc_runtime_missing_is_tc301_vc_runtime(tmp_path, report):
    b = wl.windows_env(tmp_path)
    wl.install_torch(b, "2.3.0")  # no vc14_runtime in the env, none in System32
    win = wl.fake_windows(tmp_path / "Windows")
    assert_confirmed(explain_on(report, b, win), "vc-runtime-missing")
    wl.install_runtime(b.prefix, "msvc-runtime-14.44")
    assert_not_confirmed(explain_on(report, b, win), "vc-runtime-missing")


@pytest.mark.realdata
@pytest.mark.parametrize("report", ["w004", "w011"])
def test_user_site_mkl_is_tc301_mkl_of_torch_230(tmp_path, report):
    b = wl.torch_env(tmp_path, "2.3.0")
    roaming = tmp_path / "AppData" / "Roaming"  # mkl installed with --user: torch 2.3.0 does not look there
    put(roaming / "Python" / "Library" / "bin", "x64/libc.dll", "mkl_intel_thread.1.dll")
    win = wl.fake_windows(tmp_path / "Windows")
    assert_confirmed(explain_on(report, b, win, APPDATA=str(roaming)), "user-site-mkl")
    # mkl in the env's own Library\bin, where torch 2.3.0 looks
    b.dist(
        "mkl", "2021.4.0", files={"../../Library/bin/mkl_intel_thread.1.dll": wl.fixture("x64/libc.dll").read_bytes()}
    )
    assert_not_confirmed(explain_on(report, b, win, APPDATA=str(roaming)), "user-site-mkl")


@pytest.mark.realdata
def test_bundled_dll_missing_is_tc301_torch_file_and_tc308(tmp_path):
    b, win = clean_torch_215(tmp_path)
    assert_not_confirmed(explain_on("w017", b, win), "bundled-dll-missing")
    (b.site_packages / "torch" / "lib" / "c10.dll").unlink()  # quarantined: shm.dll's import of c10.dll fails
    result = explain_on("w017", b, win)
    assert_confirmed(result, "bundled-dll-missing")
    assert {"TC301", "TC308"} <= {f.id for f in result.findings}


@pytest.mark.realdata
def test_cudnn_zlibwapi_is_tc301_naming_zlibwapi(tmp_path):
    """cuDNN 8's cudnn_cnn_infer64_8.dll imports zlibwapi.dll, which the CUDA 11.5 nightly did not ship (w016).
    The stand-in: the mingw fixture cuda_user.dll with its cudnn64_9.dll import renamed zlibwapi.dll."""
    b = wl.windows_env(tmp_path)
    version = "1.11.0.dev20220204+cu115"
    pkg = b.torch_package(version, cuda="11.5")
    files = {
        "torch/version.py": (pkg / "version.py").read_bytes(),
        "torch/lib/cudnn_cnn_infer64_8.dll": renamed_import("mingw/cuda_user.dll", b"cudnn64_9.dll", b"zlibwapi.dll"),
        "torch/lib/cublas64_12.dll": cudart().read_bytes(),  # its other import: only the name matters
    }
    b.dist("torch", version, files=files)
    win = wl.fake_windows(tmp_path / "Windows")
    result = explain_on("w016", b, win)
    assert_confirmed(result, "cudnn-zlibwapi")
    assert any("zlibwapi.dll" == f.evidence.get("missing") for f in result.findings)
    b.dist("torch", version, files={**files, "torch/lib/zlibwapi.dll": wl.fixture("x64/libc.dll").read_bytes()})
    assert_not_confirmed(explain_on("w016", b, win), "cudnn-zlibwapi")


@pytest.mark.realdata
def test_cuda_dlls_replaced_is_tc308_on_caffe2_nvrtc(tmp_path):
    """ZLUDA's caffe2_nvrtc.dll in place of torch's (w042): another file than RECORD lists, and its HIP runtime
    import (amdhip64.dll) is not found."""
    base = wl.python_org_base(tmp_path / "Python311")
    venv = wl.venv_on(tmp_path, base)
    pkg = venv.torch_package("2.3.0+cu118", cuda="11.8")
    venv.dist(
        "torch",
        "2.3.0+cu118",
        files={
            "torch/version.py": (pkg / "version.py").read_bytes(),
            "torch/lib/caffe2_nvrtc.dll": cudart().read_bytes(),
            "torch/lib/cublas64_12.dll": cudart().read_bytes(),
        },
    )
    win = wl.fake_windows(tmp_path / "Windows", extra=wl.runtime_dlls("msvc-runtime-14.44").values())
    shutil.copy(wl.fixture("versioned/driver552/nvcuda.dll"), win / "System32" / "nvcuda.dll")
    assert_not_confirmed(explain_on("w042", venv, win), "cuda-dlls-replaced")
    zluda = renamed_import("mingw/cuda_user.dll", b"cudnn64_9.dll", b"amdhip64.dll")
    wl.replace_file(pkg / "lib" / "caffe2_nvrtc.dll", zluda)
    result = explain_on("w042", venv, win)
    assert_confirmed(result, "cuda-dlls-replaced")
    assert "TC308" in {f.id for f in result.findings}


# --- TC302 / TC311: the VC++ runtime copy that wins ----------------------------------------------------------


@pytest.mark.realdata
@pytest.mark.parametrize("report", ["w023", "w040"])
def test_old_msvcp140_is_tc302_for_torch_29_and_later(tmp_path, report):
    b = wl.windows_env(tmp_path)
    wl.install_torch(b, "2.15.0")
    wl.install_runtime(b.prefix, "msvc-runtime-14.34")  # the env's old copy wins over System32's 14.44
    win = wl.fake_windows(tmp_path / "Windows", extra=wl.runtime_dlls("msvc-runtime-14.44").values())
    assert_confirmed(explain_on(report, b, win), "old-msvcp140")
    wl.install_runtime(b.prefix, "msvc-runtime-14.44")
    assert_not_confirmed(explain_on(report, b, win), "old-msvcp140")


@pytest.mark.realdata
@pytest.mark.parametrize("report", ["w043", "w026"])
def test_dll_preloaded_by_other_package_is_tc311_pyqt5_msvcp140(tmp_path, report):
    base = wl.python_org_base(tmp_path / "Python311")
    venv = wl.venv_on(tmp_path, base)
    wl.install_torch(venv, "2.15.0")
    qt_bin = wl.install_pyqt5_qt5(venv)  # msvcp140.dll 14.26: loaded first when PyQt5 is imported first
    win = wl.fake_windows(tmp_path / "Windows", extra=wl.runtime_dlls("msvc-runtime-14.44").values())
    assert_confirmed(explain_on(report, venv, win), "dll-preloaded-by-other-package")
    wl.replace_file(qt_bin / "msvcp140.dll", wl.runtime_dlls("msvc-runtime-14.44")["msvcp140.dll"].read_bytes())
    assert_not_confirmed(explain_on(report, venv, win), "dll-preloaded-by-other-package")


# --- TC303 / TC304 / TC309 / TC903: a DLL is found but is the wrong file ----------------------------------------


def test_stale_dll_shadowing_is_tc303_on_a_system32_copy(tmp_path):
    """A stale copy of a torch DLL in System32 (w056: torch.dll, c10.dll ... of an older torch). torch < 1.5.1 on
    Python 3.7 loads _C with the classic search order, System32 before PATH (where torch put torch\\lib): the
    stale copy wins and lacks a function _C imports. torch 1.4.0, the first the loader model knows the folders of.
    Stand-ins: liba.dll imports b_func from libb.dll, noexport/libb.dll lacks it."""
    base = wl.python_org_base(tmp_path / "Python37", tag="37")
    venv = wl.venv_on(tmp_path, base, python="3.7.7")
    pkg = fake_torch(venv, "1.4.0", {"libb.dll": "x64/libb.dll"})
    put(pkg, "x64/liba.dll", "_C.cp37-win_amd64.pyd")
    venv.dist(
        "torch", "1.4.0", files={f"torch/{p.relative_to(pkg).as_posix()}": p.read_bytes() for p in pkg.rglob("*.*")}
    )
    win = wl.fake_windows(tmp_path / "Windows", extra=wl.runtime_dlls("msvc-runtime-14.44").values())
    assert_not_confirmed(explain_on("w056", venv, win), "stale-dll-shadowing")
    put(win / "System32", "x64/noexport/libb.dll")
    result = explain_on("w056", venv, win)
    assert_confirmed(result, "stale-dll-shadowing")
    (f,) = result.findings
    assert f.id == "TC303" and f.evidence["found"] == str(win / "System32" / "libb.dll")


@pytest.mark.realdata
def test_mixed_torch_files_is_tc309_for_a_leftover_in_torch_lib(tmp_path):
    """A c10_cuda.dll of an older torch left in torch\\lib (w055) imports a function torch 2.15.0's c10.dll lacks:
    TC309 names the leftover; TC303 does not blame torch's own c10.dll (stand-in: liba.dll importing c10.dll)."""
    base = wl.python_org_base(tmp_path / "Python311")
    venv = wl.venv_on(tmp_path, base)
    wl.install_torch(venv, "2.15.0")
    win = wl.fake_windows(tmp_path / "Windows", extra=wl.runtime_dlls("msvc-runtime-14.44").values())
    assert_not_confirmed(explain_on("w055", venv, win), "mixed-torch-files")
    leftover = venv.site_packages / "torch" / "lib" / "c10_cuda.dll"
    leftover.write_bytes(renamed_import("x64/liba.dll", b"libb.dll", b"c10.dll"))
    result = explain_on("w055", venv, win)
    assert_confirmed(result, "mixed-torch-files")
    assert [(f.id, f.title.key) for f in result.findings] == [("TC309", "TC309.breaks.title")]
    assert "stale-dll-shadowing" not in [d.root_cause.id for d in result.diagnoses if d.root_cause]


def conda_env_with_foreign_dll(tmp_path, channel: str, libb: str):
    """pytorch-channel torch whose torch\\lib\\liba.dll imports b_func from libb.dll, which a conda package of
    ``channel`` puts in Library\\bin (found through the conda Python's DLL directories)."""
    b = wl.windows_env(tmp_path)
    pkg = b.torch_package("2.3.0")
    site = b.site_rel
    files = {f"{site}/torch/{p.name}": p.read_bytes() for p in pkg.iterdir() if p.is_file()}
    files[f"{site}/torch/lib/liba.dll"] = wl.fixture("x64/liba.dll").read_bytes()
    files[f"{site}/torch-2.3.0.dist-info/METADATA"] = b"Metadata-Version: 2.1\nName: torch\nVersion: 2.3.0\n"
    files[f"{site}/torch-2.3.0.dist-info/INSTALLER"] = b"conda\n"
    b.conda_record("pytorch", "2.3.0", "py3.11_cpu_0", channel="pytorch", files=files)
    b.conda_record(
        "libb", "1.0", "h0000000_0", channel=channel, files={"Library/bin/libb.dll": wl.fixture(libb).read_bytes()}
    )
    return b, wl.fake_windows(tmp_path / "Windows")


def test_conda_channel_mix_is_tc303_channel(tmp_path):
    """w015: conda-forge's opencv brought DLLs torch from the pytorch channel cannot use (WinError 182)."""
    b, win = conda_env_with_foreign_dll(tmp_path / "mixed", "conda-forge", "x64/noexport/libb.dll")
    result = explain_on("w015", b, win)
    assert_confirmed(result, "conda-channel-mix")
    (f,) = result.findings
    assert f.title.key == "TC303.channel.title" and f.evidence["owner"] == "conda: libb 1.0 (conda-forge)"
    assert "conda-forge" in f.title.render("en") and "pytorch" in f.title.render("zh_CN")
    # the same library from defaults, the channel the pytorch channel's builds go with
    b, win = conda_env_with_foreign_dll(tmp_path / "one", "defaults", "x64/libb.dll")
    assert_not_confirmed(explain_on("w015", b, win), "conda-channel-mix")


@pytest.mark.realdata
def test_wrong_architecture_is_tc304_for_a_32_bit_dll_in_torch_lib(tmp_path):
    b, win = clean_torch_215(tmp_path)
    assert_not_confirmed(explain_on("w050", b, win), "wrong-architecture")
    target = b.site_packages / "torch" / "lib" / "libiomp5md.dll"
    wl.replace_file(target, wl.openmp_dll("intel-openmp-2021.4-win32").read_bytes())
    result = explain_on("w050", b, win)
    assert_confirmed(result, "wrong-architecture")
    assert any(f.id == "TC304" and f.evidence["file_arch"] == "x86" for f in result.findings)


@pytest.mark.realdata
def test_corrupt_binary_is_tc903_and_tc308_for_a_truncated_dll(tmp_path):
    b, win = clean_torch_215(tmp_path)
    assert_not_confirmed(explain_on("w050", b, win), "corrupt-binary")
    c10 = b.site_packages / "torch" / "lib" / "c10.dll"
    wl.replace_file(c10, c10.read_bytes()[:100_000])  # antivirus or an interrupted install
    result = explain_on("w050", b, win)
    assert_confirmed(result, "corrupt-binary")
    assert {"TC903", "TC308"} <= {f.id for f in result.findings}


# --- the env's torch against its Python, its packages, the machine ------------------------------------------


def conda_torch_from_wheel(b, version: str, channel: str = "defaults") -> None:
    """pytorch + libtorch records laid out as Anaconda's: the real wheel's DLLs in Library\\bin (hard links; the
    manifest gives their sizes, no digests), _C.pyd in site-packages\\torch."""
    root = wl.torch_root(version)
    pkg = b.torch_package(version)
    pyd = next(root.glob("torch/_C.*.pyd"))
    wl.link_or_copy(pyd, pkg / pyd.name)
    version_py = {f"{b.site_rel}/torch/version.py": (pkg / "version.py").read_bytes()}
    b.conda_record("pytorch", version, "cpu_py311h0000000_0", channel=channel, files=version_py)
    record = b.conda_record("libtorch", version, "cpu_h0000000_0", channel=channel)
    data = json.loads(record.read_text(encoding="utf-8"))
    for src in sorted((root / "torch" / "lib").glob("*.dll")):
        rel = f"Library/bin/{src.name}"
        wl.link_or_copy(src, b.prefix / rel)
        data["files"].append(rel)
        data["paths_data"]["paths"].append({"_path": rel, "path_type": "hardlink", "size_in_bytes": src.stat().st_size})
    record.write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.realdata
def test_conda_torch_dependency_missing_is_tc301_in_library_bin(tmp_path):
    """w033: Anaconda's torch links torch_cpu.dll against libomp140.x86_64.dll and no package in the env has it;
    conda's torch keeps its DLLs in Library\\bin, so only "DLL load failed while importing _C" shows."""
    b = wl.windows_env(tmp_path)
    conda_torch_from_wheel(b, "2.4.0")
    wl.install_runtime(b.prefix, "msvc-runtime-14.44")
    win = wl.fake_windows(tmp_path / "Windows")
    result = explain_on("w033", b, win)
    assert_confirmed(result, "conda-torch-dependency-missing")
    assert [f.title.key for f in result.findings if f.id == "TC301"] == ["TC301.libomp140.title"]
    b.conda_record(
        "llvm-openmp", "14.0.6", "h0000000_0", channel="defaults", files={"Library/bin/libomp140.x86_64.dll": b""}
    )
    wl.replace_file(b.prefix / "Library" / "bin" / "libomp140.x86_64.dll", wl.openmp_dll().read_bytes())
    assert_not_confirmed(explain_on("w033", b, win), "conda-torch-dependency-missing")


@pytest.mark.realdata
def test_torch_for_other_python_is_tc301_python_on_windows(tmp_path):
    """w049: a venv whose torch was installed for another Python (there cp313 under 3.12; here the cp311 wheel
    under 3.12): torch_python.dll imports python311.dll, which this Python does not have."""
    base = wl.python_org_base(tmp_path / "Python312", tag="312")
    venv = wl.venv_on(tmp_path, base, python="3.12.4")
    wl.install_torch(venv, "2.15.0")
    win = wl.fake_windows(tmp_path / "Windows", extra=wl.runtime_dlls("msvc-runtime-14.44").values())
    result = explain_on("w049", venv, win)
    assert_confirmed(result, "torch-for-other-python")
    assert any(f.title.key == "TC301.python.title" for f in result.findings)
    # the same files under the Python they were built for
    base = wl.python_org_base(tmp_path / "twin" / "Python311")
    venv = wl.venv_on(tmp_path / "twin", base)
    wl.install_torch(venv, "2.15.0")
    assert_not_confirmed(explain_on("w049", venv, win), "torch-for-other-python")


@pytest.mark.parametrize("report", ["w031", "w051"])
def test_cuda_build_without_nvidia_driver_is_tc313_none(tmp_path, report):
    b = wl.windows_env(tmp_path)
    b.pip_torch("1.5.0+cu92", cuda="9.2")  # w031's torch; System32 has no nvcuda.dll
    win = wl.fake_windows(tmp_path / "Windows")
    assert_confirmed(explain_on(report, b, win), "cuda-build-without-nvidia-driver")
    shutil.copy(wl.fixture("versioned/driver552/nvcuda.dll"), win / "System32" / "nvcuda.dll")
    assert_not_confirmed(explain_on(report, b, win), "cuda-build-without-nvidia-driver")


@pytest.mark.realdata
@pytest.mark.parametrize("report", ["w012", "w047"])
def test_windows_version_unsupported_is_tc314_from_kernel32(tmp_path, report):
    b = wl.torch_env(tmp_path, "2.15.0", "msvc-runtime-14.44")
    win = wl.fake_windows(tmp_path / "Windows")
    kernel32 = win / "System32" / "kernel32.dll"
    for release, confirmed in (("win7", True), ("win10", False)):
        kernel32.unlink()
        shutil.copy(wl.fixture(f"versioned/{release}/kernel32.dll"), kernel32)
        result = explain_on(report, b, win)
        (assert_confirmed if confirmed else assert_not_confirmed)(result, "windows-version-unsupported")
