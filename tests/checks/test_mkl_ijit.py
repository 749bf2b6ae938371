from __future__ import annotations

import pytest

from tests.checks.tc_helpers import LAYOUTS, PY_DEP, all_commands, healthy, run_check


def _pytorch_channel(b, mkl="2024.1.0"):
    b.conda_pytorch(
        "2.2.2",
        "py3.11_cuda12.1_cudnn8.9.2_0",
        channel="pytorch",
        depends=(*PY_DEP, "mkl >=2018", "blas * mkl", "pytorch-cuda >=12.1,<12.2"),
        cuda="12.1",
    )
    b.conda_record("mkl", mkl, "h6d00ec8_0", channel="defaults")
    return b


@pytest.mark.parametrize(("os", "layout"), LAYOUTS)
def test_silent_on_healthy_env(make_env, os, layout):
    b = healthy(make_env(os=os, layout=layout))
    if layout == "conda":
        b.conda_record("mkl", "2024.2.2", "ha957f24_16")
    assert run_check(b, "mkl_ijit") == []


@pytest.mark.parametrize("mkl", ["2024.1.0", "2024.2.2", "2025.0.1"])
def test_new_mkl_with_pytorch_channel_build(make_env, mkl):
    b = _pytorch_channel(make_env(), mkl=mkl)
    b.write(f"{b.site_rel}/torch/lib/libtorch_cpu.so", b"\x7fELF")
    [f] = run_check(b, "mkl_ijit")
    assert f.id == "TC105" and f.severity.value == "error"
    assert f.evidence["pytorch depends"] == ["mkl >=2018", "blas * mkl"]
    assert str(f.evidence["library"]).endswith("torch/lib/libtorch_cpu.so")
    pin, move = f.fixes
    assert pin.commands == (f'conda install -p "{b.prefix}" "mkl<2024.1"',)
    assert any('"conda-forge::pytorch=*=cuda*"' in c for c in move.commands)


def test_old_mkl_is_fine(make_env):
    assert run_check(_pytorch_channel(make_env(), mkl="2024.0.0"), "mkl_ijit") == []


def test_conda_forge_torch_does_not_care(make_env):
    b = make_env()
    b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0000000_100", depends=PY_DEP)
    b.conda_record("mkl", "2024.2.2", "ha957f24_16")
    assert run_check(b, "mkl_ijit") == []


def test_pip_torch_over_the_pytorch_channel_record_does_not_care(make_env):
    """pip wheels link MKL statically: once pip's torch is the one that imports, mkl's version is irrelevant."""
    b = _pytorch_channel(make_env())
    b.pip_torch("2.2.2")
    assert run_check(b, "mkl_ijit") == []


def test_windows_is_not_affected(make_env):
    b = _pytorch_channel(make_env(os="windows"))
    assert run_check(b, "mkl_ijit") == []
    assert all_commands  # keep the import used
