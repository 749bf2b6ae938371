"""conda-meta records, channel names, Python metadata, and what find_torch concludes from them."""

from __future__ import annotations

import json
import shutil

import pytest

from conda_torchcheck.inventory import conda_meta, find_torch, load_environment
from conda_torchcheck.inventory.names import canonical_channel
from conda_torchcheck.inventory.torch import cuda_from_build, metadata_dirs_of, variant_from_build

PY_DEP = ("python >=3.11,<3.12.0a0",)


@pytest.mark.parametrize(
    ("channel", "expected"),
    [
        ("https://conda.anaconda.org/conda-forge/linux-64", "conda-forge"),
        ("https://conda.anaconda.org/pytorch/win-64", "pytorch"),
        ("https://conda.anaconda.org/nvidia/label/cuda-12.1.0/linux-64", "nvidia"),
        ("https://conda.anaconda.org/t/tk-123/conda-forge/noarch", "conda-forge"),
        ("https://repo.anaconda.com/pkgs/main/win-64", "defaults"),
        ("pkgs/main", "defaults"),
        ("conda-forge", "conda-forge"),
        ("https://mirrors.tuna.tsinghua.edu.cn/anaconda/cloud/pytorch/linux-64", "pytorch"),
        ("https://mirrors.tuna.tsinghua.edu.cn/anaconda/pkgs/main/win-64", "defaults"),
        ("https://mirrors.ustc.edu.cn/anaconda/cloud/conda-forge/", "conda-forge"),
        ("https://mirror.sjtu.edu.cn/anaconda/cloud/nvidia/label/cuda-12.4.0/linux-64", "nvidia"),
        ("https://repo.prefix.dev/conda-forge/linux-64", "conda-forge"),
        (
            "https://artifactory.example.com/api/conda/internal-remote/linux-64",
            "https://artifactory.example.com/api/conda/internal-remote",
        ),
        ("file:///tmp/chan/linux-64", "file:///tmp/chan"),
        ("", "unknown"),
    ],
)
def test_canonical_channel(channel, expected):
    assert canonical_channel(channel) == expected


@pytest.mark.parametrize(
    ("build", "variant", "cuda"),
    [
        ("py3.11_cuda12.4_cudnn9_0", "cuda", "12.4"),
        ("py3.8_cuda11.3_cudnn8.2.0_0", "cuda", "11.3"),
        ("py3.11_cpu_0", "cpu", None),
        ("py311_cu121", "cuda", "12.1"),
        ("py311_cpu", "cpu", None),
        ("cuda126_mkl_py311_h1234abc_303", "cuda", "12.6"),
        ("cpu_generic_py312_h1234abc_0", "cpu", None),
        ("cuda118py310h1234abc_300", "cuda", "11.8"),
        ("gpu_cuda130_py311h12d642b_203", "cuda", "13.0"),
        ("cpu_py311h1234abc_0", "cpu", None),
        ("cuda", "cuda", None),
        ("cpu", "cpu", None),
        ("py311h1234abc_0", None, None),
    ],
)
def test_build_strings(build, variant, cuda):
    assert variant_from_build(build) == variant
    assert cuda_from_build(build) == cuda


def test_conda_meta_is_read_once(make_env, monkeypatch):
    b = make_env()
    calls = []
    real = conda_meta.read_conda_meta

    def counting(prefix):
        calls.append(prefix)
        return real(prefix)

    import conda_torchcheck.inventory.environment as environment

    monkeypatch.setattr(environment, "read_conda_meta", counting)
    load_environment(b.prefix)
    assert len(calls) == 1


def test_hidden_and_non_json_files_are_ignored(make_env):
    b = make_env()
    (b.prefix / "conda-meta" / ".fake.json").write_text("{", encoding="utf-8")
    (b.prefix / "conda-meta" / "pinned").write_text("pytorch 2.5.*\n", encoding="utf-8")
    env, _ = load_environment(b.prefix)
    assert env.problems == ()


def test_unreadable_conda_meta_folder(make_env, monkeypatch):
    from pathlib import Path

    b = make_env()
    meta = b.prefix / "conda-meta"
    real = Path.iterdir

    def iterdir(self):
        if self == meta:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    env, _ = load_environment(b.prefix)
    [problem] = env.problems
    assert (problem.kind, problem.path, problem.detail) == ("conda-meta-unreadable", meta, "Permission denied")


def test_metadata_dirs_of_a_record(make_env):
    b = make_env(os="windows")
    b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0_100", depends=PY_DEP)
    env, _ = load_environment(b.prefix)
    assert metadata_dirs_of(env, env.record("pytorch")) == ("Lib/site-packages/torch-2.5.1.dist-info",)


# --- find_torch ------------------------------------------------------------------------------------------


def test_pip_rewrote_condas_folder_in_place(make_env):
    b = make_env()
    b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0_100", depends=PY_DEP)
    (b.site_packages / "torch-2.5.1.dist-info" / "INSTALLER").write_text("pip\n", encoding="utf-8")
    env, _ = load_environment(b.prefix)
    assert find_torch(env).source == "pip-over-conda"


def test_conda_installed_torch_whose_record_is_broken(make_env):
    b = make_env()
    path = b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0_100", depends=PY_DEP)
    path.write_text("{", encoding="utf-8")
    env, _ = load_environment(b.prefix)
    torch = find_torch(env)
    assert torch.source == "conda" and torch.conda_record is None and torch.channel is None


def test_pip_over_conda_new_version(make_env):
    b = make_env()
    b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0_100", depends=PY_DEP)
    shutil.rmtree(b.site_packages / "torch-2.5.1.dist-info")
    b.pip_torch("2.6.0+cu124", cuda="12.4")
    env, _ = load_environment(b.prefix)
    torch = find_torch(env)
    assert (torch.source, torch.version, torch.variant, torch.cuda_version) == (
        "pip-over-conda",
        "2.6.0+cu124",
        "cuda",
        "12.4",
    )


# --- Python metadata ---------------------------------------------------------------------------------


def test_pth_site_records_its_pth_file(make_env, tmp_path):
    b = make_env()
    extra = tmp_path / "extra"
    extra.mkdir()
    (b.site_packages / "extra.pth").write_text(f"import os\n# comment\n{extra}\n", encoding="utf-8")
    env, _ = load_environment(b.prefix)
    [site] = [s for s in env.site_dirs if s.kind == "pth"]
    assert site.path == extra and site.note == str(b.site_packages / "extra.pth")


def test_egg_info_file_and_folder(make_env):
    b = make_env(layout="venv")
    (b.site_packages / "legacy-1.0-py3.11.egg-info").write_text("Metadata-Version: 1.0\nName: legacy\nVersion: 1.0\n")
    folder = b.site_packages / "torch-2.0.1-py3.11.egg-info"
    folder.mkdir()
    (folder / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.0.1\n", encoding="utf-8")
    env, _ = load_environment(b.prefix)
    assert env.dist("legacy").version == "1.0"
    assert (env.dist("torch").version, env.dist("torch").kind) == ("2.0.1", "egg-info")
    assert env.problems == ()


def test_state_file_json_ignored_by_record_reader(make_env):
    b = make_env()
    (b.prefix / "conda-meta" / "state").write_text(json.dumps({"env_vars": {}}), encoding="utf-8")
    env, _ = load_environment(b.prefix)
    assert env.problems == ()
