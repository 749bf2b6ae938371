"""`conda torchcheck run -- CMD` through conda's real entry point: the command's exit code, and its error explained
against the env of the python that ran it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.plugin.conftest import CONDA, SKIP_REASON
from tests.plugin.test_json_errors import conda

pytestmark = [pytest.mark.skipif(not CONDA, reason=SKIP_REASON), pytest.mark.conda]


def test_conda_torchcheck_run_explains_a_failed_import(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    out, err, rc = conda(tmp_path, "run", "--", str(venv / "bin" / "python"), "-c", "import torch")
    assert rc == 1
    assert "No module named 'torch'" in err
    assert f"Checked environment: {venv} (the env of the python that ran the command)" in out
