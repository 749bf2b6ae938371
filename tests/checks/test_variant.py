from __future__ import annotations

import pytest

from tests.checks.tc_helpers import CONDA_LAYOUTS, LAYOUTS, PY_DEP, all_commands, healthy, run_check, variant_of


def _pytorch_channel_cuda(b, cuda="12.4", torch="2.5.1"):
    b.conda_pytorch(
        torch, f"py3.11_cuda{cuda}_cudnn9_0", channel="pytorch", depends=(*PY_DEP, f"pytorch-cuda {cuda}.*"), cuda=cuda
    )
    b.conda_record("pytorch-mutex", "1.0", "cuda", channel="pytorch", noarch=True)
    return b


@pytest.mark.parametrize(("os", "layout"), LAYOUTS)
def test_silent_on_healthy_env(make_env, os, layout):
    assert run_check(healthy(make_env(os=os, layout=layout)), "variant") == []


@pytest.mark.parametrize(("os", "layout"), CONDA_LAYOUTS)
def test_consistent_pytorch_channel_cuda_env_is_silent(make_env, os, layout):
    b = _pytorch_channel_cuda(make_env(os=os, layout=layout))
    b.conda_record("pytorch-cuda", "12.4", "hc786d27_7", channel="pytorch")
    b.conda_python_package("torchvision", "0.20.1", "py311_cu124", channel="pytorch")
    assert run_check(b, "variant") == []


@pytest.mark.parametrize(("os", "layout"), CONDA_LAYOUTS)
def test_cpuonly_dragged_into_a_cuda_install(make_env, os, layout):
    b = make_env(os=os, layout=layout)
    b.conda_pytorch("2.5.1", "py3.11_cpu_0", channel="pytorch", depends=PY_DEP)
    b.conda_record("cpuonly", "2.0", "0", channel="pytorch", noarch=True)
    b.conda_record("pytorch-cuda", "12.4", "hc786d27_7", channel="pytorch")
    b.conda_python_package("torchvision", "0.20.1", "py311_cu124", channel="pytorch")
    findings = run_check(b, "variant")
    [f] = [f for f in findings if f.id == "TC102"]
    assert variant_of(f) == "mixed"
    assert f.title.params["cpu"] == "pytorch, cpuonly"
    assert "torchvision" in f.title.params["cuda"] and "pytorch-cuda" in f.title.params["cuda"]
    assert f.evidence["torch/version.py"] == "cuda = None"
    cuda_fix, cpu_fix = f.fixes
    assert any("--force pytorch-cuda cpuonly" in c for c in cuda_fix.commands)
    assert any('"conda-forge::pytorch=*=cuda*"' in c for c in cuda_fix.commands)
    assert any('"conda-forge::pytorch=*=cpu*"' in c for c in cpu_fix.commands)


def test_conda_forge_cuda_torch_with_cpu_torchvision(make_env):
    b = make_env()
    b.conda_pytorch("2.5.1", "cuda126_mkl_py311_h0000000_303", depends=PY_DEP, cuda="12.6")
    b.conda_python_package("torchvision", "0.20.1", "cpu_py311_h0000000_1")
    [f] = run_check(b, "variant")
    assert (f.id, variant_of(f)) == ("TC102", "mixed")


def test_cuda_versions_differ(make_env):
    b = _pytorch_channel_cuda(make_env(), cuda="12.4")
    b.conda_record("pytorch-cuda", "12.4", "hc786d27_7", channel="pytorch")
    b.conda_python_package("torchvision", "0.20.1", "py311_cu121", channel="pytorch")
    [f] = run_check(b, "variant")
    assert (f.id, variant_of(f)) == ("TC102", "cuda_versions")
    assert f.title.params["versions"] == "12.1, 12.4"


@pytest.mark.parametrize(("os", "layout"), CONDA_LAYOUTS)
def test_pytorch_cuda_other_than_the_build(make_env, os, layout):
    b = _pytorch_channel_cuda(make_env(os=os, layout=layout), cuda="12.1")
    b.conda_record("pytorch-cuda", "12.4", "hc786d27_7", channel="pytorch")
    [f] = run_check(b, "variant")
    assert (f.id, variant_of(f)) == ("TC103", "version")
    assert f.title.params["built"] == "12.1" and f.title.params["pytorch_cuda"] == "12.4"
    match, move = f.fixes
    assert match.commands[0].endswith("-c pytorch -c nvidia pytorch-cuda=12.1")  # repairing the frozen install
    assert "frozen" in match.summary.render()
    assert any("conda-forge::pytorch" in c for c in move.commands)


def test_a_build_for_another_cuda_major_without_its_runtime_breaks_the_import(make_env):
    """pytorch 2.1.0 built for CUDA 11.8 beside pytorch-cuda 12.1 and a conda-forge torchvision (issue 25): the CUDA
    11 libraries torch links are in no package of the env, so it is an error, not a warning."""
    b = _pytorch_channel_cuda(make_env(), cuda="11.8", torch="2.1.0")
    b.conda_record("pytorch-cuda", "12.1", "ha16c6d3_6", channel="pytorch")
    b.conda_record("cuda-cudart", "12.1.105", "0", channel="nvidia")
    b.conda_python_package("torchvision", "0.16.0", "cpu_py311h0000000_0", channel="conda-forge")
    found = [f for f in run_check(b, "variant") if f.id == "TC103"]
    assert [(variant_of(f), f.severity.value) for f in found] == [("version_breaks", "error")]
    assert found[0].evidence["CUDA runtime packages"] == ["cuda-cudart 12.1.105"]
    # with the build's own CUDA runtime still in the env it may load: a warning, as before
    b.conda_record("cuda-cudart", "11.8.89", "0", channel="nvidia")
    found = [f for f in run_check(b, "variant") if f.id == "TC103"]
    assert [(variant_of(f), f.severity.value) for f in found] == [("version", "warning")]


def test_pytorch_cuda_never_published_for_that_release(make_env):
    b = make_env()
    # a CUDA build whose build string does not name the CUDA version, and no version.py to read it from
    b.conda_pytorch("2.5.1", "cuda_py311_0", channel="pytorch", depends=PY_DEP)
    (b.site_packages / "torch" / "version.py").unlink()
    b.conda_record("pytorch-cuda", "11.7", "h0_0", channel="pytorch")
    [f] = run_check(b, "variant")
    assert (f.id, variant_of(f)) == ("TC103", "unpublished")
    assert f.evidence["pytorch-cuda published for 2.5"] == ["11.8", "12.1", "12.4"]


def test_pytorch_cuda_beside_conda_forge_torch(make_env):
    b = make_env()
    b.conda_pytorch("2.5.1", "cuda126_mkl_py311_h0000000_303", depends=PY_DEP, cuda="12.6")
    b.conda_record("pytorch-cuda", "12.4", "hc786d27_7", channel="pytorch")
    b.conda_record("pyg", "2.5.2", "py311_torch_2.5.0_cu124", channel="pyg", depends=["pytorch-cuda 12.4.*"])
    [f] = run_check(b, "variant")
    assert (f.id, variant_of(f)) == ("TC103", "foreign")
    assert f.evidence["required by"] == ["pyg"]
    assert all_commands(f) == [f'conda remove -p "{b.prefix}" pytorch-cuda']


def test_pytorch_cuda_beside_pip_torch_is_only_information(make_env):
    b = make_env()
    b.conda_record("pytorch-cuda", "12.1", "h0_0", channel="pytorch")
    b.pip_torch("2.5.1+cu124", cuda="12.4")
    [f] = run_check(b, "variant")
    assert (f.id, variant_of(f), f.severity.value) == ("TC103", "pip", "info")


def test_pip_torch_makes_stale_conda_selectors_irrelevant(make_env):
    """With pip's torch importing, conda's cpuonly next to a CUDA torchvision record is not TC102's business."""
    b = make_env()
    b.conda_record("cpuonly", "2.0", "0", channel="pytorch", noarch=True)
    b.pip_torch("2.5.1+cu124", cuda="12.4")
    assert run_check(b, "variant") == []
