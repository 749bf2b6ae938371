"""TC311: another package's copy of a DLL torch imports wins when that package is imported first.

Real data: PyQt5-Qt5 5.15.2 (msvcp140.dll 14.26.28720.3 in PyQt5\\Qt5\\bin), torch 2.15.0 / 2.3.0 and the
msvc-runtime wheels (tests/realdata.py).
"""

from __future__ import annotations

import pytest

from conda_torchcheck.checks import win_foreign
from conda_torchcheck.findings import Severity
from tests.loader import windows_layouts as wl

pytestmark = pytest.mark.realdata


def run(ctx):
    return list(win_foreign.CHECK.run(ctx))


def pyqt_venv(tmp_path, torch: str = "2.15.0", system_runtime: str = "msvc-runtime-14.44"):
    """python.org Python (vcruntime140*.dll beside python.exe, no msvcp140.dll), a venv with torch and PyQt5-Qt5,
    and a System32 with a current redistributable: `import torch` alone works."""
    base = wl.python_org_base(tmp_path / "Python311")
    venv = wl.venv_on(tmp_path, base)
    wl.install_torch(venv, torch)
    qt_bin = wl.install_pyqt5_qt5(venv)
    win = wl.fake_windows(tmp_path / "Windows", extra=wl.runtime_dlls(system_runtime).values())
    return venv, base, qt_bin, win


def test_pyqt5_first_gives_torch_2_15_its_old_msvcp140(tmp_path):
    venv, _base, qt_bin, win = pyqt_venv(tmp_path)
    ctx = wl.context(venv.prefix, system_root=win, path="")
    (f,) = run(ctx)
    assert (f.id, f.severity, f.title.key) == ("TC311", Severity.WARNING, "TC311.title")
    assert f.evidence["copy"] == str(qt_bin / "msvcp140.dll")
    assert f.evidence["version"] == "14.26.28720.3"
    assert f.evidence["package"] == "pip: PyQt5-Qt5 5.15.2"
    assert f.evidence["import_first"] == "PyQt5"
    assert f.evidence["torch_gets_when_torch_is_first"] == str(win / "System32" / "msvcp140.dll")
    assert f.evidence["torch_importer"] == "c10.dll"
    text = f.explanation.render("en")
    assert "WinError 1114" in text and "c10.dll" in text and "14.40" in text
    assert f.fixes[0].commands == ("import torch",)
    assert any("pip install --upgrade" in c for fix in f.fixes for c in fix.commands)
    assert "PyQt5" in f.title.render("zh_CN")


def test_the_other_vc_copies_of_pyqt5_never_load_first(tmp_path):
    # vcruntime140.dll: python.exe loaded its own at start; vcruntime140_1.dll is beside python.exe
    venv, _base, _qt_bin, win = pyqt_venv(tmp_path)
    found = run(wl.context(venv.prefix, system_root=win, path=""))
    assert [f.evidence["copy"].rsplit("/", 1)[1] for f in found] == ["msvcp140.dll"]


def test_conda_runtime_next_to_python_exe_wins_for_both_orders(tmp_path):
    b = wl.torch_env(tmp_path, "2.15.0", "msvc-runtime-14.44")  # vc14_runtime's copy beside python.exe
    wl.install_pyqt5_qt5(b)
    win = wl.fake_windows(tmp_path / "Windows")
    assert run(wl.context(b.prefix, system_root=win, path="")) == []


def test_conda_env_without_its_own_runtime_offers_vc14_runtime(tmp_path):
    b = wl.windows_env(tmp_path)
    wl.install_torch(b, "2.15.0")
    wl.install_pyqt5_qt5(b)
    win = wl.fake_windows(tmp_path / "Windows", extra=wl.runtime_dlls("msvc-runtime-14.44").values())
    found = {f.evidence["copy"].rsplit("/", 1)[1]: f for f in run(wl.context(b.prefix, system_root=win, path=""))}
    # without the env's own runtime beside python.exe, PyQt5's vcruntime140_1.dll loads first too (14.26 < 14.42,
    # the toolset of torch 2.15: a note); vcruntime140.dll is python.exe's own
    assert sorted(found) == ["msvcp140.dll", "vcruntime140_1.dll"]
    f = found["msvcp140.dll"]
    assert f.title.key == "TC311.title"
    assert any('"vc14_runtime>=14.42"' in c for fix in f.fixes for c in fix.commands)
    assert (found["vcruntime140_1.dll"].severity, found["vcruntime140_1.dll"].title.key) == (
        Severity.INFO,
        "TC311.older.title",
    )


def test_torch_2_3_and_a_new_enough_or_identical_copy_are_silent(tmp_path):
    # torch 2.3.0 was linked with 14.29 and needs no 14.40: PyQt5's 14.26 is older than that toolset (a note)
    venv, _base, qt_bin, win = pyqt_venv(tmp_path, torch="2.3.0")
    (f,) = run(wl.context(venv.prefix, system_root=win, path=""))
    assert (f.severity, f.title.key) == (Severity.INFO, "TC311.older.title")
    # a copy identical to the one torch gets otherwise
    for name, src in wl.runtime_dlls("msvc-runtime-14.44").items():
        if (qt_bin / name).exists():
            wl.replace_file(qt_bin / name, src.read_bytes())
    assert run(wl.context(venv.prefix, system_root=win, path="")) == []


def test_newer_copy_is_silent(tmp_path):
    venv, _base, qt_bin, win = pyqt_venv(tmp_path, system_runtime="msvc-runtime-14.42")
    wl.replace_file(qt_bin / "msvcp140.dll", wl.runtime_dlls("msvc-runtime-14.44")["msvcp140.dll"].read_bytes())
    assert run(wl.context(venv.prefix, system_root=win, path="")) == []


def importing(name: str) -> bytes:
    """An extension module stand-in that imports ``name``: the mingw fixture liba.dll with its import of libb.dll
    renamed (a name of at most 8 characters fits in place)."""
    data = bytearray(wl.fixture("x64/liba.dll").read_bytes())
    at = data.find(b"libb.dll\0")
    assert at > 0 and len(name) <= 8
    data[at : at + 8] = name.encode().ljust(8, b"\0")
    return bytes(data)


def test_copy_the_package_does_not_load_is_not_reported(tmp_path):
    venv, _base, _qt_bin, win = pyqt_venv(tmp_path, torch="2.3.0")
    cudart = next(wl.realdata.extract("nvidia-cuda-runtime-cu12-12.4-win", ("*.dll",)).rglob("cudart64_12.dll"))
    # its extension module imports libb.dll, not uv.dll: the uv.dll beside it is for something else
    venv.dist("uvtool", "1.0", files={"uvtool/_x.pyd": importing("libb.dll"), "uvtool/uv.dll": cudart.read_bytes()})
    names = [f.evidence["copy"].rsplit("/", 1)[1] for f in run(wl.context(venv.prefix, system_root=win, path=""))]
    assert names == ["msvcp140.dll"]  # PyQt5-Qt5's (a note with torch 2.3.0), no uv.dll


def test_copy_lacking_functions_torch_imports_is_a_127(tmp_path):
    # a package whose extension module sits beside its own uv.dll (a libuv build without the functions torch_cpu.dll
    # of torch 2.3.0 imports: here the real cudart64_12.dll under that name)
    venv, _base, _qt_bin, win = pyqt_venv(tmp_path, torch="2.3.0")
    cudart = next(wl.realdata.extract("nvidia-cuda-runtime-cu12-12.4-win", ("*.dll",)).rglob("cudart64_12.dll"))
    venv.dist("uvbind", "1.0", files={"uvbind/_uv.pyd": importing("uv.dll"), "uvbind/uv.dll": cudart.read_bytes()})
    found = {f.evidence["copy"].rsplit("/", 1)[1]: f for f in run(wl.context(venv.prefix, system_root=win, path=""))}
    f = found["uv.dll"]
    assert (f.severity, f.title.key) == (Severity.WARNING, "TC311.exports.title")
    assert f.evidence["torch_importer"] == "torch_cpu.dll"
    assert "uv_loop_init" in f.evidence["missing_functions"]["torch_cpu.dll"]
    assert "WinError 127" in f.explanation.render("en")
    assert f.evidence["import_first"] == "uvbind"


def test_dll_outside_torchs_closure_is_not_reported(tmp_path):
    # the real nvidia-cuda-runtime-cu12 wheel beside a CPU torch: torch never loads cudart64_12.dll
    venv, _base, _qt_bin, win = pyqt_venv(tmp_path, torch="2.15.0", system_runtime="msvc-runtime-14.44")
    wl.install_wheel(venv, "nvidia-cuda-runtime-cu12-12.4-win", ("nvidia/cuda_runtime/bin/*.dll", "*.dist-info/*"))
    names = [f.evidence["copy"].rsplit("/", 1)[1] for f in run(wl.context(venv.prefix, system_root=win, path=""))]
    assert names == ["msvcp140.dll"]


def test_explain_ranks_it_for_a_1114_on_c10_and_names_the_package(tmp_path):
    from conda_torchcheck.explain import explain

    venv, _base, _qt_bin, win = pyqt_venv(tmp_path)
    error = (
        "OSError: [WinError 1114] A dynamic link library (DLL) initialization routine failed. "
        f'Error loading "{venv.site_packages}\\torch\\lib\\c10.dll" or one of its dependencies.'
    )
    result = explain(error, wl.context(venv.prefix, system_root=win, path=""))
    (diagnosis,) = result.diagnoses
    assert "dll-preloaded-by-other-package" in [c.cause.id for c in diagnosis.causes]
    root = diagnosis.root_cause
    assert root is not None and root.cause.id == "dll-preloaded-by-other-package"
    (confirming,) = root.confirmed_by
    assert confirming.id == "TC311" and "PyQt5" in confirming.title.render("en")
    # without the env the cause is still listed, after a too-old runtime that wins in any order
    ranked = [c.cause.id for c in explain(error).diagnoses[0].causes]
    assert ranked.index("old-msvcp140") < ranked.index("dll-preloaded-by-other-package")


def test_conda_package_with_an_extension_module_and_its_own_runtime_copy(tmp_path):
    # a conda package that keeps an old msvcp140.dll beside its .pyd (found before python.exe's folder)
    b = wl.torch_env(tmp_path, "2.15.0", "msvc-runtime-14.44")
    old = wl.realdata.extract("pyqt5-qt5-5.15.2-win", wl.PYQT5_MEMBERS)
    msvcp = next(old.rglob("msvcp140.dll")).read_bytes()
    b.conda_record(
        "qtlike",
        "1.0",
        "py311_0",
        files={
            "Lib/site-packages/qtlike/_core.pyd": next(old.rglob("msvcp140_1.dll")).read_bytes(),
            "Lib/site-packages/qtlike/msvcp140.dll": msvcp,
        },
    )
    win = wl.fake_windows(tmp_path / "Windows")
    (f,) = run(wl.context(b.prefix, system_root=win, path=""))
    assert f.title.key == "TC311.title" and f.evidence["package"].startswith("conda: qtlike 1.0")
    assert not any("vc14_runtime" in c for fix in f.fixes for c in fix.commands)  # beside its .pyd: no help


def test_when_torch_fails_in_either_order_it_is_tc302s(tmp_path):
    venv, _base, _qt_bin, win = pyqt_venv(tmp_path, system_runtime="msvc-runtime-14.34")
    assert [f.title.key for f in run(wl.context(venv.prefix, system_root=win, path=""))] == []


def test_pyqt5_qt5_loads_its_msvcp140_through_qt5core():
    """The knowledge row for PyQt5-Qt5 rests on the wheel itself: Qt5Core.dll, beside the copies, imports
    MSVCP140.dll (read from the real file)."""
    from conda_torchcheck.binaries.pe import read_pe

    root = wl.realdata.extract("pyqt5-qt5-5.15.2-win", ("PyQt5/Qt5/bin/Qt5Core.dll",))
    info = read_pe(root / "PyQt5" / "Qt5" / "bin" / "Qt5Core.dll", version=False)
    assert "msvcp140.dll" in [i.name.lower() for i in info.imports]


def test_copy_of_a_dll_torch_preloads_before_its_importers_is_not_claimed(tmp_path):
    # torch 2.3.0 preloads torch\lib\c10.dll by full path before shm/torch_cpu/torch_python, which import it by
    # name: with a package's c10.dll already loaded, two modules of that name are loaded and which one those get
    # is not claimed
    venv, _base, _qt_bin, win = pyqt_venv(tmp_path, torch="2.3.0")
    cudart = next(wl.realdata.extract("nvidia-cuda-runtime-cu12-12.4-win", ("*.dll",)).rglob("cudart64_12.dll"))
    venv.dist("c10bind", "1.0", files={"c10bind/_c.pyd": importing("c10.dll"), "c10bind/c10.dll": cudart.read_bytes()})
    names = [f.evidence["copy"].rsplit("/", 1)[1] for f in run(wl.context(venv.prefix, system_root=win, path=""))]
    assert "c10.dll" not in names


def test_older_cudnn_of_another_package_in_a_conda_layout(tmp_path):
    """torch's extension module imports cudnn64_9.dll, found in the env's Library\\bin (9.5, the cudnn package);
    another package keeps the real cuDNN 9.1.0.70 beside its own extension module: imported first, torch gets 9.1
    and torch.backends.cudnn refuses it."""
    import struct

    b = wl.windows_env(tmp_path)
    pkg = b.torch_package("2.6.0+cu124", cuda="12.4")
    user = wl.fixture("mingw/cuda_user.dll").read_bytes()  # imports cudnn64_9.dll and cublas64_12.dll
    (pkg / "_C.cp311-win_amd64.pyd").write_bytes(user)
    real = wl.realdata.member("cudnn-9.1.0.70-win/cudnn64_9.dll").read_bytes()
    newer = bytearray(real)
    sig = newer.find(b"\xbd\x04\xef\xfe")
    struct.pack_into("<II", newer, sig + 8, (9 << 16) | 5, (1 << 16) | 17)  # 9.5.1.17
    library_bin = b.prefix / "Library" / "bin"
    library_bin.mkdir(parents=True, exist_ok=True)
    (library_bin / "cudnn64_9.dll").write_bytes(bytes(newer))
    (library_bin / "cublas64_12.dll").write_bytes(real)  # only its name matters here
    b.dist("ortlike", "1.0", files={"ortlike/_state.pyd": user, "ortlike/cudnn64_9.dll": real})
    win = wl.fake_windows(tmp_path / "Windows")
    found = {f.evidence["copy"].rsplit("/", 1)[1]: f for f in run(wl.context(b.prefix, system_root=win, path=""))}
    f = found["cudnn64_9.dll"]
    assert (f.severity, f.title.key) == (Severity.WARNING, "TC311.cudnn.title")
    assert f.evidence["version"] == "9.1.0.70" and f.evidence["its_version"] == "9.5.1.17"
    assert f.evidence["torch_gets_when_torch_is_first"] == str(library_bin / "cudnn64_9.dll")
    assert "cuDNN version incompatibility" in f.explanation.render("en")
