"""One answer to "who built this conda package" for the env checks and the environment-file rules."""

from __future__ import annotations

import pytest

from conda_torchcheck.builders import ANACONDA, CONDA_FORGE, NVIDIA, PYTORCH, builder_of
from conda_torchcheck.checks import facts
from conda_torchcheck.envspec import intent
from conda_torchcheck.envspec.parse import parse_text


@pytest.mark.parametrize(
    ("channel", "builder"),
    [
        ("pytorch", PYTORCH),
        ("pytorch-nightly", PYTORCH),
        ("pytorch-lts", PYTORCH),
        ("conda-forge", CONDA_FORGE),
        ("defaults", ANACONDA),
        ("anaconda", ANACONDA),
        ("main", ANACONDA),
        ("pkgs/main", ANACONDA),
        ("Conda-Forge", CONDA_FORGE),
        ("nvidia", NVIDIA),
        ("my-mirror", "my-mirror"),
    ],
)
def test_both_sides_give_the_same_builder(channel, builder):
    assert builder_of(channel) == builder
    assert facts.builder(channel) == builder
    assert intent.builder_of(channel) == builder


def test_no_channel():
    assert builder_of(None) is None and builder_of("") is None
    assert facts.builder(None) == "unknown"


def test_an_env_file_s_era_is_still_named_as_the_file_names_the_channel():
    text = "channels:\n  - pkgs/main\ndependencies:\n  - pytorch=2.3\n"
    assert intent.analyse(parse_text(text, "environment.yml")).era == "defaults"
