"""The Windows loader model on generated DLLs (tests/fixtures/pe) in fixture envs: search order, steps, errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conda_torchcheck.loader import windows
from conda_torchcheck.loader.windows import build_graph_for_file, build_torch_graph, local_path
from tests.envbuilder import pe_stub
from tests.loader import windows_layouts as wl


def put(folder: Path, fixture: str, name: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / (name or Path(fixture).name)
    shutil.copy(wl.fixture(fixture), target)
    return target


def dep(graph, module: Path, name: str):
    mod = graph.module(module)
    assert mod is not None, f"{module} is not in the graph"
    for d in mod.dependencies:
        if d.name.lower() == name.lower():
            return d
    raise AssertionError(f"{module.name} has no dependency {name}: {[d.name for d in mod.dependencies]}")


@pytest.fixture
def env(tmp_path):
    return wl.windows_env(tmp_path)


@pytest.fixture
def windows_dir(tmp_path):
    return wl.fake_windows(tmp_path / "Windows")


def fake_torch(builder, version: str, lib: dict[str, str], pyd: str | None = None, cuda: str | None = None) -> Path:
    pkg = builder.torch_package(version, cuda=cuda)
    builder.dist("torch", version, files={})
    for name, fixture in lib.items():
        put(pkg / "lib", fixture, name)
    if pyd is not None:
        put(pkg, pyd, "_C.cp311-win_amd64.pyd")
    return pkg


# --------------------------------------------------------------------------------------------- one file


def test_dependency_in_the_dlls_own_folder(env, windows_dir, tmp_path):
    app = tmp_path / "app"
    a = put(app, "x64/liba.dll")
    put(app, "x64/libb.dll")
    graph = build_graph_for_file(wl.context(env.prefix, system_root=windows_dir), a)
    assert [o.error for o in graph.outcomes] == [None]
    b = dep(graph, a, "libb.dll")
    assert b.resolution.path == app / "libb.dll"
    assert b.resolution.found_by.step == "dll-load-dir"
    # a missing delay-load import does not fail the load; it is shown, with the places searched
    delayed = dep(graph, a, "libmissing.dll")
    assert delayed.kind == "delay-import" and delayed.resolution is None
    assert graph.missing() == []


def test_miss_lists_every_place_in_order_and_ignores_path_and_cwd(env, windows_dir, tmp_path):
    app = tmp_path / "app"
    a = put(app, "x64/liba.dll")
    on_path = tmp_path / "onpath"
    put(on_path, "x64/libb.dll")
    cwd = tmp_path / "cwd"
    put(cwd, "x64/libb.dll")
    ctx = wl.context(env.prefix, system_root=windows_dir, path=str(on_path), cwd=cwd)
    graph = build_graph_for_file(ctx, a)
    outcome = graph.outcomes[0]
    assert (outcome.error, outcome.failing) == (126, (a, "libb.dll"))
    miss = dep(graph, a, "libb.dll")
    assert miss.resolution is None
    steps = [(p.step, p.directory) for p in miss.searched]
    assert steps == [
        ("dll-load-dir", str(app)),
        ("application-dir", str(env.prefix)),
        ("add_dll_directory", str(env.prefix / "Library" / "bin")),  # conda-forge Python 3.11 adds its folders
        ("system32", str(windows_dir / "System32")),
    ]


def test_missing_export_is_127(env, windows_dir, tmp_path):
    app = tmp_path / "app"
    a = put(app, "x64/liba.dll")
    put(app, "x64/noexport/libb.dll")
    graph = build_graph_for_file(wl.context(env.prefix, system_root=windows_dir), a)
    assert graph.outcomes[0].error == 127
    (issue,) = graph.issues
    assert (issue.kind, issue.name, issue.detail) == ("symbols", "libb.dll", ("b_func",))
    assert dep(graph, a, "libb.dll").problems == ("missing-symbols:1",)


def test_wrong_architecture_stops_the_search_with_193(env, windows_dir, tmp_path):
    app = tmp_path / "app"
    a = put(app, "x64/liba.dll")
    put(app, "x86/libb.dll")
    put(env.prefix / "Library" / "bin", "x64/libb.dll")  # a right copy later in the order is never reached
    graph = build_graph_for_file(wl.context(env.prefix, system_root=windows_dir), a)
    assert graph.outcomes[0].error == 193
    (issue,) = graph.issues
    assert (issue.kind, issue.detail, issue.provider) == ("arch", ("x86",), app / "libb.dll")


@pytest.mark.parametrize("folder", ["x86", "arm64"])
def test_loading_a_foreign_architecture_dll_itself_is_193(env, windows_dir, tmp_path, folder):
    a = put(tmp_path / "app", f"{folder}/liba.dll")
    graph = build_graph_for_file(wl.context(env.prefix, system_root=windows_dir), a)
    assert graph.outcomes[0].error == 193
    assert graph.issues[0].importer == graph.issues[0].provider == a


def test_forwarders_are_followed(env, windows_dir, tmp_path):
    app = tmp_path / "app"
    a = put(app, "x64/liba_fwd.dll")
    b = put(app, "x64/libb.dll")
    put(app, "x64/libc.dll")
    graph = build_graph_for_file(wl.context(env.prefix, system_root=windows_dir), a)
    assert graph.outcomes[0].error is None  # b_fwd -> libc.c_func exists; ordinal 7 exists
    forward = dep(graph, b, "libc.dll")
    assert forward.kind == "forward" and forward.resolution.path == app / "libc.dll"


def test_forwarder_to_a_missing_dll_is_126(env, windows_dir, tmp_path):
    app = tmp_path / "app"
    a = put(app, "x64/liba_fwd.dll")
    put(app, "x64/libb.dll")
    graph = build_graph_for_file(wl.context(env.prefix, system_root=windows_dir), a)
    outcome = graph.outcomes[0]
    assert (outcome.error, outcome.failing) == (126, (app / "libb.dll", "libc.dll"))


def test_forwarder_to_a_missing_function_is_127(env, windows_dir, tmp_path):
    app = tmp_path / "app"
    a = put(app, "x64/liba_fwd_bad.dll")
    put(app, "x64/libb.dll")
    put(app, "x64/libc.dll")
    graph = build_graph_for_file(wl.context(env.prefix, system_root=windows_dir), a)
    assert graph.outcomes[0].error == 127
    (issue,) = graph.issues
    assert (issue.kind, issue.detail) == ("forwarder", ("c_missing",))


def test_known_dlls_always_come_from_system32(env, windows_dir, tmp_path):
    app = tmp_path / "app"
    a = put(app, "mingw/mingw_a.dll")
    put(app, "x64/libb.dll")
    (app / "kernel32.dll").write_bytes(b"a planted copy is never used")
    graph = build_graph_for_file(wl.context(env.prefix, system_root=windows_dir), a)
    k = dep(graph, a, "KERNEL32.dll")
    assert k.resolution.found_by.step == "known-dll"
    assert k.resolution.path == windows_dir / "System32" / "kernel32.dll"
    assert graph.outcomes[0].error is None


def test_system_unknown_assumes_windows_dlls_and_marks_the_runtime(env, tmp_path):
    app = tmp_path / "app"
    a = put(app, "mingw/mingw_a.dll")
    put(app, "x64/libb.dll")
    ctx = wl.context(env.prefix)  # a Windows env read from Linux, no --system-root
    graph = build_graph_for_file(ctx, a)
    k = dep(graph, a, "KERNEL32.dll")
    assert k.resolution.assumed and k.resolution.path is None
    assert graph.outcomes[0].error is None
    assert not graph.process.system_known
    sim = windows._Simulation(graph.process, graph)
    found = sim.find("vcruntime140_threads.dll", windows._Attempt(graph.process.default_dirs(), "x", record=False))
    assert found.resolution.found_by.step == "unexamined" and found.uncertain
    other = sim.find("mkl_core.2.dll", windows._Attempt(graph.process.default_dirs(), "x", record=False))
    assert other.resolution is None and other.uncertain  # reported missing, with System32 "not examined"


def test_api_sets_resolve_without_files():
    assert windows.dll_kind("api-ms-win-crt-runtime-l1-1-0.dll") == "api-set"
    assert windows.dll_kind("ext-ms-win-foo-l1-1-0.dll") == "api-set"
    assert windows.dll_kind("KERNEL32.dll") == "os"
    assert windows.dll_kind("VCRUNTIME140_THREADS.dll") == "vc-runtime"
    assert windows.dll_kind("python311.dll") == "python"
    assert windows.dll_kind("nvcuda.dll") == "driver"
    assert windows.dll_kind("mkl_intel_thread.1.dll") == "other"


# ------------------------------------------------------------------------------------------ the process


def test_venv_application_folder_is_the_base_interpreter(tmp_path, windows_dir):
    base = wl.python_org_base(tmp_path / "Python311", runtime_key=None)
    venv = wl.venv_on(tmp_path, base)
    model = windows.process_model(wl.context(venv.prefix, system_root=windows_dir))
    assert model.app_dir == base  # Scripts\python.exe is a launcher that starts the base python.exe
    assert model.python_dll == base / "python311.dll"
    assert model.interpreter_dirs == []  # python.org Python adds no DLL folder


def test_venv_with_copied_interpreter_runs_from_scripts(tmp_path, windows_dir):
    base = wl.python_org_base(tmp_path / "Python36", runtime_key=None, tag="36")
    venv = wl.venv_on(tmp_path, base, python="3.6.8")
    (venv.prefix / "Scripts" / "python36.dll").write_bytes(pe_stub())
    model = windows.process_model(wl.context(venv.prefix, system_root=windows_dir))
    assert model.app_dir == venv.prefix / "Scripts"


@pytest.mark.parametrize(
    ("channel", "python", "variables", "mode"),
    [
        ("conda-forge", "3.11.9", {}, "conda-folders"),
        ("conda-forge", "3.10.4", {}, "conda-folders"),
        ("conda-forge", "3.11.9", {"CONDA_DLL_SEARCH_MODIFICATION_ENABLE": "1"}, "conda-folders"),  # no effect
        ("conda-forge", "3.9.13", {"CONDA_DLL_SEARCH_MODIFICATION_ENABLE": "1"}, "path-mode"),
        ("defaults", "3.12.4", {}, "conda-folders"),
        ("defaults", "3.10.4", {}, "none"),
    ],
)
def test_conda_python_dll_folders(tmp_path, windows_dir, channel, python, variables, mode):
    builder = wl.windows_env(tmp_path, python=python, channel=channel)
    for folder in ("Library/mingw-w64/bin", "Library/usr/bin", "Scripts", "bin"):
        (builder.prefix / folder).mkdir(parents=True, exist_ok=True)
    model = windows.process_model(wl.context(builder.prefix, system_root=windows_dir, path="", **variables))
    assert model.interpreter_mode == mode
    if mode == "conda-folders":
        rel = [p.directory.relative_to(builder.prefix).as_posix() for p in model.interpreter_dirs]
        assert rel == ["Library/mingw-w64/bin", "Library/usr/bin", "Library/bin", "Scripts", "bin"]


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("2.3.0", ["torch/lib", "Library/bin"]),
        ("2.3.1", ["torch/lib", "Library/bin", "userbase/Library/bin"]),
        ("2.7.0", ["torch/lib", "Library/bin", "userbase/Library/bin"]),
        ("2.8.0", ["torch/lib", "Library/bin", "userbase/Library/bin", "bin"]),
    ],
)
def test_torch_dll_directories_by_version(tmp_path, windows_dir, version, expected):
    builder = wl.windows_env(tmp_path)
    pkg = fake_torch(builder, version, {"liba.dll": "x64/liba.dll"})
    (builder.prefix / "bin").mkdir()
    userbase = tmp_path / "AppData" / "Roaming" / "Python"
    (userbase / "Library" / "bin").mkdir(parents=True)
    ctx = wl.context(builder.prefix, system_root=windows_dir, APPDATA=str(tmp_path / "AppData" / "Roaming"))
    model = windows.process_model(ctx, ctx.torch)
    names = {
        pkg / "lib": "torch/lib",
        builder.prefix / "Library" / "bin": "Library/bin",
        userbase / "Library" / "bin": "userbase/Library/bin",
        builder.prefix / "bin": "bin",
    }
    assert [names[p.directory] for p in model.torch_dirs] == expected
    # AddDllDirectory folders are searched most recently added first, then the interpreter's
    assert model.user_dirs()[0].directory == model.torch_dirs[-1].directory


def test_cuda_path_is_added_only_without_a_bundled_cudart(tmp_path, windows_dir):
    builder = wl.windows_env(tmp_path)
    fake_torch(builder, "2.4.0", {"liba.dll": "x64/liba.dll"}, cuda="12.1")
    toolkit = tmp_path / "CUDA" / "v12.1"
    (toolkit / "bin").mkdir(parents=True)
    ctx = wl.context(builder.prefix, system_root=windows_dir, CUDA_PATH_V12_1=str(toolkit))
    assert toolkit / "bin" in [p.directory for p in windows.process_model(ctx, ctx.torch).torch_dirs]
    (ctx.torch.package_dir / "lib" / "cudart64_12.dll").write_bytes(pe_stub())
    ctx = wl.context(builder.prefix, system_root=windows_dir, CUDA_PATH_V12_1=str(toolkit))
    assert toolkit / "bin" not in [p.directory for p in windows.process_model(ctx, ctx.torch).torch_dirs]


# -------------------------------------------------------------------------------------- torch's import


def test_preload_order_and_fallback_through_path(tmp_path, windows_dir):
    builder = wl.windows_env(tmp_path)
    pkg = fake_torch(builder, "2.5.1", {"liba.dll": "x64/liba.dll", "Zeta.dll": "x64/libc.dll"})
    on_path = tmp_path / "tools"
    put(on_path, "x64/libb.dll")
    ctx = wl.context(builder.prefix, system_root=windows_dir, path=f"C:\\nowhere;{on_path}")
    graph = build_torch_graph(ctx)
    assert [o.path.name for o in graph.outcomes] == ["liba.dll", "Zeta.dll"]
    first = graph.outcomes[0]
    assert (first.first_error, first.fallback_used, first.error) == (126, True, None)
    binding = graph.module(pkg / "lib" / "liba.dll").extra["fallback"]["libb.dll"]
    assert binding["resolution"]["path"] == str(on_path / "libb.dll")
    assert binding["resolution"]["found_by"]["step"] == "path"
    assert graph.loaded["libb.dll"][0] == on_path / "libb.dll"  # the fallback's copy is what stays loaded


def test_fallback_failure_raises_the_preload_error(tmp_path, windows_dir):
    builder = wl.windows_env(tmp_path)
    pkg = fake_torch(builder, "2.5.1", {"liba.dll": "x64/liba.dll"})
    graph = build_torch_graph(wl.context(builder.prefix, system_root=windows_dir, path=""))
    blamed = graph.blamed()
    assert (blamed.path, blamed.error, blamed.fallback_used) == (pkg / "lib" / "liba.dll", 126, True)
    assert blamed.failing == (pkg / "lib" / "liba.dll", "libb.dll")


def test_conda_layout_loads_dlls_from_library_bin_through_c_pyd(tmp_path, windows_dir):
    builder = wl.windows_env(tmp_path)
    fake_torch(builder, "2.5.1", {}, pyd="x64/liba.dll")
    put(builder.prefix / "Library" / "bin", "x64/libb.dll")
    put(builder.prefix / "Library" / "bin", "x64/libc.dll", "torch_cpu.dll")
    graph = build_torch_graph(wl.context(builder.prefix, system_root=windows_dir, path=""))
    assert graph.layout == "conda"
    (outcome,) = graph.outcomes
    assert (outcome.kind, outcome.error) == ("extension", None)
    pyd = outcome.path
    b = dep(graph, pyd, "libb.dll")
    assert b.resolution.found_by.step == "add_dll_directory"
    assert any("conda layout" in note for note in graph.notes)


def test_no_torch_means_no_graph(env, windows_dir):
    assert build_torch_graph(wl.context(env.prefix, system_root=windows_dir)) is None


def test_local_path_mapping():
    assert local_path("/tmp/x", windows_host=False) == Path("/tmp/x")
    assert local_path("relative\\x", windows_host=False) is None
    if not Path("/mnt/q").exists():
        assert local_path("Q:\\Program Files", windows_host=False) is None
    assert local_path('"C:\\x"', windows_host=True) == Path("C:\\x")
    assert local_path("", windows_host=False) is None


# --- issue 14: a package imported before torch, the OS version ----------------------------------------------------


@pytest.mark.realdata
def test_package_load_winner(tmp_path):
    """Which copy a package imported first gets: beside its extension module -> its own; in a folder it adds ->
    python.exe's folder first; a name python.exe loaded at start -> that module whatever the package ships."""
    base = wl.python_org_base(tmp_path / "Python311")  # vcruntime140*.dll beside python.exe
    venv = wl.venv_on(tmp_path, base)
    wl.install_torch(venv, "2.3.0")
    win = wl.fake_windows(tmp_path / "Windows", extra=wl.runtime_dlls("msvc-runtime-14.44").values())
    graph = build_torch_graph(wl.context(venv.prefix, system_root=win, path=""))
    theirs = tmp_path / "pkg" / "msvcp140.dll"
    assert windows.package_load_winner(graph, "msvcp140.dll", theirs, beside_extension=False) == theirs
    assert windows.package_load_winner(graph, "msvcp140.dll", theirs, beside_extension=True) == theirs
    assert windows.package_load_winner(graph, "vcruntime140_1.dll", theirs, beside_extension=False) == (
        base / "vcruntime140_1.dll"
    )
    assert windows.package_load_winner(graph, "vcruntime140_1.dll", theirs, beside_extension=True) == theirs
    # python311.dll's import of vcruntime140.dll was made at start: no package copy can win
    python_exe_copy = graph.loaded["vcruntime140.dll"][0]
    assert windows.package_load_winner(graph, "vcruntime140.dll", theirs, beside_extension=True) == python_exe_copy


def test_windows_version_from_kernel32_or_the_running_windows(tmp_path, monkeypatch):
    b = wl.windows_env(tmp_path)
    b.torch_package("2.4.0")
    win = wl.fake_windows(tmp_path / "Windows")
    ctx = wl.context(b.prefix, system_root=win, path="")
    graph = build_torch_graph(ctx)
    assert windows.windows_version(ctx, graph) is None  # a header-only stand-in has no version resource
    (win / "System32" / "kernel32.dll").unlink()
    shutil.copy(wl.fixture("versioned/win7/kernel32.dll"), win / "System32" / "kernel32.dll")
    ctx = wl.context(b.prefix, system_root=win, path="")
    version, source = windows.windows_version(ctx, build_torch_graph(ctx))
    assert version == (6, 1, 7601) and "6.1.7601.24545" in source
