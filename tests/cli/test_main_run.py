"""``run -- CMD``: the command runs as given; when it fails with an error explain knows, the error is explained
against the env of the python that ran it. Real interpreters in real venvs (``python -m venv``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conda_torchcheck.cli import main_run
from conda_torchcheck.cli.main import main
from tests.schema.test_output_schema import validate


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A real venv without torch (and without pip: nothing is downloaded)."""
    prefix = tmp_path_factory.mktemp("run") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(prefix)], check=True)
    return prefix


def _python(prefix: Path) -> str:
    return str(prefix / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python"))


def test_a_failed_import_is_explained_against_the_env_whose_python_ran(venv, capsys):
    code = main(["run", "--", _python(venv), "-c", "import torch"])
    captured = capsys.readouterr()
    assert code == 1  # the command's own exit code
    assert "No module named 'torch'" in captured.err  # its standard error passed through
    assert f"Checked environment: {venv} (the env of the python that ran the command)" in captured.out
    # the error certainly came from this env: no "did not come from this environment"
    words = " ".join(captured.out.split())
    assert "did not come from" not in words
    assert "which has no torch: install torch into that env" in words


def test_json_names_the_command_as_source_and_reason(venv, capsys):
    code = main(["run", "--json", "--", _python(venv), "-c", "import torch"])
    doc = json.loads(capsys.readouterr().out)
    validate(doc)
    assert code == 1
    assert doc["source"] == "command"
    assert doc["target"]["reason"] == "command"
    assert doc["target"]["prefix"] == str(venv)


def test_a_command_that_succeeds_says_nothing(venv, capfd):
    assert main(["run", "--", _python(venv), "-c", "print('fine')"]) == 0
    assert capfd.readouterr().out.strip() == "fine"  # the command's own output, on the terminal's stdout


def test_a_failure_explain_does_not_know_keeps_its_exit_code_and_adds_nothing(venv, capsys):
    code = main(["run", "--", _python(venv), "-c", "raise SystemExit(3)"])
    assert code == 3
    assert capsys.readouterr().out == ""


def test_a_command_that_cannot_start_is_bad_input(capsys):
    assert main(["run", "--", "no-such-program-here"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not found on PATH" in err


def test_no_command_is_bad_input(capsys):
    assert main(["run"]) == 2
    assert "No command to run" in capsys.readouterr().err


def test_an_entry_point_script_leads_to_the_env_of_its_interpreter(venv, tmp_path):
    script = tmp_path / "tool"
    script.write_text(f"#!{_python(venv)}\nimport torch\n")
    script.chmod(0o755)
    assert main_run.env_of_command([str(script)]) == venv
    assert main_run.env_of_command([_python(venv)]) == venv
    plain = tmp_path / "plain"
    plain.write_text("echo hi\n")
    plain.chmod(0o755)
    assert main_run.env_of_command([str(plain)]) is None


def test_only_the_tail_of_a_huge_standard_error_is_kept(monkeypatch, venv, capsys):
    monkeypatch.setattr(main_run, "CAPTURE_LIMIT", 1000)
    code, data, cut = main_run.run_capturing(
        [_python(venv), "-c", "import sys; sys.stderr.write('x' * 100000 + 'THE END')"]
    )
    capsys.readouterr()
    assert code == 0 and cut
    assert len(data) == 1000 and data.endswith(b"THE END")
