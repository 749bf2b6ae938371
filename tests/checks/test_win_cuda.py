"""TC312 (cuDNN sub-libraries) and TC313 (the NVIDIA driver from System32\\nvcuda.dll) for CUDA builds on Windows.

Real data: cudnn64_9.dll (FileVersion 9.1.0.70, imports only KERNEL32.dll) and cudnn_graph64_9.dll (no version
resource) read from nvidia-cudnn-cu12 9.1.0.70 win_amd64 with range requests (tests/realdata.py MEMBERS); the other
sub-libraries are copies of cudnn64_9.dll under their names (the real ones carry the same FileVersion 9.1.0.70,
checked on cudnn_cnn64_9.dll and cudnn_engines_runtime_compiled64_9.dll); nvidia-cuda-runtime-cu12 12.4.127's
cudart64_12.dll; nvcuda.dll stand-ins with the FileVersions of real drivers (tests/fixtures/pe/versioned).
"""

from __future__ import annotations

import shutil
import struct

import pytest

from conda_torchcheck.checks import win_cuda, win_cuda_driver
from conda_torchcheck.findings import Severity
from conda_torchcheck.knowledge import load
from tests.loader import windows_layouts as wl

CUDNN9 = load("windows_cuda")["cudnn"]["9"]


def cudart():
    return next(wl.realdata.extract("nvidia-cuda-runtime-cu12-12.4-win", ("*.dll",)).rglob("cudart64_12.dll"))


def cuda_torch_env(tmp_path, *, sublibs=None):
    """A venv on python.org Python with a torch 2.4.0+cu124 whose torch\\lib holds cudart, cudnn64_9.dll and the
    cuDNN 9 sub-libraries given (all: every one)."""
    base = wl.python_org_base(tmp_path / "Python311")
    venv = wl.venv_on(tmp_path, base)
    pkg = venv.torch_package("2.4.0+cu124", cuda="12.4")
    lib = pkg / "lib"
    lib.mkdir()
    wl.link_or_copy(cudart(), lib / "cudart64_12.dll")
    main = wl.realdata.member("cudnn-9.1.0.70-win/cudnn64_9.dll")
    graph = wl.realdata.member("cudnn-9.1.0.70-win/cudnn_graph64_9.dll")
    wl.link_or_copy(main, lib / CUDNN9["main"])
    for name in CUDNN9["sublibraries"] if sublibs is None else sublibs:
        wl.link_or_copy(graph if name == "cudnn_graph64_9.dll" else main, lib / name)
    return venv, lib


def with_file_version(path, a: int, b: int, c: int, d: int) -> None:
    data = bytearray(path.read_bytes())
    sig = data.find(b"\xbd\x04\xef\xfe")
    struct.pack_into("<II", data, sig + 8, (a << 16) | b, (c << 16) | d)
    wl.replace_file(path, bytes(data))


@pytest.mark.realdata
def test_complete_cudnn_is_silent(tmp_path):
    venv, _lib = cuda_torch_env(tmp_path)
    win = wl.fake_windows(tmp_path / "Windows")
    assert list(win_cuda.CHECK.run(wl.context(venv.prefix, system_root=win, path=""))) == []


@pytest.mark.realdata
def test_missing_cudnn_sublibrary(tmp_path):
    present = [n for n in CUDNN9["sublibraries"] if n != "cudnn_ops64_9.dll"]
    venv, lib = cuda_torch_env(tmp_path, sublibs=present)
    win = wl.fake_windows(tmp_path / "Windows")
    (f,) = win_cuda.CHECK.run(wl.context(venv.prefix, system_root=win, path=""))
    assert (f.id, f.severity) == ("TC312", Severity.WARNING)
    assert f.evidence["missing"] == ["cudnn_ops64_9.dll"]
    assert "Could not locate cudnn_ops64_9.dll" in f.explanation.render("en")
    assert f.evidence["cudnn"].endswith("(9.1.0.70)")
    assert str(lib) in f.evidence["searched"]


@pytest.mark.realdata
def test_sublibrary_found_elsewhere_in_the_search_counts(tmp_path):
    present = [n for n in CUDNN9["sublibraries"] if n != "cudnn_ops64_9.dll"]
    venv, _lib = cuda_torch_env(tmp_path, sublibs=present)
    base = tmp_path / "Python311"
    # python.exe's folder: a default DLL directory
    wl.link_or_copy(wl.realdata.member("cudnn-9.1.0.70-win/cudnn64_9.dll"), base / "cudnn_ops64_9.dll")
    win = wl.fake_windows(tmp_path / "Windows")
    assert list(win_cuda.CHECK.run(wl.context(venv.prefix, system_root=win, path=""))) == []


@pytest.mark.realdata
def test_sublibrary_from_another_cudnn_build(tmp_path):
    venv, lib = cuda_torch_env(tmp_path)
    with_file_version(lib / "cudnn_cnn64_9.dll", 9, 0, 0, 312)  # a cuDNN 9.0.0 sub-library
    win = wl.fake_windows(tmp_path / "Windows")
    (f,) = win_cuda.CHECK.run(wl.context(venv.prefix, system_root=win, path=""))
    assert f.title.key == "TC312.mismatch.title"
    assert "cudnn_cnn64_9.dll" in f.evidence["other_build"][0]


def test_cpu_build_is_not_judged(tmp_path):
    b = wl.windows_env(tmp_path)
    b.torch_package("2.4.0+cpu")
    win = wl.fake_windows(tmp_path / "Windows")
    ctx = wl.context(b.prefix, system_root=win, path="")
    assert list(win_cuda.CHECK.run(ctx)) == [] and list(win_cuda_driver.CHECK.run(ctx)) == []


# --- TC313 ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("file_version", "driver"),
    [("31.0.15.5222", "552.22"), ("27.21.14.5671", "456.71"), ("32.0.15.6094", "560.94"), ("1.2", None)],
)
def test_driver_from_file_version(file_version, driver):
    assert win_cuda_driver.driver_from_file_version(file_version) == driver


def test_windows_minimum_is_the_tc501_table():
    assert win_cuda_driver.windows_minimum("12") == load("cuda_driver")["family_minimum"]["12"]["windows"]


def driver_env(tmp_path, fixture: str | None):
    b = wl.windows_env(tmp_path)
    b.torch_package("2.4.0+cu124", cuda="12.4")
    win = wl.fake_windows(tmp_path / "Windows")
    if fixture is not None:
        shutil.copy(wl.fixture(fixture), win / "System32" / "nvcuda.dll")
    return b, win


def test_old_driver_is_an_error(tmp_path):
    b, win = driver_env(tmp_path, "versioned/driver456/nvcuda.dll")
    (f,) = win_cuda_driver.CHECK.run(wl.context(b.prefix, system_root=win, path=""))
    assert (f.id, f.severity) == ("TC313", Severity.ERROR)
    assert f.evidence["driver"] == "456.71" and f.evidence["file_version"] == "27.21.14.5671"
    assert "527.41" in f.title.render("en")
    assert f.fixes[0].needs_admin


def test_new_enough_driver_is_silent(tmp_path):
    b, win = driver_env(tmp_path, "versioned/driver552/nvcuda.dll")
    assert list(win_cuda_driver.CHECK.run(wl.context(b.prefix, system_root=win, path=""))) == []


def test_no_driver_and_unknown_system32(tmp_path):
    b, win = driver_env(tmp_path, None)
    (f,) = win_cuda_driver.CHECK.run(wl.context(b.prefix, system_root=win, path=""))
    assert (f.severity, f.title.key) == (Severity.WARNING, "TC313.none.title")
    assert list(win_cuda_driver.CHECK.run(wl.context(b.prefix, path=""))) == []  # System32 not examined


@pytest.mark.realdata
def test_cudnn_of_another_major_is_named(tmp_path):
    """torch's CUDA DLL (cuda_user.dll: imports cudnn64_9.dll and cublas64_12.dll) beside cuBLAS 12 and cuDNN 8
    only: TC301 says which major is there instead of just "missing"."""
    from conda_torchcheck.checks import win_missing

    base = wl.python_org_base(tmp_path / "Python311")
    venv = wl.venv_on(tmp_path, base)
    lib = venv.torch_package("2.4.0+cu124", cuda="12.4") / "lib"
    wl.link_or_copy(wl.fixture("mingw/cuda_user.dll"), lib / "torch_cuda.dll")
    for name in ("cublas64_12.dll", "cudnn64_8.dll"):
        wl.link_or_copy(cudart(), lib / name)  # only names matter; cublasCreate_v2 is checked within torch's files
    win = wl.fake_windows(tmp_path / "Windows")
    findings = [f for f in win_missing.CHECK.run(wl.context(venv.prefix, system_root=win, path="")) if f.id == "TC301"]
    (f,) = findings
    assert f.title.key == "TC301.cuda_major.title"
    assert f.evidence["missing"] == "cudnn64_9.dll"
    assert f.evidence["other_major"] == [str(lib / "cudnn64_8.dll")]
    assert "cudnn64_8.dll" in f.title.render("zh_CN")


def test_old_driver_offers_the_build_for_a_family_it_supports(tmp_path):
    # driver 456.71 is below CUDA 12's 527.41 but above CUDA 11's 452.39 (the Windows column of the TC501 table)
    b = wl.windows_env(tmp_path)
    b.torch_package("2.4.0+cu124", cuda="12.4")
    b.dist("torch", "2.4.0+cu124")
    win = wl.fake_windows(tmp_path / "Windows")
    shutil.copy(wl.fixture("versioned/driver456/nvcuda.dll"), win / "System32" / "nvcuda.dll")
    (f,) = win_cuda_driver.CHECK.run(wl.context(b.prefix, system_root=win, path=""))
    commands = [c for fix in f.fixes for c in fix.commands]
    assert any("download.pytorch.org/whl/cu118" in c for c in commands), commands


def test_no_driver_where_a_torch_dll_imports_nvcuda_blocks_the_import(tmp_path):
    """torch 1.x's caffe2_nvrtc.dll imports nvcuda.dll itself (w031): without the driver `import torch` fails.
    The stand-in: the mingw fixture cuda_user.dll with its cublas64_12.dll import renamed nvcuda.dll."""
    b, win = driver_env(tmp_path, None)
    data = bytearray(wl.fixture("mingw/cuda_user.dll").read_bytes())
    at = data.find(b"cublas64_12.dll\0")
    data[at : at + 16] = b"nvcuda.dll\0".ljust(16, b"\0")
    lib = b.prefix / "Lib" / "site-packages" / "torch" / "lib"
    lib.mkdir(parents=True, exist_ok=True)
    (lib / "caffe2_nvrtc.dll").write_bytes(bytes(data))
    (f,) = win_cuda_driver.CHECK.run(wl.context(b.prefix, system_root=win, path=""))
    assert (f.severity, f.title.key) == (Severity.ERROR, "TC313.none_blocks.title")
    assert "caffe2_nvrtc.dll" in f.title.render("en")
