from __future__ import annotations

import pytest

from conda_torchcheck.checks import cpu_build
from conda_torchcheck.checks.cpu_build import pip_cuda_tag
from tests.checks.tc_helpers import LAYOUTS, PY_DEP, all_commands, healthy, run_check, variant_of


@pytest.fixture(autouse=True)
def _no_driver_on_this_machine(monkeypatch, tmp_path):
    """The test machine's own GPU must not leak into fixture results."""
    monkeypatch.setattr(cpu_build, "LINUX_DRIVER_MARKERS", (tmp_path / "no-driver",))


@pytest.mark.parametrize(("os", "layout"), LAYOUTS)
def test_cpu_build_without_any_cuda_signal_is_silent(make_env, os, layout):
    """A CPU build on a machine with no driver and no CUDA packages is what should have been installed."""
    assert run_check(healthy(make_env(os=os, layout=layout)), "cpu_build", live=True) == []


@pytest.mark.parametrize("os", ["linux", "windows"])
def test_cuda_build_is_silent(make_env, os):
    b = make_env(os=os, layout="venv")
    b.pip_torch("2.5.1+cu124", cuda="12.4")
    b.dist("nvidia-cudnn-cu12", "9.1.0.70")
    assert run_check(b, "cpu_build") == []


def test_pip_cpu_wheel_with_nvidia_wheels(make_env):
    b = make_env(layout="venv")
    b.pip_torch("2.5.1+cpu")
    b.dist("torchvision", "0.20.1+cpu")
    b.dist("nvidia-cuda-runtime-cu12", "12.1.105")
    [f] = run_check(b, "cpu_build")
    assert (f.id, variant_of(f), f.severity.value) == ("TC108", "pip", "info")
    assert "nvidia-cuda-runtime-cu12 12.1.105" in f.evidence["signals"]["pip"]
    [command] = all_commands(f)
    assert command == (
        f'"{b.prefix}/bin/python" -m pip install --force-reinstall torch==2.5.1 "torchvision==0.20.*"'
        " --index-url https://download.pytorch.org/whl/cu121"
    )


def test_pypi_windows_wheel_with_a_driver(make_env, tmp_path):
    windows = tmp_path / "Windows"
    (windows / "System32").mkdir(parents=True)
    (windows / "System32" / "nvcuda.dll").write_bytes(b"MZ")
    b = make_env(os="windows", layout="venv")
    b.pip_torch("2.7.0")
    [f] = run_check(b, "cpu_build", system_root=windows)
    assert variant_of(f) == "pip_windows"
    assert f.evidence["signals"]["driver"].endswith("nvcuda.dll")
    [command] = all_commands(f)
    assert command.startswith(f'"{b.prefix / "Scripts" / "python.exe"}" -m pip install --force-reinstall torch==2.7.0')
    assert command.endswith("--index-url https://download.pytorch.org/whl/cu128")  # newest 12.x for 2.7


def test_live_linux_driver_is_a_signal(make_env, monkeypatch, tmp_path):
    marker = tmp_path / "proc-driver-nvidia-version"
    marker.write_text("NVRM version: 550.54.14\n", encoding="utf-8")
    monkeypatch.setattr(cpu_build, "LINUX_DRIVER_MARKERS", (marker,))
    b = healthy(make_env())
    [f] = run_check(b, "cpu_build", live=True)
    assert variant_of(f) == "conda"
    assert f.evidence["signals"] == {"driver": str(marker)}
    # the driver is visible, so conda's __cuda is too: no CONDA_OVERRIDE_CUDA advice
    assert not any("CONDA_OVERRIDE_CUDA" in c for c in all_commands(f))


@pytest.mark.parametrize("os", ["linux", "windows"])
def test_conda_forge_cpu_build_beside_cuda_packages(make_env, os):
    b = make_env(os=os)
    b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0000000_100", depends=PY_DEP)
    b.conda_record("cuda-version", "12.6", "h7480c83_3", noarch=True)
    [f] = run_check(b, "cpu_build")
    assert variant_of(f) == "conda"
    switch, override = f.fixes
    assert switch.commands == (f'conda install -p "{b.prefix}" -c conda-forge "conda-forge::pytorch=*=cuda*"',)
    expected = (
        f'set CONDA_OVERRIDE_CUDA=12.6 && conda install -p "{b.prefix}"'
        if os == "windows"
        else f'CONDA_OVERRIDE_CUDA=12.6 conda install -p "{b.prefix}"'
    )
    assert override.commands[0].startswith(expected)


def test_pytorch_channel_cpuonly_build_points_to_conda_forge(make_env):
    b = make_env()
    b.conda_pytorch("2.4.1", "py3.11_cpu_0", channel="pytorch", depends=PY_DEP)
    b.conda_record("cpuonly", "2.0", "0", channel="pytorch", noarch=True)
    b.conda_record("pytorch-mutex", "1.0", "cpu", channel="pytorch", noarch=True)
    b.conda_python_package("torchvision", "0.19.1", "py311_cu121", channel="pytorch")
    [f] = run_check(b, "cpu_build")
    assert variant_of(f) == "conda_frozen"
    remove, install = f.fixes[0].commands
    assert remove == f'conda remove -p "{b.prefix}" --force cpuonly pytorch-mutex'
    assert "-c pytorch" not in install and '"conda-forge::pytorch=*=cuda*"' in install


def test_defaults_cpu_build(make_env):
    b = make_env()
    b.conda_pytorch("2.5.1", "cpu_py311h0000000_0", channel="defaults", depends=PY_DEP)
    b.conda_record("cudatoolkit", "11.8.0", "h6a678d5_0", channel="defaults")
    [f] = run_check(b, "cpu_build")
    assert f.fixes[0].commands == (f'conda install -p "{b.prefix}" "pytorch=*=gpu*"',)


@pytest.mark.parametrize(
    ("torch", "wanted", "tag"),
    [
        ("2.5.1", None, "cu124"),
        ("2.5.1", "12.1", "cu121"),
        ("2.5.1", "12.6", "cu124"),  # nearest of the same major
        ("2.5.1", "11.8", "cu118"),
        ("2.9.0", None, "cu128"),
        ("2.9.0", "13.0", "cu130"),
        ("9.9.0", None, "cu126"),  # unknown release: the newest table row, its 12.x build
    ],
)
def test_pip_cuda_tag(torch, wanted, tag):
    assert pip_cuda_tag(torch, wanted) == tag
