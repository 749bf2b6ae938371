"""conda match specs, conda version constraints, pip lines, torch indexes and channel names."""

from __future__ import annotations

import pytest

from conda_torchcheck.envspec.matchspec import (
    channel_name,
    cuda_of_tag,
    exact_version,
    index_url_for,
    minor_of_spec,
    parse_conda_spec,
    parse_pip_line,
    torch_index,
    version_allows,
)


@pytest.mark.parametrize(
    "text, channel, name, version, build",
    [
        ("pytorch", None, "pytorch", None, None),
        ("pytorch=2.5", None, "pytorch", "2.5*", None),
        ("pytorch==2.5.1", None, "pytorch", "2.5.1", None),
        ("pytorch=2.1.0=py3.10_cuda11.8_cudnn8.7.0_0", None, "pytorch", "2.1.0", "py3.10_cuda11.8_cudnn8.7.0_0"),
        ("pytorch==2.5.1=py3.11_cuda12.4*", None, "pytorch", "2.5.1", "py3.11_cuda12.4*"),
        ("conda-forge::pytorch >=2.4,<2.6 cuda*", "conda-forge", "pytorch", ">=2.4,<2.6", "cuda*"),
        ("pytorch[version='>=2.4', build='cuda*']", None, "pytorch", ">=2.4", "cuda*"),
        ("pytorch 2.5.1", None, "pytorch", "2.5.1", None),
        ("pytorch=*=cuda*", None, "pytorch", "*", "cuda*"),
        (
            "https://conda.anaconda.org/pytorch::pytorch=2.1",
            "https://conda.anaconda.org/pytorch",
            "pytorch",
            "2.1*",
            None,
        ),
        ("numpy<2", None, "numpy", "<2", None),
        ("PyYAML", None, "pyyaml", None, None),
    ],
)
def test_conda_specs(text, channel, name, version, build):
    s = parse_conda_spec(text)
    assert (s.channel, s.name, s.version, s.build) == (channel, name, version, build)


@pytest.mark.parametrize(
    "text",
    ["pytorch", "pytorch=2.5", "pytorch==2.5.1", "conda-forge::pytorch=2.5.1=cuda*", "pytorch >=2.4,<2.6 cuda*"],
)
def test_render_round_trips(text):
    s = parse_conda_spec(text)
    again = parse_conda_spec(s.render())
    assert (again.channel, again.name, again.version, again.build) == (s.channel, s.name, s.version, s.build)


@pytest.mark.parametrize(
    "spec, version, expected",
    [
        ("2.5*", "2.5.1", True),
        ("2.5", "2.5.1", False),  # conda: a bare version is exact (2.5 == 2.5.0)
        ("2.5", "2.5.0", True),
        ("2.5*", "2.50.0", False),
        ("2.5.*", "2.5.0", True),
        (">=2.0,<2.5", "2.5.1", False),
        (">=2.0,<2.5", "2.4.1", True),
        ("2.4.1|2.5.1", "2.5.1", True),
        ("!=2.5.1", "2.5.1", False),
        ("2.6*", "2.5.1", False),
        ("==2.5", "2.5.0", True),
        ("~=2.5.0", "2.5.1", True),
        ("~=2.5.0", "2.6.0", False),
    ],
)
def test_version_allows(spec, version, expected):
    assert version_allows(spec, version) is expected


def test_exact_and_minor():
    assert exact_version("==2.5.1") == "2.5.1"
    assert exact_version("2.5*") is None
    assert exact_version("2.5") == "2.5"
    assert exact_version("2.5.1*") == "2.5.1"  # the `=2.5.1` form
    assert exact_version("2.6.0.dev20241112*") == "2.6.0.dev20241112"  # a nightly pin is a pin
    assert minor_of_spec("2.5.*") == "2.5"
    assert minor_of_spec(">=2.5,<2.6") == "2.5"
    assert minor_of_spec(">=2.5") is None


@pytest.mark.parametrize(
    "text, kind, name, option",
    [
        ("torch==2.3.0+cu121", "requirement", "torch", None),
        ("--extra-index-url https://download.pytorch.org/whl/cu121", "option", None, "--extra-index-url"),
        ("--index-url=https://download.pytorch.org/whl/cpu", "option", None, "--index-url"),
        ("-i https://pypi.tuna.tsinghua.edu.cn/simple", "option", None, "--index-url"),
        ("-f https://download.pytorch.org/whl/torch_stable.html", "option", None, "--find-links"),
        ("-e .", "other", None, "--editable"),
        ("-r requirements.txt", "other", None, "--requirement"),
        ("git+https://github.com/facebookresearch/detectron2.git", "other", None, None),
        ("Torch_Vision>=0.15; sys_platform == 'linux'", "requirement", "torch-vision", None),
    ],
)
def test_pip_lines(text, kind, name, option):
    line = parse_pip_line(text)
    assert (line.kind, line.name, line.option) == (kind, name, option)


def test_pip_local_tags():
    assert parse_pip_line("torch==2.3.0+cu121").local_tag == "cu121"
    assert parse_pip_line("torch==2.3.0").local_tag is None
    url = "torch @ https://download.pytorch.org/whl/cu118/torch-2.1.0%2Bcu118-cp310-cp310-linux_x86_64.whl"
    assert parse_pip_line(url).local_tag == "cu118"


def test_torch_indexes():
    assert torch_index("https://download.pytorch.org/whl/cu121").tag == "cu121"
    assert torch_index("https://download.pytorch.org/whl/nightly/cu126").nightly
    mirror = torch_index("https://mirrors.aliyun.com/pytorch-wheels/cu118/")
    assert mirror.tag == "cu118" and not mirror.official
    assert torch_index("https://download.pytorch.org/whl/torch_stable.html").tag is None
    assert torch_index("https://pypi.tuna.tsinghua.edu.cn/simple") is None
    assert index_url_for("cu124", mirror) == "https://mirrors.aliyun.com/pytorch-wheels/cu124"
    assert index_url_for("cpu") == "https://download.pytorch.org/whl/cpu"
    assert cuda_of_tag("cu121") == "12.1" and cuda_of_tag("cu92") == "9.2"


@pytest.mark.parametrize(
    "text, name",
    [
        ("conda-forge", "conda-forge"),
        ("https://conda.anaconda.org/conda-forge/", "conda-forge"),
        ("https://mirrors.tuna.tsinghua.edu.cn/anaconda/cloud/pytorch/", "pytorch"),
        ("https://mirrors.tuna.tsinghua.edu.cn/anaconda/pkgs/main", "defaults"),
        ("nvidia/label/cuda-11.8.0", "nvidia"),
        ("nodefaults", "nodefaults"),
        ("defaults", "defaults"),
    ],
)
def test_channel_names(text, name):
    assert channel_name(text) == name


@pytest.mark.parametrize(
    "text, name, specifier, exact, tag",
    [
        (
            "torch==2.0.1+cu118 -f https://download.pytorch.org/whl/torch_stable.html",
            "torch",
            "==2.0.1+cu118",
            "2.0.1+cu118",
            "cu118",
        ),
        ("torch==2.1.0 --hash=sha256:abc", "torch", "==2.1.0", "2.1.0", None),
        ("torch >= 1.10, < 2", "torch", "<2,>=1.10", None, None),
        ("torchmetrics==v0.6.0", "torchmetrics", "==v0.6.0", "v0.6.0", None),
        ("torch==2.3.0+cu121 # pinned", "torch", "==2.3.0+cu121", "2.3.0+cu121", "cu121"),
        ("torch~=2.1.0", "torch", "~=2.1.0", None, None),
    ],
)
def test_pip_requirements_are_pep_508(text, name, specifier, exact, tag):
    line = parse_pip_line(text)
    assert (line.kind, line.name, line.specifier, line.exact, line.local_tag) == (
        "requirement",
        name,
        specifier,
        exact,
        tag,
    )
