"""The dyld model's rules, one by one, on generated Mach-O images (tests/binaries/machogen.py); each rule's
source is in knowledge/macos_dyld.toml and docs/macos-loading.md."""

from __future__ import annotations

from pathlib import Path

from conda_torchcheck.loader import macos
from conda_torchcheck.loader.graph import LoadGraph
from tests.binaries import machogen as gen
from tests.loader.macos_layouts import system_root


def search(**kw) -> macos.MacSearch:
    kw.setdefault("live", False)
    kw.setdefault("arch", "arm64")
    kw.setdefault("arch_source", "python")
    return macos.MacSearch(**kw)


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def process(tmp: Path, s: macos.MacSearch | None = None, python_rpaths=("@loader_path/../lib",)):
    exe = write(tmp / "bin" / "python3.11", gen.image("arm64", "execute", rpaths=list(python_rpaths)))
    dyld = macos.Dyld(s or search(), LoadGraph("darwin"), tmp)
    dyld.start_process(exe)
    return dyld


def dep(dyld: macos.Dyld, name: str):
    for _m, d in dyld.graph.iter_edges():
        if d.name == name:
            return d
    raise AssertionError(name)


def test_rpath_order_and_the_rpaths_inherited_from_the_loading_chain(tmp_path):
    # _C.so: LC_RPATH /Users/runner/... (the build machine) first, then @loader_path/lib, as torch 2.5.1's
    lib = tmp_path / "sp" / "torch" / "lib"
    write(
        tmp_path / "sp" / "torch" / "_C.so",
        gen.image(
            "arm64",
            "bundle",
            dylibs=["@rpath/libtorch_python.dylib"],
            rpaths=["/Users/runner/work/lib", "@loader_path/lib"],
        ),
    )
    # libtorch_python has only @loader_path; it finds libc10 through its own rpath...
    write(
        lib / "libtorch_python.dylib",
        gen.image(
            install_name="@rpath/libtorch_python.dylib",
            dylibs=["@rpath/libc10.dylib", "@rpath/libextra.dylib"],
            rpaths=["@loader_path"],
        ),
    )
    write(lib / "libc10.dylib", gen.image(install_name="@rpath/libc10.dylib"))
    # ...and libextra.dylib only through python's @loader_path/../lib, inherited down the chain
    write(tmp_path / "lib" / "libextra.dylib", gen.image(install_name="@rpath/libextra.dylib"))
    dyld = process(tmp_path)
    step = dyld.dlopen(tmp_path / "sp" / "torch" / "_C.so", "import")
    assert step.error is None
    py = dep(dyld, "@rpath/libtorch_python.dylib")
    assert [p.directory for p in py.searched] == ["/Users/runner/work/lib/libtorch_python.dylib"]
    assert py.resolution.path == lib / "libtorch_python.dylib" and py.resolution.found_by.step == "LC_RPATH"
    extra = dep(dyld, "@rpath/libextra.dylib")
    # tried: libtorch_python's @loader_path, _C's two rpaths, then python (caller) → found in env/lib
    assert [p.directory for p in extra.searched] == [
        f"{lib}/libextra.dylib",
        "/Users/runner/work/lib/libextra.dylib",
        f"{tmp_path}/sp/torch/lib/libextra.dylib",
    ]
    assert extra.resolution.path == tmp_path / "lib" / "libextra.dylib"


def test_a_miss_lists_every_place_in_dyld_order_and_words(tmp_path):
    lib = tmp_path / "sp" / "torch" / "lib"
    write(
        lib / "libtorch_python.dylib",
        gen.image(
            install_name="@rpath/libtorch_python.dylib",
            dylibs=["@rpath/libc10.dylib"],
            rpaths=["@loader_path"],
            sdk="13.3",
        ),
    )
    dyld = process(tmp_path)
    step = dyld.dlopen(lib / "libtorch_python.dylib", "import", mode=0x2)
    assert step.error.startswith(
        f"dlopen({lib}/libtorch_python.dylib, 0x0002): Library not loaded: @rpath/libc10.dylib"
    )
    assert f"Referenced from: {lib}/libtorch_python.dylib" in step.error
    tried = step.error.split("Reason: tried: ", 1)[1]
    # the caller (python) and the main executable are both on the rpath stack: dyld lists bin/../lib twice
    assert tried == (
        f"'{lib}/libc10.dylib' (no such file), '{tmp_path}/bin/../lib/libc10.dylib' (no such file), "
        f"'{tmp_path}/bin/../lib/libc10.dylib' (no such file), '/usr/local/lib/libc10.dylib' (not examined here), "
        "'/usr/lib/libc10.dylib' (no such file, not in dyld cache)"
    )
    # a failed dlopen unloads what it loaded
    assert [i.path.name for i in dyld.loaded] == ["python3.11"]


def test_no_default_fallback_for_binaries_built_with_the_macos_14_sdk(tmp_path):
    lib = tmp_path / "lib"
    write(lib / "new.dylib", gen.image(install_name="@rpath/new.dylib", dylibs=["@rpath/libx.dylib"], sdk="14.0"))
    dyld = process(tmp_path)
    dyld.dlopen(lib / "new.dylib", "import")
    assert [p.step for p in dep(dyld, "@rpath/libx.dylib").searched] == ["LC_RPATH", "LC_RPATH"]


def test_loader_and_executable_path(tmp_path):
    write(
        tmp_path / "lib" / "a.dylib", gen.image(dylibs=["@loader_path/sub/b.dylib", "@executable_path/../lib/c.dylib"])
    )
    write(tmp_path / "lib" / "sub" / "b.dylib", gen.image(install_name="@rpath/b.dylib"))
    write(tmp_path / "lib" / "c.dylib", gen.image(install_name="/opt/c.dylib"))
    dyld = process(tmp_path)
    assert dyld.dlopen(tmp_path / "lib" / "a.dylib", "x").error is None
    assert dep(dyld, "@loader_path/sub/b.dylib").resolution.found_by.step == "@loader_path"
    assert dep(dyld, "@executable_path/../lib/c.dylib").resolution.path == tmp_path / "lib" / "c.dylib"


def test_dyld_library_path_comes_first_with_the_leaf_name_and_sip_purges_it(tmp_path):
    write(tmp_path / "lib" / "a.dylib", gen.image(dylibs=["@rpath/libz9.dylib"]))
    write(tmp_path / "lib" / "libz9.dylib", gen.image(install_name="@rpath/libz9.dylib"))
    write(tmp_path / "other" / "libz9.dylib", gen.image(install_name="@rpath/libz9.dylib"))
    dyld = process(tmp_path, search(dyld_library_path=(str(tmp_path / "other"),)))
    dyld.dlopen(tmp_path / "lib" / "a.dylib", "x")
    found = dep(dyld, "@rpath/libz9.dylib").resolution
    assert found.path == tmp_path / "other" / "libz9.dylib" and found.found_by.step == "DYLD_LIBRARY_PATH"

    from types import SimpleNamespace

    from conda_torchcheck.inventory.model import HostFacts

    env = SimpleNamespace(python=SimpleNamespace(arch="arm64", executable=Path("/usr/bin/python3")))
    s = macos.search_context(env, HostFacts(live=False, environ={"DYLD_LIBRARY_PATH": str(tmp_path / "other")}))
    assert s.sip_purged and s.dyld_library_path == ()
    env = SimpleNamespace(python=SimpleNamespace(arch="arm64", executable=tmp_path / "bin" / "python3.11"))
    s = macos.search_context(env, HostFacts(live=False, environ={"DYLD_FALLBACK_LIBRARY_PATH": "/a:/b"}))
    assert not s.sip_purged and s.fallback_library_path == ("/a", "/b")


def test_system_dylibs_are_in_the_shared_cache_and_weak_misses_are_not_errors(tmp_path):
    write(
        tmp_path / "lib" / "a.dylib",
        gen.image(
            dylibs=[
                "/usr/lib/libc++.1.dylib",
                ("/System/Library/Frameworks/Metal.framework/Versions/A/Metal", "weak"),
                ("@rpath/libmissing_weak.dylib", "weak"),
                "@rpath/libc++.1.dylib",
            ]
        ),
    )
    dyld = process(tmp_path)
    step = dyld.dlopen(tmp_path / "lib" / "a.dylib", "x")
    assert step.error is None and not step.misses
    libcxx = dep(dyld, "/usr/lib/libc++.1.dylib").resolution
    assert libcxx.path is None and libcxx.found_by.step == "dyld-shared-cache"
    assert dep(dyld, "@rpath/libmissing_weak.dylib").resolution is None
    # @rpath/libc++.1.dylib (torch < 1.6 wheels): found through the /usr/lib fallback, in the cache
    assert dep(dyld, "@rpath/libc++.1.dylib").resolution.found_by.step == "dyld-shared-cache"
    assert not dyld.graph.missing()


def test_rpath_name_already_loaded_by_install_name_is_reused(tmp_path):
    # conda's lib/libomp.dylib loaded first (numpy's openblas), then torch asks for @rpath/libomp.dylib
    write(tmp_path / "lib" / "libomp.dylib", gen.image(install_name="@rpath/libomp.dylib"))
    write(tmp_path / "lib" / "blas.dylib", gen.image(dylibs=["@rpath/libomp.dylib"]))
    write(tmp_path / "t" / "libtorch_cpu.dylib", gen.image(dylibs=["@rpath/libomp.dylib"], rpaths=["@loader_path"]))
    write(tmp_path / "t" / "libomp.dylib", gen.image(install_name="@rpath/libomp.dylib"))
    dyld = process(tmp_path)
    dyld.dlopen(tmp_path / "lib" / "blas.dylib", "numpy")
    dyld.dlopen(tmp_path / "t" / "libtorch_cpu.dylib", "torch")
    omp = [d for m, d in dyld.graph.iter_edges() if m.path.name == "libtorch_cpu.dylib"][0]
    assert omp.resolution.found_by.step == "already-loaded" and omp.resolution.path == tmp_path / "lib" / "libomp.dylib"


def test_wrong_architecture_is_skipped_with_dylds_words_and_the_search_goes_on(tmp_path):
    write(
        tmp_path / "lib" / "a.dylib",
        gen.image(dylibs=["@rpath/libq.dylib"], rpaths=["@loader_path/x86", "@loader_path/fat"]),
    )
    write(tmp_path / "lib" / "x86" / "libq.dylib", gen.image("x86_64", install_name="@rpath/libq.dylib"))
    fat = gen.fat([gen.image("x86_64", install_name="@rpath/libq.dylib"), gen.image(install_name="@rpath/libq.dylib")])
    write(tmp_path / "lib" / "fat" / "libq.dylib", fat)
    dyld = process(tmp_path)
    assert dyld.dlopen(tmp_path / "lib" / "a.dylib", "x").error is None
    q = dep(dyld, "@rpath/libq.dylib")
    assert q.searched[0].note.startswith(
        "mach-o file, but is an incompatible architecture (have 'x86_64', need 'arm64')"
    )
    assert q.resolution.path == tmp_path / "lib" / "fat" / "libq.dylib"
    assert dyld.graph.module(q.resolution.path).extra["archs"] == ["x86_64", "arm64"]
    # an x86_64 process cannot take an arm64-only fat file either
    write(tmp_path / "lib" / "armfat.dylib", gen.fat([gen.image(), gen.image("arm64e")]))
    dyld = process(tmp_path, search(arch="x86_64"))
    err = dyld.dlopen(tmp_path / "lib" / "armfat.dylib", "x").error
    assert "fat file, but missing compatible architecture (have 'arm64,arm64e', need 'x86_64')" in err


def test_minimum_macos_against_the_hosts_system_version(tmp_path):
    root = system_root(tmp_path / "root", "13.6")
    assert macos.read_system_version(root) == "13.6"
    write(tmp_path / "lib" / "new.dylib", gen.image(minos="14.0"))
    dyld = process(tmp_path, search(macos="13.6", system_root=root))
    err = dyld.dlopen(tmp_path / "lib" / "new.dylib", "x").error
    assert err.endswith("(built for macOS 14.0 which is newer than running OS)")
    dyld = process(tmp_path, search(macos="14.5", system_root=root))
    assert dyld.dlopen(tmp_path / "lib" / "new.dylib", "x").error is None


def test_system_root_is_searched_for_folders_outside_the_env(tmp_path):
    root = system_root(tmp_path / "root")
    write(root / "opt" / "homebrew" / "lib" / "libfoo.dylib", gen.image(install_name="/opt/homebrew/lib/libfoo.dylib"))
    write(tmp_path / "env" / "lib" / "a.dylib", gen.image(dylibs=["/opt/homebrew/lib/libfoo.dylib"]))
    dyld = process(tmp_path / "env", search(system_root=root, macos="14.5"))
    assert dyld.dlopen(tmp_path / "env" / "lib" / "a.dylib", "x").error is None
    assert dep(dyld, "/opt/homebrew/lib/libfoo.dylib").resolution.path == root / "opt/homebrew/lib/libfoo.dylib"


def test_corrupt_candidate_is_not_a_mach_o_file(tmp_path):
    write(tmp_path / "lib" / "a.dylib", gen.image(dylibs=["@rpath/libbad.dylib"], rpaths=["@loader_path"]))
    write(tmp_path / "lib" / "libbad.dylib", b"\x00" * 64)
    dyld = process(tmp_path)
    step = dyld.dlopen(tmp_path / "lib" / "a.dylib", "x")
    assert "(not a mach-o file)" in step.error


def test_conda_forge_style_layout_is_clean(make_env):
    """conda-forge's pytorch keeps its dylibs in <prefix>/lib (libtorch), _C.so reaches them by an rpath relative
    to site-packages, and libomp comes from llvm-openmp: a healthy env gives no error or warning from any check."""
    from conda_torchcheck.checks import run_checks
    from conda_torchcheck.findings import Severity
    from tests.checks.tc_helpers import PY_DEP, context

    b = make_env(os="darwin", arch="arm64")
    lib = {
        "lib/libc10.dylib": gen.image(install_name="@rpath/libc10.dylib", dylibs=["/usr/lib/libc++.1.dylib"]),
        "lib/libtorch_cpu.dylib": gen.image(
            install_name="@rpath/libtorch_cpu.dylib",
            dylibs=["@rpath/libc10.dylib", "@rpath/libomp.dylib", "/usr/lib/libSystem.B.dylib"],
            rpaths=["@loader_path"],
        ),
        "lib/libtorch.dylib": gen.image(install_name="@rpath/libtorch.dylib", dylibs=["@rpath/libtorch_cpu.dylib"]),
        "lib/libtorch_python.dylib": gen.image(
            install_name="@rpath/libtorch_python.dylib",
            dylibs=["@rpath/libtorch.dylib", "@rpath/libc10.dylib"],
            rpaths=["@loader_path"],
        ),
    }
    b.conda_record("libtorch", "2.5.1", "cpu_generic_h0000000_0", files=lib)
    b.conda_record(
        "llvm-openmp", "19.1.4", "hdb05f8b_0", files={"lib/libomp.dylib": gen.image(install_name="@rpath/libomp.dylib")}
    )
    b.conda_pytorch("2.5.1", "cpu_generic_py311_h0000000_0", depends=PY_DEP)
    write(
        b.site_packages / "torch" / "_C.cpython-311-darwin.so",
        gen.image("arm64", "bundle", dylibs=["@rpath/libtorch_python.dylib"], rpaths=["@loader_path/../../.."]),
    )
    (b.site_packages / "torch" / "__init__.py").write_text("def _load_global_deps():\n    pass\n")
    write(
        b.site_packages / "torch" / "lib" / "libtorch_global_deps.dylib",
        gen.image(dylibs=["@rpath/libtorch_cpu.dylib"], rpaths=["@loader_path/../../../.."]),
    )
    ctx = context(b)
    load = macos.torch_load(ctx)
    assert load.first_error is None, load.first_error
    omp = next(i for i in load.dyld.loaded if i.path.name == "libomp.dylib")
    assert omp.path == b.prefix / "lib" / "libomp.dylib"
    bad = [f"{f.id} {f.title.render()}" for f in run_checks(ctx) if f.severity in (Severity.ERROR, Severity.WARNING)]
    assert bad == []


def test_a_library_only_outside_the_env_is_a_warning_offline_and_an_error_when_examined(make_env, tmp_path):
    """Not torch's own, and some places tried lie on the Mac the env runs on: TC450 foreign (warning); with
    --system-root DIR those places are looked at, and the miss is an error."""
    from conda_torchcheck.findings import Severity
    from tests.checks.tc_helpers import run_check

    b = make_env(os="darwin", arch="arm64", layout="venv")
    pkg = b.site_packages / "torch"
    write(pkg / "__init__.py", b"def _load_global_deps(): pass\n")
    write(pkg / "lib" / "libtorch_global_deps.dylib", gen.image(dylibs=["/opt/homebrew/opt/libomp/lib/libomp.dylib"]))
    write(pkg / "_C.cpython-311-darwin.so", gen.image("arm64", "bundle"))
    b.dist("torch", "2.5.1", files={"torch/version.py": b"__version__ = '2.5.1'\n"})
    [f] = run_check(b, "mac_loading")
    assert f.id == "TC450" and f.severity is Severity.WARNING and f.title.key == "TC450.foreign.title"
    assert f.evidence["tried"][0].startswith("install-name '/opt/homebrew/opt/libomp/lib/libomp.dylib' (not examined")
    [f] = run_check(b, "mac_loading", system_root=system_root(tmp_path / "root", "14.5"))
    assert f.severity is Severity.ERROR and f.evidence["tried"][0].endswith("(no such file)")


def test_a_venv_of_apples_python_is_protected_so_dyld_variables_are_purged(tmp_path):
    venv_python = tmp_path / "venv" / "bin" / "python3"
    venv_python.parent.mkdir(parents=True)
    venv_python.symlink_to("/usr/bin/python3")
    assert macos.is_protected(venv_python)
    assert not macos.is_protected(tmp_path / "bin" / "python3.11")
    assert not macos.is_protected("/usr/local/bin/python3")
