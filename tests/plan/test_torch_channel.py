"""A plan keeps one answer to "which channel does torch come from": a step that keeps the pytorch-channel torch
(installing the pytorch-cuda it was built for) and a later one that moves torch to conda-forge contradict each
other, and the later finding's fix that keeps the channel is taken instead (issue 25's CUDA 11.8 build beside
pytorch-cuda 12.1 and a conda-forge torchvision)."""

from __future__ import annotations

import pytest

from conda_torchcheck.inventory import load_environment
from conda_torchcheck.plan import build_plan
from conda_torchcheck.plan.actions import parse
from conda_torchcheck.report import check_environment
from tests.checks.tc_helpers import cuda118_beside_pytorch_cuda_121


@pytest.mark.parametrize(
    ("command", "channel"),
    [
        ('conda install -p "/e" -c pytorch -c nvidia pytorch-cuda=11.8', "pytorch"),
        ('conda install -p "/e" -c pytorch cpuonly', "pytorch"),
        ('conda install -p "/e" -c conda-forge "conda-forge::pytorch=*=cuda*" conda-forge::torchvision', "conda-forge"),
        ('conda install -p "/e" -c conda-forge pytorch=2.5.1', "conda-forge"),
        ('conda install -p "/e" -c pytorch -c nvidia "pytorch::torchvision=0.16.0"', None),
        ("python -m pip install torch==2.5.1", None),
    ],
)
def test_the_channel_a_command_leaves_torch_on(command, channel):
    assert parse(command).torch_channel() == channel


def _mixed_cuda_env(make_env):
    return cuda118_beside_pytorch_cuda_121(make_env())


def test_a_cuda_11_8_build_beside_pytorch_cuda_12_1_is_an_error_with_one_consistent_plan(make_env):
    b = _mixed_cuda_env(make_env)
    env, host = load_environment(b.prefix)
    report = check_environment(env, host)
    [tc103] = [f for f in report.findings if f.id == "TC103"]
    assert tc103.severity.value == "error" and "`import torch` fails" in tc103.title.render("en")
    plan = build_plan(report)
    commands = [c for step in plan.steps for c in step.commands]
    target = f'-p "{b.prefix}"'
    assert commands == [
        f"conda install {target} -c pytorch -c nvidia pytorch-cuda=11.8",
        f'conda install {target} -c pytorch -c nvidia "pytorch::torchvision=0.16.0"',
    ]
    moved = [d for d in plan.dropped if d.finding == "TC101"]
    assert moved and "torch: from the pytorch channel there" in moved[0].reason
