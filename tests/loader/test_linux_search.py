"""The ld.so search model on gcc-built fixtures, checked against the real loader (ldd, ctypes) where present."""

from __future__ import annotations

import os
import shutil
import struct
from pathlib import Path

import pytest

from conda_torchcheck.loader import linux
from tests.loader.linux_layouts import FIX, dlopen, file_ctx, have_ldd, ldd, resolutions

P = FIX / "precedence"
needs_ldd = pytest.mark.skipif(not have_ldd(), reason="ldd (glibc) is not available")


def graph_of(path: Path, **kwargs):
    return linux.build_graph_for_file(file_ctx(**kwargs), path)


def found(graph, name):
    for _m, dep in graph.iter_edges():
        if dep.name == name:
            return dep
    raise AssertionError(name)


def test_runpath_loses_to_ld_library_path_rpath_does_not():
    llp = str(P / "b")
    rp, runp = graph_of(P / "librp.so", llp=llp), graph_of(P / "librunp.so", llp=llp)
    d_rp, d_runp = found(rp, "libdep.so.1"), found(runp, "libdep.so.1")
    assert d_rp.resolution.path == P / "a" / "libdep.so.1" and d_rp.resolution.found_by.step == "rpath"
    assert d_runp.resolution.path == P / "b" / "libdep.so.1"
    assert d_runp.resolution.found_by.step == "ld_library_path"
    plain = found(graph_of(P / "librunp.so"), "libdep.so.1")
    assert plain.resolution.found_by.step == "runpath" and plain.resolution.path == P / "a" / "libdep.so.1"


@needs_ldd
def test_precedence_matches_ldd():
    for name in ("librp.so", "librunp.so"):
        for llp in (None, str(P / "b")):
            ours = resolutions(graph_of(P / name, llp=llp))
            real = ldd(P / name, {"LD_LIBRARY_PATH": llp} if llp else None)
            assert ours["libdep.so.1"] == real["libdep.so.1"], (name, llp)


def test_runpath_applies_to_direct_dependencies_only():
    g = graph_of(P / "libouter_runpath.so")
    leaf = found(g, "libleaf.so.1")
    assert leaf.missing
    steps = [s.step for s in leaf.searched]
    assert "runpath" not in steps  # libmid.so.1 has no search path of its own
    assert steps[-1] == "default-dirs"
    chain = g.chain_to(P / "deep" / "libmid.so.1")
    assert [p.name for p in chain] == ["libouter_runpath.so", "libmid.so.1"]
    # DT_RPATH is inherited through the loader chain
    g2 = graph_of(P / "libouter_rpath.so")
    leaf2 = found(g2, "libleaf.so.1")
    assert leaf2.resolution.path == P / "deep" / "libleaf.so.1"
    assert leaf2.resolution.found_by.step == "rpath" and "libouter_rpath.so" in leaf2.resolution.found_by.note


@needs_ldd
def test_runpath_direct_only_matches_ldd():
    assert ldd(P / "libouter_runpath.so")["libleaf.so.1"] is None
    assert resolutions(graph_of(P / "libouter_runpath.so"))["libleaf.so.1"] is None
    assert (
        resolutions(graph_of(P / "libouter_rpath.so"))["libleaf.so.1"] == ldd(P / "libouter_rpath.so")["libleaf.so.1"]
    )


def test_version_not_found_in_the_copy_that_wins():
    load = linux.load_file(file_ctx(), FIX / "version" / "libapp.so")
    failures = [(o.path.name, f, v, t.path) for s in load.steps for o, f, v, t in s.version_failures]
    assert failures == [("libapp.so", "libv.so.1", "V_2.0", FIX / "version" / "old" / "libv.so.1")]
    assert load.first_error.endswith(
        "version `V_2.0' not found (required by " + str(FIX / "version" / "libapp.so") + ")"
    )
    dep = found(load.graph, "libv.so.1")
    assert any("V_2.0" in p for p in dep.problems)
    # LD_LIBRARY_PATH beats DT_RUNPATH: the new copy wins and the need is met
    ok = linux.load_file(file_ctx(llp=str(FIX / "version" / "new")), FIX / "version" / "libapp.so")
    assert ok.first_error is None
    # ... but not DT_RPATH
    still = linux.load_file(file_ctx(llp=str(FIX / "version" / "new")), FIX / "version" / "libapp_rpath.so")
    assert still.first_error is not None and "V_2.0" in still.first_error


def test_version_verdict_matches_the_real_loader():
    for name, llp in (("libapp.so", None), ("libapp.so", "new"), ("libapp_rpath.so", "new")):
        env = {"LD_LIBRARY_PATH": str(FIX / "version" / llp)} if llp else None
        real = dlopen(FIX / "version" / name, env)
        ours = linux.load_file(file_ctx(llp=env["LD_LIBRARY_PATH"] if env else None), FIX / "version" / name)
        assert (real is None) == (ours.first_error is None), (name, llp, real, ours.first_error)
        if real is not None:
            assert real.endswith(ours.first_error.split(": ", 1)[1]), (real, ours.first_error)


def test_origin_is_the_directory_of_the_path_opened_not_the_symlink_target(tmp_path):
    (tmp_path / "old").mkdir()
    shutil.copy(FIX / "version" / "new" / "libv.so.1", tmp_path / "old" / "libv.so.1")
    link = tmp_path / "libapp.so"
    link.symlink_to(FIX / "version" / "libapp.so")
    load = linux.load_file(file_ctx(), link)
    # the executable's origin is its real path (as /proc/self/exe); a dlopened library's is the path itself
    assert found(load.graph, "libv.so.1").resolution.path == FIX / "version" / "old" / "libv.so.1"
    lib = linux.LdSo(
        linux.search_context(None, file_ctx().host), linux._new_graph(linux.search_context(None, file_ctx().host))
    )
    lib.start_process(None)
    step = lib.dlopen(link, "test", rtld_global=False)
    assert not step.failed
    assert found(lib.graph, "libv.so.1").resolution.path == tmp_path / "old" / "libv.so.1"
    assert dlopen(link) is None  # the real loader agrees: the new copy next to the symlink was used


def _patch_machine(src: Path, dst: Path, machine: int) -> None:
    data = bytearray(src.read_bytes())
    data[18:20] = struct.pack("<H", machine)
    dst.write_bytes(bytes(data))


def test_wrong_machine_candidate_is_skipped(tmp_path):
    _patch_machine(FIX / "version" / "new" / "libv.so.1", tmp_path / "libv.so.1", 0xB7)
    load = linux.load_file(file_ctx(llp=str(tmp_path)), FIX / "version" / "libapp.so")
    dep = found(load.graph, "libv.so.1")
    assert dep.resolution.path == FIX / "version" / "old" / "libv.so.1"
    assert any(s.step == "ld_library_path" and "aarch64" in s.note for s in dep.searched)
    real = dlopen(FIX / "version" / "libapp.so", {"LD_LIBRARY_PATH": str(tmp_path)})
    assert real is not None and "V_2.0" in real  # ld.so skipped the aarch64 copy too


def test_invalid_candidate_stops_the_load(tmp_path):
    (tmp_path / "libv.so.1").write_bytes(b"")
    load = linux.load_file(file_ctx(llp=str(tmp_path)), FIX / "version" / "libapp.so")
    module = load.graph.module(tmp_path / "libv.so.1")
    assert module is not None and module.unreadable
    assert load.first_error is not None
    real = dlopen(FIX / "version" / "libapp.so", {"LD_LIBRARY_PATH": str(tmp_path)})
    assert real is not None and "too short" in real


def test_ld_preload_satisfies_a_needed_soname():
    ctx = file_ctx(preload=str(FIX / "symbol" / "new" / "libprov.so.1"))
    load = linux.load_file(ctx, FIX / "symbol" / "libuser.so")
    dep = found(load.graph, "libprov.so.1")
    assert dep.resolution.found_by.step == "already-loaded"
    assert dep.resolution.path == FIX / "symbol" / "new" / "libprov.so.1"
    assert not linux.check_symbols(load)
    assert dlopen(FIX / "symbol" / "libuser.so", {"LD_PRELOAD": str(FIX / "symbol" / "new" / "libprov.so.1")}) is None


def test_undefined_symbol_against_the_real_loader():
    load = linux.load_file(file_ctx(), FIX / "symbol" / "libuser.so")
    misses = linux.check_symbols(load)
    assert [(m.name, m.required_by.name) for m in misses] == [("prov_new", "libuser.so")]
    assert dlopen(FIX / "symbol" / "libuser.so").endswith("undefined symbol: prov_new")
    good = linux.load_file(file_ctx(llp=str(FIX / "symbol" / "new")), FIX / "symbol" / "libuser.so")
    assert not linux.check_symbols(good)


def test_versioned_undefined_symbol_from_an_older_copy_on_ld_library_path():
    C = FIX / "cuda"
    old = linux.load_file(file_ctx(llp=str(C / "nvjitlink-12.1")), C / "libcusparse.so.12")
    misses = linux.check_symbols(old)
    assert [(m.name, m.version) for m in misses] == [("__nvJitLinkComplete_12_4", "libnvJitLink.so.12")]
    real = dlopen(C / "libcusparse.so.12", {"LD_LIBRARY_PATH": str(C / "nvjitlink-12.1")})
    assert real.endswith("undefined symbol: __nvJitLinkComplete_12_4, version libnvJitLink.so.12")
    new = linux.load_file(file_ctx(llp=str(C / "nvjitlink-12.4")), C / "libcusparse.so.12")
    assert not linux.check_symbols(new)
    assert dlopen(C / "libcusparse.so.12", {"LD_LIBRARY_PATH": str(C / "nvjitlink-12.4")}) is None


def test_foreign_host_assumes_system_libraries_and_says_so():
    load = linux.load_file(file_ctx(live=False), FIX / "symbol" / "libuser.so")
    prov = found(load.graph, "libprov.so.1")
    assert prov.resolution.path == FIX / "symbol" / "old" / "libprov.so.1"  # RUNPATH needs no system facts
    g = linux.load_file(file_ctx(live=False), P / "libouter_runpath.so").graph
    leaf = found(g, "libleaf.so.1")
    assert leaf.missing and leaf.searched[-1].step == "unknown-system"
    assert any("unknown" in n or "another machine" in n for n in g.notes)


def test_cache_entries_win_over_default_dirs_and_stale_entries_are_skipped(tmp_path):
    from conda_torchcheck.loader.ldcache import LdCache

    search = linux.search_context(None, file_ctx().host)
    fake = LdCache("test", {"libleaf.so.1": str(P / "deep" / "libleaf.so.1"), "libgone.so.1": str(tmp_path / "x")})
    search = search.replace(cache=fake)
    ldso = linux.LdSo(search, linux._new_graph(search))
    ldso.start_process(P / "libouter_runpath.so")
    leaf = found(ldso.graph, "libleaf.so.1")
    assert leaf.resolution.found_by.step == "ld.so.cache"
    target, _how, searched, _assumed = ldso.search_needed("libgone.so.1", ldso.main)
    assert target is None and any("stale" in s.note for s in searched)


def test_origin_and_lib_tokens_expand():
    search = linux.search_context(None, file_ctx().host)
    ldso = linux.LdSo(search, linux._new_graph(search))
    ldso.start_process(P / "librp.so")
    assert ldso.expand("$ORIGIN/a", ldso.main) == str(P / "a")
    assert ldso.expand("${ORIGIN}/../$LIB", ldso.main) == str(P) + "/../" + search.layout.lib_token
    assert ldso.expand("/opt/$PLATFORM/lib", ldso.main) == f"/opt/{search.layout.platform_token}/lib"
    assert ldso.expand("$ORIGINAL", ldso.main) == "$ORIGINAL"  # not a token


def test_relative_search_dirs_are_relative_to_the_working_directory(tmp_path):
    os.symlink(P / "b", tmp_path / "bdir")
    load = linux.load_file(file_ctx(llp="bdir", cwd=tmp_path), P / "librunp.so")
    assert found(load.graph, "libdep.so.1").resolution.path == tmp_path / "bdir" / "libdep.so.1"


def test_torch_preloads_cuda_libraries_from_site_packages_when_global_deps_fail(make_env):
    """libtorch_global_deps.so needs libnccl.so.2, which only site-packages/nvidia/nccl/lib has: the first
    dlopen fails, torch preloads the wheel's copy by full path, and the retry finds it already loaded."""
    from tests.loader.linux_layouts import context, minitorch_env

    builder = make_env(layout="venv")
    pkg = minitorch_env(builder)
    (pkg / "lib" / "libtorch_global_deps.so").write_bytes(
        (FIX / "minitorch" / "cuda" / "libtorch_global_deps.so").read_bytes()
    )
    (pkg / "__init__.py").write_text(
        "def _preload_cuda_deps(err=None):\n    cuda_libs = [\n        ('nccl', 'libnccl.so.*[0-9]'),\n    ]\n\n"
        "def _load_global_deps():\n    pass\n"
    )
    ctx = context(builder.prefix)
    load = linux.torch_load(ctx)
    assert load.first_error is None
    nccl = builder.site_packages / "nvidia" / "nccl" / "lib" / "libnccl.so.2"
    assert load.preloaded == [nccl]
    labels = [s.label for s in load.steps]
    assert labels[1] == linux.GROUP_GLOBAL_DEPS and labels[-2] == linux.GROUP_GLOBAL_DEPS + " (retry)"
    assert load.steps[1].failed and not load.steps[-2].failed
    dep = next(
        d for d in load.graph.module(pkg / "lib" / "libtorch_global_deps.so").dependencies if d.name == "libnccl.so.2"
    )
    assert dep.resolution.found_by.step == "already-loaded" and dep.resolution.path == nccl
    assert any("preloads the CUDA libraries" in n for n in load.graph.notes)
    # without the wheel's file torch raises its own error
    nccl.unlink()
    load = linux.simulate_torch_import(context(builder.prefix))
    assert load.first_error == "libnccl.so.*[0-9] not found in the system path"


@pytest.mark.realdata
def test_torch_load_plan_of_the_real_2_13_init(tmp_path):
    from tests.loader.linux_layouts import torch_root

    pytest.importorskip("tests.realdata")
    plan = linux.torch_load_plan(torch_root() / "torch", "311")
    assert plan.cuda_libs[:2] == (("cublas", "libcublasLt.so.*[0-9]"), ("cublas", "libcublas.so.*[0-9]"))
    assert len(plan.cuda_libs) == 16 and plan.optional_cuda_libs == (("nvtx", "libnvToolsExt.so.*[0-9]"),)
    assert plan.proactive_preload and plan.cuda_major_dir
    assert plan.c_module.name == "_C.cpython-311-x86_64-linux-gnu.so"
    assert plan.global_deps.name == "libtorch_global_deps.so"
