"""Mechanisms read from the paste's facts (the blind sets q and r showed them; set p measures them first-pass):
a wheel file's tags against the Python the paste states, ROCm's missing gfx target, a dependency with no wheel or
only a placeholder, an application's own Python check, conda finding no package for a platform, log line
prefixes."""

from __future__ import annotations

import pytest

from conda_torchcheck.explain import explain

WHEEL = "torch-1.0.0-cp37-cp37m-win_amd64.whl is not a supported wheel on this platform."
PLACEHOLDER_ONLY = (
    "ERROR: Could not find a version that satisfies the requirement TorchCodec==0.2.1 (from versions: 0.0.0.dev0)\n"
    "ERROR: No matching distribution found for TorchCodec==0.2.1"
)
APP_PYTHON = (
    "INCOMPATIBLE PYTHON VERSION\nThis program is tested with 3.10.6 Python, but you have 3.11.2.\n"
    "RuntimeError: Couldn't install torch."
)
CONDA_NOT_FOUND = (
    "PackagesNotFoundError: The following packages are not available from current channels:\n\n  - pytorch\n\n"
    "Current channels:\n\n  - https://conda.anaconda.org/pytorch/osx-arm64\n"
)
JOURNALD = (
    "Aug 12 10:38:34 host app[41]: WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. "
    "xFormers was built for:\n"
    "Aug 12 10:38:34 host app[41]:     PyTorch 2.10.0+cu128 with CUDA 1208 (you have 2.11.0+cu130)"
)


@pytest.mark.parametrize(
    ("text", "first"),
    [
        # the wheel is for the Python that runs pip, and for 64-bit Windows: the Python is 32-bit
        (f"I use Windows 10 and Python 3.7.\n{WHEEL}", "python-32bit"),
        # the wheel is for another Python than the one stated
        (f"Python 3.8.10 on Windows\n{WHEEL}", "torch-for-other-python"),
        (
            "RuntimeError: HIP error: invalid device function\nHIP kernel errors might be asynchronously reported",
            "gpu-arch-not-in-build",
        ),
        (PLACEHOLDER_ONLY, "platform-without-wheels"),
        (
            "No module named 'torchcodec.decoders'\nversion is `torchcodec              0.0.0.dev0`",
            "python-not-supported",
        ),
        (APP_PYTHON, "python-not-supported"),
        (CONDA_NOT_FOUND, "platform-without-wheels"),
        (JOURNALD, "extension-for-other-torch"),
    ],
)
def test_the_first_cause(text, first):
    assert explain(text).likely_causes[0] == first
