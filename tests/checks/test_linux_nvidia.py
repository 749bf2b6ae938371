"""TC410 (pins) and TC412 (two CUDA variants) for the NVIDIA pip wheels next to a pip torch."""

from __future__ import annotations

from tests.loader.linux_layouts import context, minitorch_env, run_ids


def test_pinned_version_installed(make_env):
    builder = make_env(layout="venv")
    minitorch_env(builder)
    assert run_ids(context(builder.prefix), "TC410", "TC412") == []


def test_pin_not_met(make_env):
    builder = make_env(layout="venv")
    minitorch_env(builder, nccl_dist="2.18.1")
    [f] = run_ids(context(builder.prefix), "TC410")
    assert f.evidence["installed"] == "2.18.1" and f.evidence["required"] == "nvidia-nccl-cu12==2.21.5"
    assert f.fixes[0].commands[0].endswith('pip install "nvidia-nccl-cu12==2.21.5"')


def test_pinned_package_missing(make_env):
    builder = make_env(layout="venv")
    minitorch_env(builder, nccl=None)
    [f] = run_ids(context(builder.prefix), "TC410")
    assert f.title.render("en") == "nvidia-nccl-cu12, which torch requires, is not installed"


def test_markers_for_other_platforms_are_ignored(make_env):
    builder = make_env(layout="venv")
    minitorch_env(builder, requires=('nvidia-nccl-cu12==9.9; platform_system == "Windows"',))
    assert run_ids(context(builder.prefix), "TC410") == []


def test_cu11_and_cu12_variants(make_env):
    builder = make_env(layout="venv")
    minitorch_env(builder)
    builder.dist("nvidia-nccl-cu11", "2.14.3")
    [f] = run_ids(context(builder.prefix), "TC412")
    assert set(f.evidence["packages"]) == {"nvidia-nccl-cu12 2.21.5", "nvidia-nccl-cu11 2.14.3"}
    assert "uninstall -y nvidia-nccl-cu11" in f.fixes[0].commands[0]


def test_cu12_and_unsuffixed_cuda13_packages(make_env):
    builder = make_env(layout="venv")
    minitorch_env(builder, requires=('nvidia-cublas-cu12==12.6.4.1; platform_system == "Linux"',), nccl=None)
    builder.dist("nvidia-cublas-cu12", "12.6.4.1")
    builder.dist("nvidia-cublas", "13.1.0.3")
    [f] = run_ids(context(builder.prefix), "TC412")
    assert "nvidia-cublas 13.1.0.3" in f.evidence["packages"]
    assert f.evidence["torch_needs"] == "nvidia-cublas-cu12==12.6.4.1"


def test_single_variant_is_fine(make_env):
    builder = make_env(layout="venv")
    minitorch_env(builder)
    builder.dist("nvidia-ml-py", "12.560.30")
    assert run_ids(context(builder.prefix), "TC412") == []
