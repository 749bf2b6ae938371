"""Helpers for the TC1xx/TC2xx check tests: run one check module on a fixture env, build healthy envs."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path

from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.findings import Finding
from conda_torchcheck.inventory import load_environment
from tests.envbuilder import EnvBuilder

#: (os, layout) pairs every check is exercised on
LAYOUTS = [("linux", "conda"), ("linux", "venv"), ("windows", "conda"), ("windows", "venv")]
CONDA_LAYOUTS = [("linux", "conda"), ("windows", "conda")]

PY_DEP = ("python >=3.11,<3.12.0a0", "python_abi 3.11.* *_cp311")


def context(
    prefix: Path | EnvBuilder,
    *,
    live: bool = False,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    system_root: Path | None = None,
) -> CheckContext:
    prefix = prefix.prefix if isinstance(prefix, EnvBuilder) else prefix
    environment, host = load_environment(
        prefix, use_live_host=live, host_overrides=dict(env or {}), cwd=cwd, system_root=system_root
    )
    return CheckContext(environment, host)


def run_check(prefix: Path | EnvBuilder, check: str, **kwargs) -> list[Finding]:
    module = importlib.import_module(f"conda_torchcheck.checks.{check}")
    ctx = context(prefix, **kwargs)
    return list(module.CHECK.run(ctx))


def ids(findings: list[Finding]) -> list[str]:
    return [f.id for f in findings]


def variant_of(f: Finding) -> str:
    """The catalog variant a finding was built from (``TC202.gone.title`` → ``gone``)."""
    parts = f.title.key.split(".")
    return parts[1] if len(parts) == 3 else ""


def all_commands(f: Finding) -> list[str]:
    return [c for fix in f.fixes for c in fix.commands]


def healthy(b: EnvBuilder, *, torch: str = "2.5.1", vision: str = "0.20.1", audio: str | None = "2.5.1") -> EnvBuilder:
    """A working torch install for the builder's layout: conda-forge family in conda envs, pip wheels in venvs."""
    if b.layout == "conda":
        b.conda_pytorch(torch, "cpu_mkl_py311_h0000000_100", depends=PY_DEP)
        b.conda_python_package("torchvision", vision, "cpu_py311_h0000000_1")
        if audio:
            b.conda_python_package("torchaudio", audio, "cpu_py311_h0000000_1")
    else:
        b.pip_torch(torch)
        b.dist("torchvision", vision, requires=[f"torch=={torch}"])
        if audio:
            b.dist("torchaudio", audio, requires=[f"torch=={torch}"])
    return b


def cuda118_beside_pytorch_cuda_121(b: EnvBuilder) -> EnvBuilder:
    """A pytorch-channel pytorch 2.1.0 built for CUDA 11.8 beside pytorch-cuda 12.1 (nvidia's 12.1 runtime) and a
    conda-forge torchvision: `import torch` fails (TC103), the family comes from two channels (TC101)."""
    b.conda_pytorch(
        "2.1.0",
        "py3.11_cuda11.8_cudnn8.7.0_0",
        channel="pytorch",
        depends=(*PY_DEP, "pytorch-cuda >=11.8,<11.9", "pytorch-mutex 1.0 cuda"),
        cuda="11.8",
    )
    b.conda_record("pytorch-cuda", "12.1", "ha16c6d3_6", channel="pytorch", depends=("cuda-cudart >=12.1,<12.2",))
    b.conda_record("pytorch-mutex", "1.0", "cuda", channel="pytorch")
    b.conda_record("cuda-cudart", "12.1.105", "0", channel="nvidia")
    b.conda_python_package("torchvision", "0.16.0", "cuda120py311h6d6fa0c_0", channel="conda-forge")
    return b


def damaged_pytorch_record(b: EnvBuilder) -> Path:
    """A pytorch-channel CUDA pytorch whose conda record was cut short by a crash and whose files are gone: whether
    torch is installed cannot be told. Returns the record."""
    import shutil

    b.conda_pytorch("2.5.1", "py3.11_cuda12.1_cudnn9_0", channel="pytorch", depends=PY_DEP, cuda="12.1")
    record = b.prefix / "conda-meta" / "pytorch-2.5.1-py3.11_cuda12.1_cudnn9_0.json"
    record.write_text(record.read_text()[:50], encoding="utf-8")
    shutil.rmtree(b.site_packages / "torch")
    for meta in b.site_packages.glob("torch-*"):
        shutil.rmtree(meta)
    return record
