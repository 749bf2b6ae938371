"""Issue 12 item 4, the causes the corpus gained since the first pass: each is confirmed by the check that shows it
on an env that really has the problem, and not on its healthy twin. ``explain(paste, ctx)`` runs the checks itself
(no findings=)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.explain import explain
from conda_torchcheck.explain.diagnose import confirming_findings
from conda_torchcheck.explain.patterns import table
from conda_torchcheck.inventory import load_environment
from tests.checks.tc_helpers import PY_DEP, context, healthy
from tests.envbuilder import EnvBuilder
from tests.explain.confirming import assert_confirmed, assert_not_confirmed, cause_of, paste
from tests.explain.test_env_confirms_windows import explain_on
from tests.loader import windows_layouts as wl
from tests.loader.linux_layouts import FIX, minitorch_env


def lists(pattern: str, cause: str) -> bool:
    """Whether the pattern names the cause (the [[pattern]] edits these tests ask for may not be in yet)."""
    return any(ref.cause == cause for ref in table().pattern(pattern).causes)


def ctx_of(prefix, *, system_root: Path | None = None, **overrides: str) -> CheckContext:
    env, host = load_environment(prefix, use_live_host=False, host_overrides=overrides or None, system_root=system_root)
    return CheckContext(env, host)


# --- NCCL: torch binds a symbol the env's libnccl.so.2 lacks ------------------------------------------------


@pytest.mark.parametrize("report", ["z027", "z028", "z029", "t039"])
def test_nccl_mismatch_is_confirmed_by_tc410_and_tc403_on_an_older_nccl_wheel(make_env, report):
    """nvidia-nccl-cu12 2.18.1 under a torch that pins 2.21.5: its libnccl.so.2 lacks a symbol torch binds."""
    sick = make_env(layout="venv")
    minitorch_env(sick, nccl="2.18", nccl_dist="2.18.1")
    result = explain(paste(report), ctx_of(sick.prefix))
    assert_confirmed(result, "nccl-mismatch")
    assert {"TC410", "TC403"} <= {f.id for f in cause_of(result, "nccl-mismatch")[0].confirmed_by}
    well = make_env(layout="venv")
    minitorch_env(well)
    assert_not_confirmed(explain(paste(report), ctx_of(well.prefix)), "nccl-mismatch")


@pytest.mark.parametrize("report", ["t039", "z027"])
def test_nccl_mismatch_is_confirmed_by_tc403_on_an_older_libnccl_on_ld_library_path(make_env, report):
    """t039: an older libnccl.so.2 (a system install) resolved before the wheel's: LD_LIBRARY_PATH names it."""
    b = make_env(layout="venv")
    minitorch_env(b, nccl="2.21")
    older = FIX / "cuda" / "nccl-2.18"
    result = explain(paste(report), ctx_of(b.prefix, LD_LIBRARY_PATH=str(older)))
    assert_confirmed(result, "nccl-mismatch")
    assert "TC403" in {f.id for f in cause_of(result, "nccl-mismatch")[0].confirmed_by}
    assert_not_confirmed(explain(paste(report), ctx_of(b.prefix)), "nccl-mismatch")


# --- a DLL torch imports is in no package of the env ---------------------------------------------------------


@pytest.mark.realdata
def test_dependency_missing_is_confirmed_by_tc301_mkl_of_a_pip_torch(tmp_path):
    """z026: a pip torch on Windows whose DLLs import Intel MKL's, which the wheel does not bring, and no mkl
    installed (torch 2.3.0's torch_cpu.dll imports mkl_intel_thread.1.dll, as the 2018-19 wheels did)."""
    b = wl.torch_env(tmp_path, "2.3.0")
    win = wl.fake_windows(tmp_path / "Windows")
    result = explain_on("z026", b, win)
    assert_confirmed(result, "dependency-missing")
    assert [f.id for f in cause_of(result, "dependency-missing")[0].confirmed_by] == ["TC301"]
    # mkl installed (pip install mkl puts its DLLs in the env's Library\bin, where torch 2.3.0 looks)
    b.dist(
        "mkl", "2021.4.0", files={"../../Library/bin/mkl_intel_thread.1.dll": wl.fixture("x64/libc.dll").read_bytes()}
    )
    assert_not_confirmed(explain_on("z026", b, win), "dependency-missing")


# --- the interpreter's patch release lacks a C-API function torch calls --------------------------------------


def capi_torch(builder) -> Path:
    """minitorch as a cp36 torch whose libtorch_python.so calls PySlice_Unpack: the fixture's weak undefined
    ``_ITM_registerTMCloneTable`` renamed in place in its string table (the name is longer; the rest is NULs)."""
    torch = minitorch_env(builder, nccl=None, cuda=None, requires=())
    c = torch / "_C.cpython-311-x86_64-linux-gnu.so"
    c.rename(torch / "_C.cpython-36m-x86_64-linux-gnu.so")
    lib = torch / "lib" / "libtorch_python.so"
    data = bytearray(lib.read_bytes())
    old = b"\0_ITM_registerTMCloneTable\0"
    at = data.find(old)
    assert at > 0 and data.count(old) == 1
    new = b"\0PySlice_Unpack"
    data[at : at + len(old)] = new + b"\0" * (len(old) - len(new))
    lib.write_bytes(bytes(data))
    return torch


@pytest.mark.parametrize("report", ["x023", "v023"])
def test_python_patch_lacks_capi_is_confirmed_by_tc111_capi_on_python_360(make_env, report):
    """x023/v023: Python 3.6.0 under a torch whose libtorch_python.so calls PySlice_Unpack (3.6.1 and later)."""
    sick = make_env(layout="venv", python="3.6.0")
    capi_torch(sick)
    result = explain(paste(report), ctx_of(sick.prefix))
    assert_confirmed(result, "python-patch-lacks-capi")
    [f] = cause_of(result, "python-patch-lacks-capi")[0].confirmed_by
    assert f.title.key == "TC111.capi.title" and f.evidence["calls"] == ["PySlice_Unpack"]
    well = make_env(layout="venv", python="3.6.2")
    capi_torch(well)
    assert_not_confirmed(explain(paste(report), ctx_of(well.prefix)), "python-patch-lacks-capi")


@pytest.mark.realdata
def test_python_patch_lacks_capi_is_confirmed_by_tc111_capi_on_a_real_macos_libtorch_python(tmp_path):
    """u030: macOS Python 3.6.0, `Symbol not found: _PySlice_Unpack` in libtorch_python.dylib. The real
    libtorch_python.dylib of the torch 2.5.1 arm64 wheel calls _PySlice_Unpack and _PySlice_AdjustIndices; its _C
    is renamed for Python 3.6 (cpython-36m), the name the cp36 wheels' had."""
    from tests.loader.macos_layouts import install_real_torch

    def env(name: str, python: str):
        b = EnvBuilder(tmp_path / name, os="darwin", layout="venv", arch="arm64", python=python)
        torch = install_real_torch(b)
        (torch / "_C.cpython-311-darwin.so").rename(torch / "_C.cpython-36m-darwin.so")
        return b

    result = explain(paste("u030"), ctx_of(env("sick", "3.6.0").prefix))
    assert_confirmed(result, "python-patch-lacks-capi")
    [f] = cause_of(result, "python-patch-lacks-capi")[0].confirmed_by
    assert f.evidence["calls"] == ["PySlice_Unpack", "PySlice_AdjustIndices"]
    assert_not_confirmed(explain(paste("u030"), ctx_of(env("well", "3.6.1").prefix)), "python-patch-lacks-capi")


def _windows_cp36_venv(tmp_path: Path, python: str):
    """A venv of a python.org Python 3.6 with torch 2.3.0's real files made a cp36 build: _C renamed
    _C.cp36-win_amd64.pyd, torch_python.dll's import of python311.dll renamed python36.dll in place (the same
    functions: PySlice_Unpack and PySlice_AdjustIndices among them), the mkl wheel's DLLs in Library\\bin."""
    base = wl.python_org_base(tmp_path / "Python36", tag="36")
    venv = wl.venv_on(tmp_path, base, python=python)
    wl.install_torch(venv, "2.3.0")
    torch = venv.site_packages / "torch"
    next(torch.glob("_C.cp311-*.pyd")).rename(torch / "_C.cp36-win_amd64.pyd")
    lib = torch / "lib" / "torch_python.dll"
    data = bytearray(lib.read_bytes())
    at = data.find(b"python311.dll\0")
    assert at > 0
    data[at : at + 14] = b"python36.dll\0\0"
    wl.replace_file(lib, bytes(data))
    venv.dist(
        "mkl", "2021.4.0", files={"../../Library/bin/mkl_intel_thread.1.dll": wl.fixture("x64/libc.dll").read_bytes()}
    )
    return venv


@pytest.mark.realdata
def test_python_patch_lacks_capi_is_confirmed_by_tc111_capi_from_torch_python_dll_imports(tmp_path):
    """y018: Windows, Python 3.6.0, "DLL not found" until Python 3.6.7. torch_python.dll imports PySlice_Unpack
    from python36.dll, which 3.6.0's lacks; TC111.capi reads the PE import table."""
    win = wl.fake_windows(tmp_path / "Windows", extra=wl.runtime_dlls("msvc-runtime-14.44").values())
    result = explain_on("y018", _windows_cp36_venv(tmp_path / "sick", "3.6.0"), win)
    assert_confirmed(result, "python-patch-lacks-capi")
    [f] = cause_of(result, "python-patch-lacks-capi")[0].confirmed_by
    assert f.title.key == "TC111.capi.title" and f.evidence["binary"].endswith("torch_python.dll")
    twin = explain_on("y018", _windows_cp36_venv(tmp_path / "well", "3.6.7"), win)
    assert_not_confirmed(twin, "python-patch-lacks-capi")


# --- two conda OpenMP packages in Library\\bin ----------------------------------------------------------------


@pytest.mark.realdata
def test_conda_openmp_packages_clash_is_confirmed_by_tc305_clobbered(tmp_path):
    """w032: intel-openmp and llvm-openmp both install Library\\bin\\libiomp5md.dll; the one installed last
    overwrote the other (here llvm's stand-in, without Intel's exports), beside torch 2.3.0. TC305.clobbered names
    the file and both packages. The twin keeps intel-openmp alone: plain TC305 still warns of two runtimes
    (torch's own copy and the env's), which is OMP Error #15's cause, not this one."""
    win = wl.fake_windows(tmp_path / "Windows")
    sick = wl.torch_env(tmp_path / "sick", "2.3.0")
    sick.conda_record("llvm-openmp", "19.1.7", "h0000000_0", files={"Library/bin/libiomp5md.dll": b""})
    sick.conda_record("intel-openmp", "2024.2.1", "h57928b3_1083", files={"Library/bin/libiomp5md.dll": b""})
    wl.replace_file(sick.prefix / "Library" / "bin" / "libiomp5md.dll", wl.fixture("x64/libc.dll").read_bytes())
    result = explain_on("w032", sick, win)
    assert_confirmed(result, "conda-openmp-packages-clash")
    [f] = cause_of(result, "conda-openmp-packages-clash")[0].confirmed_by
    assert f.title.key == "TC305.clobbered.title"
    assert [p.split(" ")[1] for p in f.evidence["installed by"]] == ["intel-openmp", "llvm-openmp"]
    well = wl.torch_env(tmp_path / "well", "2.3.0")
    well.conda_record("intel-openmp", "2024.2.1", "h57928b3_1083", files={"Library/bin/libiomp5md.dll": b""})
    wl.replace_file(well.prefix / "Library" / "bin" / "libiomp5md.dll", wl.openmp_dll().read_bytes())
    twin = explain_on("w032", well, win)
    assert [f.title.key for f in twin.findings if f.id == "TC305"] == ["TC305.title"]
    assert_not_confirmed(twin, "conda-openmp-packages-clash")


# --- a module torch imports, shadowed from PYTHONPATH ---------------------------------------------------------


def test_user_site_or_pythonpath_is_confirmed_by_tc206_pythonpath_module(make_env):
    """z035: torch's own random.py taken for the standard library's. PYTHONPATH naming site-packages/torch puts
    it before the standard library (the reporter started Python inside that folder: the working directory,
    TC206.cwd_module, is local-file-shadows-module's). TC206.pythonpath_module shows it; stdlib-module-shadowed
    must list user-site-or-pythonpath for explain to rank it (until then: the finding, and that it confirms)."""
    b = healthy(make_env(os="darwin", arch="arm64"))
    torch = b.site_packages / "torch"
    (torch / "random.py").write_text("", encoding="utf-8")  # torch/random.py, as every torch has
    result = explain(paste("z035"), context(b, env={"PYTHONPATH": str(torch)}))
    [f] = [f for f in result.findings if f.id == "TC206"]
    assert f.title.key == "TC206.pythonpath_module.title" and f.evidence["modules"] == "random"
    causes = table().causes
    fields = {"module": "random"}
    assert confirming_findings(causes["user-site-or-pythonpath"], fields, result.findings) == (f,)
    assert confirming_findings(causes["local-file-shadows-module"], fields, result.findings) == ()
    twin = explain(paste("z035"), context(b))
    assert not [f for f in twin.findings if f.id == "TC206"]
    if lists("stdlib-module-shadowed", "user-site-or-pythonpath"):
        assert_confirmed(result, "user-site-or-pythonpath")
        assert_not_confirmed(twin, "user-site-or-pythonpath")


# --- a dependency torch declares, not installed ---------------------------------------------------------------


def test_declared_dependency_missing_is_confirmed_by_tc209_numpy_of_an_old_torch(make_env):
    """v007: `numpy.core.multiarray failed to import` with no numpy. torch 0.2-0.3's wheels declared
    `install_requires=['pyyaml', 'numpy']` (pytorch/pytorch#1755, #5618): on such a torch TC209 names the missing
    numpy. (v007's own 0.1.12 did not declare it, and the API-version pastes u018/v002/v003/z039 have a numpy
    too old for the build, which no requirement pins: TC209 cannot show those.) The numpy-abi pattern must name
    the module (`(?P<module>numpy)\\.core\\.multiarray`) for `mentions = ["{module}"]` to hold."""
    sick = make_env(layout="venv", python="3.6.2")
    sick.pip_torch("0.3.1", requires=("pyyaml", "numpy"))
    sick.dist("PyYAML", "3.12")
    result = explain(paste("v007"), context(sick))
    [f] = [f for f in result.findings if f.id == "TC209"]
    assert f.evidence["missing"] == ["numpy"]
    cause = table().causes["declared-dependency-missing"]
    assert confirming_findings(cause, {"module": "numpy"}, result.findings) == (f,)
    sick.dist("numpy", "1.13.1")
    twin = explain(paste("v007"), context(sick))
    assert not [f for f in twin.findings if f.id == "TC209"]
    if any("module" in d.match.fields for d in result.diagnoses):
        assert_confirmed(result, "declared-dependency-missing")
        assert_not_confirmed(twin, "declared-dependency-missing")


# --- torchvision / torchaudio from another channel than torch -------------------------------------------------


def _channel_mix(make_env, companion_channel: str):
    b = make_env(layout="conda")
    b.conda_pytorch("1.13.1", "cpu_py38h92724a6_0", channel="defaults", depends=PY_DEP)
    b.conda_python_package("torchvision", "0.14.1", "py38_cpu", channel=companion_channel)
    b.conda_python_package("torchaudio", "0.13.1", "py38_cpu", channel=companion_channel)
    return b


def test_torchvision_other_manager_is_shown_by_tc101_on_a_pytorch_channel_companion(make_env):
    """z042: defaults' pytorch (cpu_py38h92724a6_0) under the pytorch channel's torchaudio, whose C++ library
    misses a libtorch symbol. TC101 names the companions; it confirms the corpus's first cause,
    extension-for-other-torch (first in the undefined-symbol pattern too). The undefined-symbol pattern does not
    list torchvision-other-manager; the TC101 finding does confirm it (it mentions torchvision)."""
    result = explain(paste("z042"), context(_channel_mix(make_env, "pytorch")))
    assert_confirmed(result, "extension-for-other-torch")
    [f] = [f for f in result.findings if f.id == "TC101"]
    assert confirming_findings(table().causes["torchvision-other-manager"], {}, result.findings) == (f,)
    twin = explain(paste("z042"), context(_channel_mix(make_env, "defaults")))
    assert_not_confirmed(twin, "extension-for-other-torch")
    assert confirming_findings(table().causes["torchvision-other-manager"], {}, twin.findings) == ()
