"""The Windows loader model on real torch wheels and real Microsoft / Intel DLLs, laid out as conda envs and venvs.

Expected names and chains are the ones real-test-data.md established with objdump, llvm-readobj and wine.
"""

from __future__ import annotations

import pytest

from conda_torchcheck.loader.windows import build_torch_graph
from tests.loader import windows_layouts as wl

pytestmark = pytest.mark.realdata


def misses(graph) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for module, dep in graph.missing():
        out.setdefault(module.name, set()).add(dep.name)
    return out


def conda_env(tmp_path, version: str, runtime: str | None = None):
    builder = wl.windows_env(tmp_path)
    wl.install_torch(builder, version)
    if runtime:
        wl.install_runtime(builder.prefix, runtime)  # vc14_runtime puts the DLLs next to python.exe
    return builder


def test_230_without_vc_runtime(tmp_path):
    builder = conda_env(tmp_path, "2.3.0")
    windows_dir = wl.fake_windows(tmp_path / "Windows")
    graph = build_torch_graph(wl.context(builder.prefix, system_root=windows_dir, path=""))
    found = misses(graph)
    # python.exe runs, so vcruntime140.dll is loaded; vcruntime140_1 and msvcp140 are nowhere
    assert found["c10.dll"] == {"VCRUNTIME140_1.dll", "MSVCP140.dll"}
    assert found["shm.dll"] == {"VCRUNTIME140_1.dll"}  # shm imports no MSVCP140 itself
    assert "mkl_intel_thread.1.dll" in found["torch_cpu.dll"]
    blamed = graph.blamed()
    assert (blamed.path.name, blamed.error) == ("asmjit.dll", 126)  # first in glob order


def test_230_with_runtime_fails_on_mkl_through_shm(tmp_path):
    builder = conda_env(tmp_path, "2.3.0", "msvc-runtime-14.44")
    windows_dir = wl.fake_windows(tmp_path / "Windows")
    graph = build_torch_graph(wl.context(builder.prefix, system_root=windows_dir, path=""))
    assert misses(graph) == {"torch_cpu.dll": {"mkl_intel_thread.1.dll"}}
    blamed = graph.blamed()
    assert blamed.path.name == "shm.dll"
    assert [p.name for p in blamed.chain] == ["shm.dll", "torch_cpu.dll"]
    assert blamed.failing[1] == "mkl_intel_thread.1.dll"


def test_240_with_runtime_needs_libomp140_in_fbgemm_and_torch_cpu(tmp_path):
    builder = conda_env(tmp_path, "2.4.0", "msvc-runtime-14.44")
    windows_dir = wl.fake_windows(tmp_path / "Windows")
    graph = build_torch_graph(wl.context(builder.prefix, system_root=windows_dir, path=""))
    assert misses(graph) == {"fbgemm.dll": {"libomp140.x86_64.dll"}, "torch_cpu.dll": {"libomp140.x86_64.dll"}}
    assert graph.blamed().path.name == "fbgemm.dll"


def test_215_with_runtime_1434_misses_vcruntime140_threads(tmp_path):
    builder = conda_env(tmp_path, "2.15.0", "msvc-runtime-14.34")
    windows_dir = wl.fake_windows(tmp_path / "Windows")
    graph = build_torch_graph(wl.context(builder.prefix, system_root=windows_dir, path=""))
    assert misses(graph) == {"torch_cpu.dll": {"VCRUNTIME140_THREADS.dll"}}
    # c10.dll comes first in torch\lib and already fails: msvcp140 14.34 < 14.40 crashes its initialisation (1114);
    # with that fixed alone, shm.dll would fail next on the missing VCRUNTIME140_THREADS.dll
    assert [(o.path.name, o.error) for o in graph.outcomes if o.error][:2] == [("c10.dll", 1114), ("shm.dll", 126)]


def test_215_with_runtime_1442_loads(tmp_path):
    builder = conda_env(tmp_path, "2.15.0", "msvc-runtime-14.42")
    windows_dir = wl.fake_windows(tmp_path / "Windows")
    graph = build_torch_graph(wl.context(builder.prefix, system_root=windows_dir, path=""))
    assert misses(graph) == {}
    assert graph.blamed() is None
    assert graph.issues == []  # every msvcp140/vcruntime symbol torch imports is exported by 14.42


def test_215_env_copy_of_old_runtime_wins_over_a_new_system_one(tmp_path):
    builder = conda_env(tmp_path, "2.15.0", "msvc-runtime-14.34")
    new = wl.runtime_dlls("msvc-runtime-14.44")
    windows_dir = wl.fake_windows(tmp_path / "Windows", extra=new.values())
    graph = build_torch_graph(wl.context(builder.prefix, system_root=windows_dir, path=""))
    msvcp, how = graph.loaded["msvcp140.dll"]
    assert msvcp == builder.prefix / "msvcp140.dll"
    assert how.note == "vc-probe" and how.step == "application-dir"
    # vcruntime140_threads.dll is not in the env, so that one comes from System32
    assert graph.loaded["vcruntime140_threads.dll"][0] == windows_dir / "System32" / "vcruntime140_threads.dll"
    # torch >= 2.9 needs msvcp140 >= 14.40: the 14.34 copy next to python.exe makes c10.dll fail with 1114
    blamed = graph.blamed()
    assert (blamed.path.name, blamed.error) == ("c10.dll", 1114)


def test_venv_on_python_org_gets_msvcp140_from_system32(tmp_path):
    base = wl.python_org_base(tmp_path / "Python311")
    venv = wl.venv_on(tmp_path, base)
    wl.install_torch(venv, "2.15.0")
    rt = wl.runtime_dlls("msvc-runtime-14.44")
    windows_dir = wl.fake_windows(tmp_path / "Windows", extra=rt.values())
    graph = build_torch_graph(wl.context(venv.prefix, system_root=windows_dir, path=""))
    assert graph.blamed() is None
    assert graph.loaded["vcruntime140_1.dll"][0] == base / "vcruntime140_1.dll"  # python.org's own copy
    assert graph.loaded["msvcp140.dll"][0] == windows_dir / "System32" / "msvcp140.dll"


def test_venv_without_system_runtime_misses_msvcp140(tmp_path):
    base = wl.python_org_base(tmp_path / "Python311")
    venv = wl.venv_on(tmp_path, base)
    wl.install_torch(venv, "2.3.0")
    windows_dir = wl.fake_windows(tmp_path / "Windows")
    graph = build_torch_graph(wl.context(venv.prefix, system_root=windows_dir, path=""))
    found = misses(graph)
    assert found["c10.dll"] == {"MSVCP140.dll"}  # vcruntime140_1.dll comes with python.org Python
    assert graph.blamed().path.name == "c10.dll"


def test_system_unknown_makes_runtime_a_host_question_not_a_miss(tmp_path):
    builder = conda_env(tmp_path, "2.3.0")
    graph = build_torch_graph(wl.context(builder.prefix))
    names = {m for deps in misses(graph).values() for m in deps}
    assert names == {"mkl_intel_thread.1.dll"}  # never KERNEL32 or the VC runtime
    c10 = graph.module(builder.site_packages / "torch" / "lib" / "c10.dll")
    msvcp = next(d for d in c10.dependencies if d.name == "MSVCP140.dll")
    assert msvcp.resolution.assumed and msvcp.resolution.found_by.step == "unexamined"


def test_conda_layout_with_real_dlls_in_library_bin(tmp_path):
    """conda-forge / defaults torch: DLLs in <prefix>\\Library\\bin, only .lib files in torch\\lib."""
    import json

    b = wl.windows_env(tmp_path)
    root = wl.torch_root("2.15.0")
    record = b.conda_pytorch("2.15.0", "cpu_mkl_py311_h0000000_100")
    pkg = b.site_packages / "torch"
    wl.link_or_copy(next((root / "torch").glob("_C.*.pyd")), pkg / "_C.cp311-win_amd64.pyd")
    (pkg / "lib").mkdir(exist_ok=True)
    (pkg / "lib" / "c10.lib").write_bytes(b"!<arch>\n")
    bin_dir = b.prefix / "Library" / "bin"
    files = []
    for dll in (root / "torch" / "lib").glob("*.dll"):
        wl.link_or_copy(dll, bin_dir / dll.name)
        files.append(f"Library/bin/{dll.name}")
    libtorch = b.conda_record("libtorch", "2.15.0", "cpu_mkl_h0000000_100")
    data = json.loads(libtorch.read_text())
    data["files"] = files
    data["paths_data"]["paths"] = [{"_path": f, "path_type": "hardlink"} for f in files]
    libtorch.write_text(json.dumps(data))
    wl.install_runtime(b.prefix, "msvc-runtime-14.44")
    graph = build_torch_graph(wl.context(b.prefix, system_root=wl.fake_windows(tmp_path / "Windows"), path=""))
    assert record.exists() and graph.layout == "conda"
    (outcome,) = graph.outcomes
    assert (outcome.kind, outcome.error) == ("extension", None)
    pyd = graph.module(outcome.path)
    (torch_python,) = [d for d in pyd.dependencies if d.name == "torch_python.dll"]
    assert torch_python.resolution.path == bin_dir / "torch_python.dll"
    # torch adds <prefix>\Library\bin, and so does conda-forge Python: the most recently added entry finds it
    assert torch_python.resolution.found_by.step == "add_dll_directory"
    assert graph.is_own(bin_dir / "torch_cpu.dll")  # the libtorch package's files are torch's own
