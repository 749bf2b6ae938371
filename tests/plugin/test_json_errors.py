"""`conda torchcheck --json` input errors: one JSON document on stdout in conda's own error shape, exit code 2.

Run through conda's real entry point (``python -m conda``) in a subprocess: conda's exception handler prints
the document, and the test fixture ``conda_cli`` bypasses that handler.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.plugin.conftest import CONDA, SKIP_REASON
from tests.schema.test_output_schema import validate

pytestmark = [pytest.mark.skipif(not CONDA, reason=SKIP_REASON), pytest.mark.conda]

# the keys `conda install --json` prints for a CondaError (conda.exceptions.CondaError.dump_map)
CONDA_ERROR_KEYS = {"error", "exception_name", "exception_type", "message", "caused_by"}


def conda(tmp_path, *argv: str) -> tuple[str, str, int]:
    condarc = tmp_path / "condarc"
    condarc.write_text("solver: classic\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONDA")}
    env.update(CONDARC=str(condarc), HOME=str(tmp_path), CONDA_PKGS_DIRS=str(tmp_path / "pkgs"))
    env["CONDA_ENVS_DIRS"] = str(tmp_path / "envs")
    done = subprocess.run(
        [sys.executable, "-m", "conda", "torchcheck", *argv], capture_output=True, text=True, env=env, timeout=120
    )
    return done.stdout, done.stderr, done.returncode


@pytest.mark.parametrize(
    "argv, name, words",
    [
        (("-p", "/no/such/env", "--json"), "TargetError", "does not exist"),
        (("--json", "-n", "no-such-env"), "TargetError", "no environment named 'no-such-env'"),
        (("check", "--bogus", "--json"), "UsageError", "unrecognized arguments: --bogus"),
        (("--json", "tree", "-p", "/no/such/env"), "TargetError", "does not exist"),
    ],
)
def test_input_errors_are_one_conda_style_json_document(tmp_path, argv, name, words):
    out, err, rc = conda(tmp_path, *argv)
    doc = json.loads(out)  # exactly one document: anything else on stdout makes this fail
    assert rc == 2
    assert CONDA_ERROR_KEYS <= set(doc)
    assert doc["exception_name"] == name and words in doc["message"] and doc["error"].startswith(f"{name}: ")
    assert doc["schema"] == 1 and doc["kind"] == "error" and doc["tool"]["name"] == "conda-torchcheck"
    validate(doc)  # the shipped schema's error document, with conda's caused_by


def test_a_malformed_spec_file_with_json(tmp_path):
    spec = tmp_path / "environment.yml"
    spec.write_text("name: x\ndependencies:\n\t- pytorch\n")
    out, err, rc = conda(tmp_path, "spec", "check", str(spec), "--json")
    doc = json.loads(out)
    assert rc == 2 and doc["exception_name"] == "SpecFileError" and "tab" in doc["message"]
    validate(doc)


def test_without_json_the_error_is_one_line_on_stderr(tmp_path):
    out, err, rc = conda(tmp_path, "-p", "/no/such/env")
    assert rc == 2 and out == "" and err.strip().splitlines()[0].startswith("conda-torchcheck: error: ")
