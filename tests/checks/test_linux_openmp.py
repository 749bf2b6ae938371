"""TC420: two OpenMP runtimes in the process that imports torch."""

from __future__ import annotations

from tests.loader.linux_layouts import FIX, context, minitorch_env, run_ids


def test_gnu_and_intel_runtimes(make_env):
    builder = make_env(layout="venv")
    minitorch_env(builder)
    preload = f"{FIX / 'gomp_old' / 'libgomp.so.1'} {FIX / 'openmp' / 'libiomp5.so'}"
    [f] = run_ids(context(builder.prefix, LD_PRELOAD=preload), "TC420")
    assert set(f.evidence["runtimes"]) == {"gnu", "intel"}
    assert f.severity.value == "warning"


def test_one_runtime_is_fine(make_env):
    builder = make_env(layout="venv")
    minitorch_env(builder)
    assert run_ids(context(builder.prefix, LD_PRELOAD=str(FIX / "openmp" / "libomp.so")), "TC420") == []
