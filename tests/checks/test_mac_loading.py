"""TC450/TC451/TC453 on the real torch macOS wheels laid out as conda envs and venvs, examined from Linux:
healthy layouts stay clean (no error or warning from any check), a removed libc10.dylib is an error with the
chain and dyld's tried list, wrong architectures and a too-old macOS are named."""

from __future__ import annotations

import pytest

from conda_torchcheck.checks import run_checks
from conda_torchcheck.findings import Severity
from tests.checks.tc_helpers import context, run_check
from tests.loader.macos_layouts import install_real_torch, mac_env, system_root

pytestmark = pytest.mark.realdata


@pytest.fixture(params=["conda", "venv"])
def arm64_env(request, tmp_path):
    builder = mac_env(tmp_path / request.param, layout=request.param)
    return builder, install_real_torch(builder)


def test_healthy_arm64_layout_has_no_false_errors(arm64_env, tmp_path):
    builder, _pkg = arm64_env
    for root in (None, system_root(tmp_path / "root", "14.5")):
        ctx = context(builder, system_root=root)
        assert ctx.env.os == "darwin" and ctx.env.python.arch == "arm64"
        findings = run_checks(ctx)
        bad = [f"{f.id} {f.title.render()}" for f in findings if f.severity in (Severity.ERROR, Severity.WARNING)]
        assert bad == []
        assert "TC455" in [f.id for f in findings]


def test_libc10_removed_is_an_error_with_the_chain_and_every_place_tried(arm64_env):
    builder, pkg = arm64_env
    (pkg / "lib" / "libc10.dylib").unlink()
    [f] = run_check(builder, "mac_loading")
    assert f.id == "TC450" and f.severity is Severity.ERROR
    assert f.title.render() == "dyld cannot load a library that torch needs: libc10.dylib"
    chain = [p.rsplit("/", 1)[-1] for p in f.evidence["chain"]]
    assert chain[:3] == ["python3.11", "_C.cpython-311-darwin.so", "libtorch_python.dylib"]
    assert f.evidence["chain"][-1] == "@rpath/libc10.dylib"
    message = f.evidence["dyld_message"]
    assert message.startswith(
        f"dlopen({pkg}/_C.cpython-311-darwin.so, 0x0002): Library not loaded: @rpath/libc10.dylib"
    )
    assert f"Referenced from: {pkg}/lib/libtorch_python.dylib" in message
    # libtorch_python's @loader_path first, then _C.so's rpaths: the build machine's /Users/runner/... twice
    # (torch 2.5.1's _C.so carries it twice) before @loader_path/lib
    tried = f.evidence["tried"]
    assert tried[0] == f"LC_RPATH '{pkg}/lib/libc10.dylib' (no such file; @loader_path of libtorch_python.dylib)"
    assert tried[1].startswith("LC_RPATH '/Users/runner/work/_temp/anaconda/envs/wheel_py311/lib/libc10.dylib'")
    assert tried[3].startswith(f"LC_RPATH '{pkg}/lib/libc10.dylib' (no such file; @loader_path/lib of _C.")
    assert tried[-1] == "default-fallback '/usr/lib/libc10.dylib' (no such file, not in dyld cache)"
    assert [fix.summary.key for fix in f.fixes] == ["TC450.fix.reinstall_torch"]
    assert "install --force-reinstall --no-deps" in f.fixes[0].commands[0]


def test_x86_64_python_with_arm64_torch(tmp_path):
    builder = mac_env(tmp_path / "env", python_arch="x86_64")
    install_real_torch(builder, "arm64")
    findings = run_check(builder, "mac_loading")
    assert [f.id for f in findings] == ["TC451"]
    f = findings[0]
    assert f.evidence["file_archs"] == ["arm64"] and f.evidence["process_arch"] == "x86_64"
    assert "(mach-o file, but is an incompatible architecture (have 'arm64', need 'x86_64'))" in f.explanation.render()
    assert [x.summary.key for x in f.fixes] == ["TC451.fix.arm64_env", "TC451.fix.reinstall_torch"]


def test_arm64_python_with_x86_64_torch(tmp_path):
    builder = mac_env(tmp_path / "env", python_arch="arm64")
    install_real_torch(builder, "x86_64")
    [f] = run_check(builder, "mac_loading")
    assert f.id == "TC451" and f.evidence["file_archs"] == ["x86_64"] and f.evidence["process_arch"] == "arm64"


def test_healthy_x86_64_layout_loads(tmp_path):
    # torch 2.2.2's libtorch_global_deps finds libiomp5 through @loader_path/../../functorch/.dylibs
    builder = mac_env(tmp_path / "env", python_arch="x86_64")
    install_real_torch(builder, "x86_64")
    assert run_check(builder, "mac_loading") == []
    from conda_torchcheck.loader import macos

    load = macos.torch_load(context(builder))
    assert load.first_error is None
    assert any(i.path.name == "libiomp5.dylib" and i.path.parent.name == ".dylibs" for i in load.dyld.loaded)


def test_older_macos_than_the_wheels_minimum(arm64_env, tmp_path):
    builder, _pkg = arm64_env
    [f] = run_check(builder, "mac_loading", system_root=system_root(tmp_path / "root", "10.15.7"))
    assert f.id == "TC453" and f.evidence["minos"] == "11.0" and f.evidence["host_macos"] == "10.15.7"
    assert f.evidence["host_macos_from"] == "system-root"
    assert "which is newer than running OS" in f.explanation.render()
    assert "10.15.7" in f.title.render("zh_CN")


def test_pip_torch_over_conda_pytorch_on_a_macos_layout(make_env):
    """The cross-platform pip-vs-conda check (TC202) on an osx-arm64 conda env."""
    import shutil

    from tests.checks.tc_helpers import PY_DEP

    b = make_env(os="darwin", arch="arm64")
    b.conda_pytorch("2.5.1", "cpu_generic_py311_h0000000_0", depends=PY_DEP)
    shutil.rmtree(b.site_packages / "torch-2.5.1.dist-info")
    shutil.rmtree(b.site_packages / "torch")
    b.pip_torch("2.6.0")
    findings = run_check(b, "pip_conda")
    assert [f.id for f in findings] == ["TC202"]
    assert "conda-meta/pytorch-2.5.1-cpu_generic_py311_h0000000_0.json" in findings[0].explanation.render()


def test_build_machine_rpath_wins_on_a_mac_that_has_that_folder(arm64_env, tmp_path):
    """torch 2.5.1's _C.so tries /Users/runner/work/_temp/anaconda/envs/wheel_py311/lib before @loader_path/lib."""
    import shutil

    builder, pkg = arm64_env
    root = system_root(tmp_path / "root", "14.5")
    stray = root / "Users/runner/work/_temp/anaconda/envs/wheel_py311/lib"
    stray.mkdir(parents=True)
    shutil.copy(pkg / "lib" / "libtorch_python.dylib", stray / "libtorch_python.dylib")
    [f] = run_check(builder, "mac_loading", system_root=root)
    assert f.id == "TC456" and f.severity is Severity.WARNING
    assert f.evidence["loads"] == str(stray / "libtorch_python.dylib")
    assert f.evidence["found_by"].startswith("LC_RPATH")
    assert f.evidence["torch_copy"] == str(pkg / "lib" / "libtorch_python.dylib")
    assert f.fixes[0].summary.key == "TC456.fix.remove_copy"


def test_dyld_library_path_copy_of_libc10_wins(arm64_env):
    import shutil

    builder, pkg = arm64_env
    other = builder.prefix / "old_torch_lib"
    other.mkdir()
    shutil.copy(pkg / "lib" / "libc10.dylib", other / "libc10.dylib")
    findings = run_check(builder, "mac_loading", env={"DYLD_LIBRARY_PATH": str(other)})
    assert [f.id for f in findings] == ["TC456"]
    assert findings[0].evidence["loads"] == str(other / "libc10.dylib")
    assert findings[0].fixes[0].summary.key == "TC456.fix.unset_dyld"


def test_dyld_insert_libraries_of_another_torch_library_is_an_error_with_the_entry_to_remove(arm64_env):
    """macOS's LD_PRELOAD: the inserted libc10.dylib loads before python; torch's own copy is never used."""
    import shutil

    from conda_torchcheck.causes import follow_consequences

    builder, pkg = arm64_env
    other = builder.prefix.parent / "old_torch_lib"
    other.mkdir()
    shutil.copy(pkg / "lib" / "libc10.dylib", other / "libc10.dylib")
    inserted = f"/opt/tools/libtrace.dylib:{other / 'libc10.dylib'}"
    [f] = run_check(builder, "mac_loading", env={"DYLD_INSERT_LIBRARIES": inserted})
    assert (f.id, f.title.key) == ("TC456", "TC456.inserted.title")
    assert f.evidence["torch_copy"] == str(pkg / "lib" / "libc10.dylib")
    assert f.fixes[0].commands == ('export DYLD_INSERT_LIBRARIES="/opt/tools/libtrace.dylib"',)
    [grouped] = follow_consequences([f], str(pkg))
    assert grouped.severity is Severity.ERROR  # another torch's library in the process
    # torch's own file inserted, or a library torch does not ship: nothing to say
    assert run_check(builder, "mac_loading", env={"DYLD_INSERT_LIBRARIES": str(pkg / "lib" / "libc10.dylib")}) == []
    assert run_check(builder, "mac_loading", env={"DYLD_INSERT_LIBRARIES": "/opt/tools/libtrace.dylib"}) == []


def test_libc10_from_torch_241_beside_torch_251_is_symbol_not_found(arm64_env):
    """Two builds mixed: the real 2.4.1 libc10.dylib lacks symbols the 2.5.1 dylibs bind to it."""
    import os

    from tests.realdata import extract

    builder, pkg = arm64_env
    old = extract("torch-2.4.1-macos-arm64", ("torch/lib/libc10.dylib",)) / "torch" / "lib" / "libc10.dylib"
    os.unlink(pkg / "lib" / "libc10.dylib")
    os.link(old, pkg / "lib" / "libc10.dylib")
    assert run_check(builder, "mac_loading") == []  # it loads: the file is there, right architecture
    findings = run_check(builder, "mac_symbols")
    assert findings and {f.id for f in findings} == {"TC457"}
    cpu = next(f for f in findings if f.evidence["required_by"].endswith("libtorch_cpu.dylib"))
    assert cpu.evidence["expected_in"] == str(pkg / "lib" / "libc10.dylib") and cpu.evidence["count"] == 5
    assert "__ZN3c1019getStringToDtypeMapEv" in cpu.evidence["symbols"]
    assert cpu.evidence["dyld_message"].startswith("Symbol not found: __ZN3c10")
    assert "Expected in:     " in cpu.evidence["dyld_message"]


def test_healthy_layout_has_no_symbol_misses(arm64_env):
    builder, _pkg = arm64_env
    assert run_check(builder, "mac_symbols") == []
