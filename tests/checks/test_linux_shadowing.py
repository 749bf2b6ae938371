"""TC404: LD_LIBRARY_PATH copies that shadow what would load otherwise."""

from __future__ import annotations

import os
import shutil

from tests.loader.linux_layouts import FIX, context, minitorch_env, run_ids


def test_older_copy_on_ld_library_path_is_reported(make_env):
    builder = make_env(layout="venv")
    minitorch_env(builder, nccl="2.21")
    site = builder.site_packages
    [f] = run_ids(context(builder.prefix, LD_LIBRARY_PATH=f"/nonexistent:{FIX / 'cuda' / 'nccl-2.18'}"), "TC404")
    assert f.severity.value == "warning"
    assert f.evidence["loaded_copy"] == str(FIX / "cuda" / "nccl-2.18" / "libnccl.so.2")
    assert os.path.normpath(f.evidence["shadowed_copy"]) == str(site / "nvidia" / "nccl" / "lib" / "libnccl.so.2")
    assert f.fixes[0].commands == ('export LD_LIBRARY_PATH="/nonexistent"',)


def test_identical_copy_is_not_noise(make_env, tmp_path):
    builder = make_env(layout="venv")
    minitorch_env(builder, nccl="2.21")
    same = tmp_path / "same"
    same.mkdir()
    shutil.copy(FIX / "cuda" / "nccl-2.21" / "libnccl.so.2", same / "libnccl.so.2")
    assert run_ids(context(builder.prefix, LD_LIBRARY_PATH=str(same)), "TC404") == []


def test_no_ld_library_path_no_finding(make_env):
    builder = make_env(layout="venv")
    minitorch_env(builder)
    assert run_ids(context(builder.prefix), "TC404") == []


def test_a_preloaded_copy_is_reported_with_the_preload_to_remove(make_env):
    builder = make_env(layout="venv")
    minitorch_env(builder, nccl="2.21")
    old = FIX / "cuda" / "nccl-2.18" / "libnccl.so.2"
    [f] = run_ids(context(builder.prefix, LD_PRELOAD=f"{old} /nonexistent/libx.so"), "TC404")
    assert "LD_PRELOAD" in f.title.render()
    assert f.evidence["loaded_copy"] == str(old)
    assert os.path.normpath(f.evidence["shadowed_copy"]).endswith("nvidia/nccl/lib/libnccl.so.2")
    assert f.fixes[0].commands == ('export LD_PRELOAD="/nonexistent/libx.so"',)


def test_a_preload_nothing_torch_loads_asks_for_is_not_reported(make_env, tmp_path):
    from tests.binaries.elfgen import make_elf

    builder = make_env(layout="venv")
    minitorch_env(builder)
    unrelated = tmp_path / "libunrelated.so"
    unrelated.write_bytes(make_elf(soname="libunrelated.so"))
    assert run_ids(context(builder.prefix, LD_PRELOAD=str(unrelated)), "TC404") == []
