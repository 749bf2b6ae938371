"""Activation scripts in a prefix: facts, install / status / remove, TC810, and the ``hooks`` verb."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.cli.main import main
from conda_torchcheck.errors import TargetError
from conda_torchcheck.hooks.activation import check as tc810
from conda_torchcheck.hooks.activation import install, render
from conda_torchcheck.hooks.activation.facts import elf_search_tags, facts_for
from conda_torchcheck.inventory import find_torch, load_environment

# gcc-built fixtures (tests/fixtures/elf/build.sh): same library, DT_RUNPATH or DT_RPATH
PRECEDENCE = Path(__file__).resolve().parents[1] / "fixtures" / "elf" / "prebuilt" / "precedence"
RUNPATH_LIB = (PRECEDENCE / "librunp.so").read_bytes()
RPATH_LIB = (PRECEDENCE / "librp.so").read_bytes()


def tree(prefix: Path) -> set[str]:
    return {p.relative_to(prefix).as_posix() for p in prefix.rglob("*")}


def linux_pip_env(make_env, torch_lib: bytes = RUNPATH_LIB):
    b = make_env(os="linux", layout="conda", name="linux env")
    b.pip_torch("2.5.1", cuda="12.4")
    lib = b.site_packages / "torch" / "lib"
    lib.mkdir()
    (lib / "libtorch_cpu.so").write_bytes(torch_lib)
    (lib / "libc10.so").write_bytes(torch_lib)
    (lib / "libgomp-a34b3233.so.1").write_bytes(b"")  # not a CUDA/torch-core name: not watched
    nv = b.site_packages / "nvidia" / "cublas" / "lib"
    nv.mkdir(parents=True)
    for name in ("libcublas.so.12", "libcublasLt.so.12", "libcublas.so.12.4.5.8"):
        (nv / name).write_bytes(b"")
    return b


def windows_conda_env(make_env):
    b = make_env(os="windows", layout="conda", name="win env")
    b.conda_pytorch("2.5.1", "cuda124_py311h0000000_300", channel="conda-forge", cuda="12.4")
    b.conda_record(
        "libtorch",
        "2.5.1",
        "cuda124_h0000000_300",
        files={"Library/bin/torch_cpu.dll": b"MZ", "Library/bin/c10.dll": b"MZ"},
    )
    b.conda_record("intel-openmp", "2024.2.1", "h57928b3_1083", files={"Library/bin/libiomp5md.dll": b"MZ"})
    b.conda_record(
        "vc14_runtime",
        "14.42.34433",
        "he29a5d6_23",
        files={"vcruntime140.dll": b"MZ", "Library/bin/vcruntime140.dll": b"MZ"},
    )
    b.conda_record("zlib", "1.3.1", "h2466b09_2", files={"Library/bin/zlib.dll": b"MZ"})
    return b


def facts_of(prefix: Path):
    env, _ = load_environment(prefix, use_live_host=False)
    return facts_for(env, find_torch(env))


# --- facts ---------------------------------------------------------------------------------------------------


def test_elf_search_tags():
    assert elf_search_tags_of(RUNPATH_LIB) == (False, True)
    assert elf_search_tags_of(RPATH_LIB) == (True, False)
    assert elf_search_tags_of(b"MZ not an elf") is None


def elf_search_tags_of(data: bytes, tmp=Path("/tmp")):
    import tempfile

    with tempfile.NamedTemporaryFile(delete=False) as fh:
        fh.write(data)
    try:
        return elf_search_tags(Path(fh.name))
    finally:
        Path(fh.name).unlink()


def test_linux_runpath_torch_watches_cuda_and_torch_libraries(make_env):
    b = linux_pip_env(make_env)
    facts = facts_of(b.prefix)
    assert facts.os == "linux"
    assert {"libcublas.so.12", "libcublasLt.so.12", "libtorch_cpu.so", "libc10.so"} <= set(facts.sonames)
    assert "libcublas.so.12.4.5.8" not in facts.sonames and "libgomp-a34b3233.so.1" not in facts.sonames
    assert "lib/python3.11/site-packages/nvidia/cublas/lib" in facts.own_lib_dirs
    assert "lib/python3.11/site-packages/torch/lib" in facts.own_lib_dirs


def test_linux_rpath_only_torch_cannot_be_shadowed_by_ld_library_path(make_env):
    facts = facts_of(linux_pip_env(make_env, torch_lib=RPATH_LIB).prefix)
    assert facts.sonames == () and facts.own_lib_dirs == ()


def test_windows_dll_names_come_from_torch_related_records_minus_the_python_folder(make_env):
    facts = facts_of(windows_conda_env(make_env).prefix)
    assert facts.os == "windows"
    assert {"torch_cpu.dll", "c10.dll", "libiomp5md.dll"} <= set(facts.dll_names)
    assert "vcruntime140.dll" not in facts.dll_names  # python.exe's folder is searched first
    assert "zlib.dll" not in facts.dll_names  # not a torch-related package


def test_dll_search_mode_follows_the_python_build(make_env):
    b = make_env(os="windows", layout="conda", name="py312", python="3.12.7")
    assert facts_of(b.prefix).dll_search_mode == "ignored"  # conda-forge python >= 3.11 ignores the variable
    b = make_env(os="windows", layout="conda", name="py310", python="3.10.14")
    assert facts_of(b.prefix).dll_search_mode == "active"


# --- install / status / remove -------------------------------------------------------------------------------


def test_install_status_remove_leaves_nothing_behind(make_env):
    b = linux_pip_env(make_env)
    before = tree(b.prefix)
    assert not install.status(b.prefix).installed_any
    result = install.install(b.prefix)
    assert sorted(result.written) == ["zz_conda_torchcheck.fish", "zz_conda_torchcheck.sh"]
    state = install.status(b.prefix, facts_of(b.prefix))
    assert state.up_to_date and state.to_dict()["files"]["zz_conda_torchcheck.sh"] == "current"
    assert install.install(b.prefix).written == []  # idempotent
    removed = install.remove(b.prefix)
    assert sorted(removed.removed) == ["zz_conda_torchcheck.fish", "zz_conda_torchcheck.sh"]
    assert removed.removed_dirs == ["etc/conda/activate.d", "etc/conda", "etc"]
    assert tree(b.prefix) == before


def test_remove_keeps_folders_that_existed_and_other_scripts(make_env):
    b = linux_pip_env(make_env)
    other = b.write("etc/conda/activate.d/cuda-nvcc_activate.sh", "export CUDA_HOME=x\n")
    install.install(b.prefix)
    install.remove(b.prefix)
    assert other.exists()
    assert sorted(p.name for p in other.parent.iterdir()) == ["cuda-nvcc_activate.sh"]


def test_windows_env_gets_four_scripts_and_tc810_when_torch_changes(make_env):
    b = windows_conda_env(make_env)
    install.install(b.prefix)
    names = sorted(p.name for p in install.activate_dir(b.prefix).iterdir())
    assert names == [render.filename(e) for e in (".bat", ".fish", ".ps1", ".sh")]
    env, host = load_environment(b.prefix, use_live_host=False)
    assert list(tc810.run(CheckContext(env, host))) == []  # negative: current scripts
    b.conda_record("cudnn", "9.3.0.75", "h0000000_0", files={"Library/bin/cudnn64_9.dll": b"MZ"})
    env, host = load_environment(b.prefix, use_live_host=False)
    found = list(tc810.run(CheckContext(env, host)))
    assert [f.id for f in found] == ["TC810"]
    fix = found[0].fixes[0]
    assert fix.safe_automatic and fix.commands[0].startswith("conda torchcheck hooks install -p ")
    install.install(b.prefix)
    env, host = load_environment(b.prefix, use_live_host=False)
    assert list(tc810.run(CheckContext(env, host))) == []
    assert b"cudnn64_9.dll" in (install.activate_dir(b.prefix) / render.filename(".bat")).read_bytes()


def test_tc810_is_silent_without_scripts(make_env):
    b = windows_conda_env(make_env)
    env, host = load_environment(b.prefix, use_live_host=False)
    assert list(tc810.run(CheckContext(env, host))) == []


def test_a_foreign_file_with_our_name_is_never_overwritten_or_deleted(make_env):
    b = linux_pip_env(make_env)
    foreign = b.write("etc/conda/activate.d/" + render.filename(".sh"), "echo mine\n")
    with pytest.raises(TargetError):
        install.install(b.prefix)
    install.remove(b.prefix)
    assert foreign.read_text() == "echo mine\n"


def test_scripts_of_another_os_are_replaced(make_env):
    b = linux_pip_env(make_env)
    install.install(b.prefix)
    stray = install.activate_dir(b.prefix) / render.filename(".bat")
    stray.write_bytes(render.render(".bat", facts_of(b.prefix)))
    assert "stray" in install.status(b.prefix, facts_of(b.prefix)).to_dict()["files"].values()
    assert install.install(b.prefix).removed == [render.filename(".bat")]
    assert not stray.exists()


def test_a_venv_is_refused(make_env):
    b = make_env(os="linux", layout="venv", name="venv")
    with pytest.raises(TargetError, match="not a conda environment"):
        install.install(b.prefix)


# --- the `hooks` verb (standalone) ---------------------------------------------------------------------------


def test_hooks_verb_install_status_remove(make_env, capsys):
    b = linux_pip_env(make_env)
    assert main(["hooks", "status", "-p", str(b.prefix), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["installed"] is False and doc["files"]["zz_conda_torchcheck.sh"] == "missing"
    assert main(["hooks", "install", "-p", str(b.prefix)]) == 0
    assert "Installed activation checks in" in capsys.readouterr().out
    assert main(["hooks", "status", "-p", str(b.prefix)]) == 0
    out = capsys.readouterr().out
    assert "zz_conda_torchcheck.sh" in out and "installed, up to date" in out
    assert main(["hooks", "remove", "-p", str(b.prefix), "--lang", "zh_CN"]) == 0
    assert "已从" in capsys.readouterr().out
    assert main(["hooks", "remove", "-p", str(b.prefix), "--lang", "en"]) == 0
    assert "No conda-torchcheck activation checks" in capsys.readouterr().out


def test_hooks_verb_on_a_non_env_is_a_usage_error(tmp_path, capsys):
    assert main(["hooks", "install", "-p", str(tmp_path / "missing")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_check_knows_the_script_stem_without_importing_the_renderer():
    from conda_torchcheck.hooks.activation import check, render

    assert check.SCRIPT_STEM == render.STEM
