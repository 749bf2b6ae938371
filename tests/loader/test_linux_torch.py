"""The real torch 2.13.0+cpu wheel laid out as a venv and as a conda env: healthy, with torch's own libraries
removed, and with an incompatible copy on LD_LIBRARY_PATH; resolutions checked against ldd."""

from __future__ import annotations

import pytest

from conda_torchcheck.checks import run_checks
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.inventory import load_environment
from conda_torchcheck.loader import linux
from tests.envbuilder import EnvBuilder
from tests.loader.linux_layouts import FIX, have_ldd, install_real_torch, ldd, resolutions

pytestmark = pytest.mark.realdata


@pytest.fixture(params=["venv", "conda"])
def torch_env(request, tmp_path):
    builder = EnvBuilder(tmp_path / request.param, layout=request.param)
    pkg = install_real_torch(builder)
    return builder, pkg


def context(prefix, **overrides):
    env, host = load_environment(prefix, host_overrides=overrides or None)
    return CheckContext(env, host)


def findings(ctx, *ids):
    return [f for f in run_checks(ctx, only=list(ids) or ["TC4", "TC5", "TC903"])]


def dep_of(graph, name):
    for _m, dep in graph.iter_edges():
        if dep.name == name:
            return dep
    raise AssertionError(name)


def test_healthy_layout_loads_without_errors(torch_env):
    builder, pkg = torch_env
    ctx = context(builder.prefix)
    load = linux.torch_load(ctx)
    assert load.first_error is None
    assert not linux.torch_symbol_misses(ctx)
    gomp = dep_of(load.graph, "libgomp.so.1")
    assert gomp.resolution.path == pkg / "lib" / "libgomp.so.1" and gomp.resolution.found_by.step == "runpath"
    c_module = next(
        p for p in load.preloaded + [m.path for m in load.graph.modules.values()] if p.name.startswith("_C.")
    )
    assert c_module.parent == pkg
    assert not [f for f in findings(ctx) if f.severity.value == "error"]


@pytest.mark.skipif(not have_ldd(), reason="ldd (glibc) is not available")
def test_c_module_closure_matches_ldd(torch_env):
    builder, pkg = torch_env
    ctx = context(builder.prefix)
    c_module = next(pkg.glob("_C.cpython-311-*.so"))
    ours = resolutions(linux.build_graph_for_file(ctx, c_module))
    real = ldd(c_module)
    assert set(real) <= set(ours) | {"linux-vdso.so.1"}
    for name, path in real.items():
        if name in ours:
            assert ours[name] == path, name


def test_missing_torch_library_is_reported_with_chain_and_places(torch_env):
    builder, pkg = torch_env
    (pkg / "lib" / "libshm.so").unlink()
    ctx = context(builder.prefix)
    found = [f for f in findings(ctx) if f.id == "TC401"]
    assert len(found) == 1
    f = found[0]
    assert f.severity.value == "error"
    ev = f.evidence
    assert ev["library"] == "libshm.so"
    assert [p.rsplit("/", 1)[-1] for p in ev["chain"][-3:]] == [
        "_C.cpython-311-x86_64-linux-gnu.so",
        "libtorch_python.so",
        "libshm.so",
    ]
    assert ev["searched"][0].startswith(f"runpath {pkg / 'lib'}")
    assert ev["loader_message"] == "libshm.so: cannot open shared object file: No such file or directory"
    assert ev["reported_first"] is True
    assert "--force-reinstall --no-deps" in f.fixes[0].commands[0] and "whl/cpu" in f.fixes[0].commands[0]


def test_removed_libgomp_falls_back_to_the_system_copy(torch_env):
    builder, pkg = torch_env
    ctx0 = context(builder.prefix)
    cache = linux.search_context(ctx0.env, ctx0.host).cache
    if cache is None or cache.lookup("libgomp.so.1") is None:
        pytest.skip("this host has no system libgomp.so.1 in ld.so.cache")
    (pkg / "lib" / "libgomp.so.1").unlink()
    ctx = context(builder.prefix)
    load = linux.torch_load(ctx)
    assert load.first_error is None
    dep = dep_of(load.graph, "libgomp.so.1")
    assert dep.resolution.found_by.step == "ld.so.cache"
    got = findings(ctx)
    assert not [f for f in got if f.id in ("TC401", "TC402")]
    info = [f for f in got if f.id == "TC406"]
    assert len(info) == 1 and info[0].severity.value == "info"
    assert {"GOMP_4.0", "OMP_1.0"} <= set(info[0].evidence["versions_needed"])
    assert set(info[0].evidence["versions_needed"]) <= set(info[0].evidence["versions_defined"])


def test_old_libgomp_on_ld_library_path_shadows_torch_copy(torch_env):
    builder, pkg = torch_env
    ctx = context(builder.prefix, LD_LIBRARY_PATH=str(FIX / "gomp_old"))
    got = findings(ctx)
    v = [f for f in got if f.id == "TC402"]
    assert len(v) == 1 and v[0].severity.value == "error"
    assert v[0].evidence["version"] == "GOMP_4.0"
    assert v[0].evidence["loaded_copy"] == str(FIX / "gomp_old" / "libgomp.so.1")
    assert "first found by ld_library_path" in v[0].evidence["found_by"]
    assert any(str(pkg / "lib" / "libgomp.so.1") in c for c in v[0].evidence["copies_that_provide_it"])
    assert v[0].fixes[0].kind == "env" and v[0].fixes[0].commands == ("unset LD_LIBRARY_PATH",)
    s = [f for f in got if f.id == "TC404"]
    assert len(s) == 1 and s[0].evidence["shadowed_copy"] == str(pkg / "lib" / "libgomp.so.1")


def test_foreign_host_makes_no_system_claims(torch_env):
    builder, _pkg = torch_env
    env, host = load_environment(builder.prefix, use_live_host=False)
    ctx = CheckContext(env, host)
    load = linux.torch_load(ctx)
    assert load.first_error is None
    libc = dep_of(load.graph, "libc.so.6")
    assert libc.resolution.assumed and libc.resolution.path is None
    assert any("another machine" in n for n in load.graph.notes)
    assert not [f for f in findings(ctx) if f.severity.value == "error"]
