from __future__ import annotations

import pytest

from tests.checks.tc_helpers import CONDA_LAYOUTS, LAYOUTS, PY_DEP, all_commands, healthy, run_check, variant_of


@pytest.mark.parametrize(("os", "layout"), LAYOUTS)
def test_silent_on_healthy_env(make_env, os, layout):
    assert run_check(healthy(make_env(os=os, layout=layout)), "channels") == []


@pytest.mark.parametrize(("os", "layout"), CONDA_LAYOUTS)
def test_pytorch_channel_torch_with_conda_forge_torchvision(make_env, os, layout):
    b = make_env(os=os, layout=layout)
    b.conda_pytorch("2.5.1", "py3.11_cuda12.4_cudnn9_0", channel="pytorch", depends=PY_DEP)
    b.conda_python_package("torchvision", "0.20.1", "cuda126_py311_h0000000_1", channel="conda-forge")
    [f] = run_check(b, "channels")
    assert f.id == "TC101" and variant_of(f) == "family"
    assert f.severity.value == "warning"
    assert "torchvision" in f.title.render() and "pytorch" in f.title.render()
    assert f.evidence["torchvision"].endswith("(conda-forge)")
    command, keep = all_commands(f)
    assert command.startswith(f'conda install -p "{b.prefix}' if os == "linux" else "conda install -p ")
    assert '"conda-forge::pytorch=*=cuda*"' in command and "conda-forge::torchvision" in command
    assert "-c pytorch" not in command  # the first fix never sends a new install to the frozen channel
    # the second keeps this torch: its companion from its own channel, for a plan that keeps the pytorch build
    assert keep.endswith('-c pytorch -c nvidia "pytorch::torchvision=0.20.1"')


def test_defaults_torch_with_conda_forge_torchaudio(make_env):
    b = make_env()
    b.conda_pytorch("2.5.1", "cpu_py311h0000000_0", channel="defaults", depends=PY_DEP)
    b.conda_python_package("torchaudio", "2.5.1", "cpu_py311h0000000_1", channel="conda-forge")
    [f] = run_check(b, "channels")
    assert f.evidence["pytorch"].endswith("(defaults)")
    assert "torchaudio" in f.title.render()


def test_libtorch_from_another_builder(make_env):
    b = make_env(os="windows")
    b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0000000_100", channel="conda-forge", depends=PY_DEP)
    b.conda_record("libtorch", "2.5.1", "cpu_mkl_h0000000_100", channel="defaults")
    [f] = run_check(b, "channels")
    assert "libtorch" in f.title.render()


def test_nightly_and_stable_pytorch_channels_are_one_builder(make_env):
    """pytorch, pytorch-nightly and pytorch-test are all built by PyTorch's own CI."""
    b = make_env()
    b.conda_pytorch("2.5.1", "py3.11_cpu_0", channel="pytorch", depends=PY_DEP)
    b.conda_python_package("torchvision", "0.20.1", "py311_cpu", channel="pytorch-test")
    assert run_check(b, "channels") == []


def test_mirror_of_the_same_channel_is_not_a_mix(make_env):
    b = make_env()
    b.conda_pytorch(
        "2.5.1",
        "py3.11_cuda12.4_cudnn9_0",
        channel="https://mirrors.tuna.tsinghua.edu.cn/anaconda/cloud/pytorch",
        depends=PY_DEP,
    )
    b.conda_python_package("torchvision", "0.20.1", "py311_cu124", channel="pytorch")
    assert run_check(b, "channels") == []


def test_mirror_of_another_channel_is_a_mix(make_env):
    b = make_env()
    b.conda_pytorch(
        "2.5.1", "py3.11_cpu_0", channel="https://mirrors.aliyun.com/anaconda/cloud/pytorch", depends=PY_DEP
    )
    b.conda_python_package(
        "torchvision", "0.20.1", "cpu_py311_h0_1", channel="https://mirrors.aliyun.com/anaconda/cloud/conda-forge"
    )
    [f] = run_check(b, "channels")
    assert f.evidence["torchvision"].endswith("(conda-forge)")


@pytest.mark.parametrize(("os", "layout"), CONDA_LAYOUTS)
def test_nvidia_channel_cuda_libraries_under_conda_forge_cuda_torch(make_env, os, layout):
    b = make_env(os=os, layout=layout)
    b.conda_pytorch("2.5.1", "cuda126_mkl_py311_h0000000_303", channel="conda-forge", depends=PY_DEP, cuda="12.6")
    b.conda_record("cuda-version", "12.9", "3", channel="nvidia")
    b.conda_record("cuda-cudart", "12.9.79", "0", channel="nvidia/label/cuda-12.9.1")
    [f] = run_check(b, "channels")
    assert f.id == "TC101" and variant_of(f) == "nvidia"
    assert f.title.params["count"] == 2
    assert set(f.evidence["nvidia channel"]) == {"cuda-version", "cuda-cudart"}
    [command] = all_commands(f)
    assert "conda-forge::cuda-version" in command and "conda-forge::cuda-cudart" in command


def test_nvidia_packages_do_not_matter_to_a_cpu_build(make_env):
    b = make_env()
    b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0000000_100", channel="conda-forge", depends=PY_DEP)
    b.conda_record("cuda-nvcc", "12.9.86", "0", channel="nvidia")
    assert run_check(b, "channels") == []


def test_nvidia_packages_are_the_pytorch_channel_recipe(make_env):
    """-c pytorch -c nvidia is how the pytorch channel's CUDA builds were meant to be installed."""
    b = make_env()
    b.conda_pytorch("2.5.1", "py3.11_cuda12.4_cudnn9_0", channel="pytorch", depends=PY_DEP)
    b.conda_record("pytorch-cuda", "12.4", "hc786d27_7", channel="pytorch")
    b.conda_record("cuda-cudart", "12.4.127", "0", channel="nvidia")
    assert run_check(b, "channels") == []


def test_no_torch_no_finding(make_env):
    b = make_env()
    b.conda_python_package("torchvision", "0.20.1", "cpu_py311_h0_1")
    assert run_check(b, "channels") == []
