"""Item 13 of the hostile-input issue: a bug of ours met while a verb runs is this tool's own error (exit 2, one
line or the JSON error document), standalone and under conda, never a traceback nor conda's "An unexpected
error has occurred" report that asks the user to disable plugins."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conda_torchcheck.cli.main import main
from tests.conda_skip import CONDA_SKIP_REASON

# injected at start-up of a child (sitecustomize), since the bug must be met inside conda's own process
CRASH = """
import conda_torchcheck.cli.main_list_checks as verb
def execute(args):
    raise RecursionError("a bug of ours")
verb.execute = execute
"""


def test_standalone(monkeypatch, capsys):
    import conda_torchcheck.cli.main_list_checks as verb

    monkeypatch.setattr(verb, "execute", lambda args: {}["missing"])
    assert main(["list-checks"]) == 2
    out, err = capsys.readouterr()
    assert err.startswith("conda-torchcheck: error: internal error at ") and "KeyError: 'missing'" in err
    assert "Traceback" not in err
    assert main(["list-checks", "--json"]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["kind"] == "error" and doc["exception_name"] == "InternalError"


@pytest.mark.skipif(not __import__("importlib.util").util.find_spec("conda"), reason=CONDA_SKIP_REASON)
def test_under_conda(tmp_path):
    """One run of a real conda (slow: conda's start-up); the JSON error path is the one input errors take
    (tests/plugin/test_json_errors.py)."""
    (tmp_path / "sitecustomize.py").write_text(CRASH, encoding="utf-8")
    condarc = tmp_path / "condarc"
    condarc.write_text("solver: classic\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONDA")}
    env.update(PYTHONPATH=str(tmp_path), CONDARC=str(condarc), HOME=str(tmp_path), NO_COLOR="1")
    argv = [sys.executable, "-m", "conda", "torchcheck", "list-checks"]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "An unexpected error has occurred" not in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "internal error" in done.stderr and "RecursionError: a bug of ours" in done.stderr
