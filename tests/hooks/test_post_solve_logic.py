"""The post-solve guard's logic on fake records: record conversion, the post-transaction set, the engine's
conda-level checks (TC101–TC105) run on it, and the message (no conda needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conda_torchcheck.findings import Severity
from conda_torchcheck.hooks import post_solve
from conda_torchcheck.hooks.records import is_torch_related, names_from_meta_files, to_conda_record
from tests.hooks.fakes import FakeChannel, FakeRecord, rec

PREFIX = Path("/envs/t1")
PYTHON = rec("python", "3.11.9", "h0000000_0_cpython")


def current(*records):
    return tuple(to_conda_record(r, PREFIX) for r in records)


def ids(outcome):
    return sorted({f.id for f in outcome.findings}) if outcome else []


def test_record_conversion_uses_conda_channel_names():
    converted = to_conda_record(rec("pytorch", "2.5.1", "py3.11_cuda12.4_cudnn9_0", "pytorch"), PREFIX)
    assert converted.channel == "pytorch" and converted.subdir == "linux-64"
    assert converted.source == PREFIX / "conda-meta" / "pytorch-2.5.1-py3.11_cuda12.4_cudnn9_0.json"
    mirror = FakeRecord(
        "pytorch",
        "2.5.1",
        "py3.11_cpu_0",
        FakeChannel("https://mirrors.tuna.tsinghua.edu.cn/anaconda/cloud/pytorch", "pytorch"),
    )
    assert to_conda_record(mirror).channel == "pytorch"  # custom_channels mirror: conda's short name wins
    local = FakeRecord("x", "1", "0", FakeChannel("file:///tmp/chan", "file:///tmp/chan"))
    assert to_conda_record(local).channel == "file:///tmp/chan"
    assert to_conda_record(rec("mkl", "2024.1.0", "h0", "defaults")).channel == "defaults"


def test_post_transaction_records_replace_unlinked_with_linked():
    old = rec("pytorch", "2.4.0", "cpu_h0_0")
    new = rec("pytorch", "2.5.1", "cpu_h0_0")
    records, complete = post_solve.transaction_records(current(PYTHON, old), [old], [new], PREFIX)
    assert complete and [(r.name, r.version) for r in records] == [("python", "3.11.9"), ("pytorch", "2.5.1")]


def test_unlinked_records_missing_from_the_prefix_mean_the_prefix_is_not_the_target():
    records, complete = post_solve.transaction_records(
        current(PYTHON), [rec("pytorch", "2.4.0", "cpu_0")], [rec("pytorch", "2.5.1", "cpu_0")], PREFIX
    )
    assert not complete and [r.name for r in records] == ["pytorch"]


def test_nothing_torch_related_is_not_examined():
    assert post_solve.evaluate(PREFIX, "linux-64", current(PYTHON), [], [rec("zlib", "1.3", "h0")]) is None
    # torch-related but no torch package in the result (mkl alone): nothing to say
    assert post_solve.evaluate(PREFIX, "linux-64", current(PYTHON), [], [rec("mkl", "2024.1.0", "h0")]) is None


def test_cuda_and_cpu_variants_mixed():
    link = [rec("pytorch", "2.5.1", "py3.11_cuda12.4_cudnn9_0", "pytorch"), rec("cpuonly", "2.0", "0", "pytorch")]
    outcome = post_solve.evaluate(PREFIX, "linux-64", current(PYTHON), [], link)
    assert "TC102" in ids(outcome)


def test_mkl_2024_1_with_a_pytorch_channel_pytorch():
    link = [rec("pytorch", "2.2.2", "py3.11_cpu_0", "pytorch"), rec("mkl", "2024.1.0", "h0_692", "defaults")]
    outcome = post_solve.evaluate(PREFIX, "linux-64", current(PYTHON), [], link)
    assert "TC105" in ids(outcome)
    assert any(f.severity is Severity.ERROR for f in outcome.serious)


def test_mixed_pytorch_channels_between_installed_and_linked():
    installed = rec("pytorch", "2.5.1", "py3.11_cuda12.4_cudnn9_0", "pytorch")
    link = [rec("torchvision", "0.20.1", "cuda126py311h0_0", "conda-forge")]
    outcome = post_solve.evaluate(PREFIX, "linux-64", current(PYTHON, installed), [], link)
    assert "TC101" in ids(outcome)


def test_consistent_conda_forge_set_is_clean():
    link = [
        rec("pytorch", "2.5.1", "cuda126_py311h0000000_306"),
        rec("torchvision", "0.20.1", "cuda_126_py311h0000000_3"),
        rec("cuda-version", "12.6", "h7480c83_3"),
    ]
    outcome = post_solve.evaluate(PREFIX, "linux-64", current(PYTHON), [], link)
    assert outcome is not None and outcome.serious == []


def test_only_conda_level_checks_run(monkeypatch):
    seen = {}
    import conda_torchcheck.checks as checks

    real = checks.run_checks

    def spy(ctx, only=(), skip=()):
        seen["only"] = tuple(only)
        seen["sites"] = ctx.env.site_dirs
        return real(ctx, only, skip)

    monkeypatch.setattr(checks, "run_checks", spy)
    post_solve.evaluate(PREFIX, "win-64", current(), [], [rec("pytorch", "2.5.1", "cpu_0", subdir="win-64")])
    assert seen["only"] == post_solve.POST_SOLVE_CHECK_IDS and seen["sites"] == ()


def test_warning_lines_stay_within_seven_lines_and_name_the_findings():
    link = [
        rec("pytorch", "2.2.2", "py3.11_cuda12.1_cudnn8_0", "pytorch"),
        rec("cpuonly", "2.0", "0", "pytorch"),
        rec("mkl", "2024.1.0", "h0_692", "defaults"),
        rec("torchvision", "0.20.1", "cuda126py311h0_0", "conda-forge"),
    ]
    outcome = post_solve.evaluate(PREFIX, "linux-64", current(PYTHON), [], link)
    for refused in (False, True):
        lines = post_solve.warning_lines(outcome, refused=refused, lang="en")
        assert 3 <= len(lines) <= post_solve.MAX_GUARD_LINES == 7
        assert str(PREFIX) in lines[0]
        assert not any("; set CONDA_PLUGINS" in line for line in lines)  # one hint per line
        assert any(line.startswith("  TC1") for line in lines[1:])
    assert "CONDA_PLUGINS_TORCHCHECK_STRICT=false" in post_solve.warning_lines(outcome, refused=True)[-1]
    zh = post_solve.warning_lines(outcome, refused=False, lang="zh_CN")
    assert "事务" in zh[0]


def test_signature_is_stable_across_repeated_solves():
    link = [rec("pytorch", "2.5.1", "py3.11_cuda12.4_cudnn9_0", "pytorch"), rec("cpuonly", "2.0", "0", "pytorch")]
    a = post_solve.evaluate(PREFIX, "linux-64", current(PYTHON), [], link)
    b = post_solve.evaluate(PREFIX, "linux-64", current(PYTHON), [], link)
    assert a.signature == b.signature


@pytest.mark.parametrize(
    "name,related",
    [
        ("pytorch", True),
        ("libtorch", True),
        ("cuda-cudart", True),
        ("libcublas", True),
        ("mkl", True),
        ("vc14_runtime", True),
        ("numpy", False),
        ("zlib", False),
        ("python", True),
        ("torchvision", True),
    ],
)
def test_torch_related_names(name, related):
    assert is_torch_related(name) is related


def test_names_from_conda_meta_file_names():
    files = ["pytorch-2.5.1-py3.11_cuda12.4_cudnn9_0.json", "cuda-version-12.4-h3060b56_3.json", "history"]
    assert names_from_meta_files(files) == {"pytorch", "cuda-version"}
