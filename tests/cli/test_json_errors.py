"""With --json (or --format json) an input problem is still one JSON document on stdout, exit code 2."""

from __future__ import annotations

import json

import pytest

from conda_torchcheck.cli.main import json_requested, main

ERROR_KEYS = {"schema", "tool", "kind", "error", "exception_name", "exception_type", "message", "hint", "exit_code"}


def run(capsys, *argv: str) -> tuple[dict, str, int]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return json.loads(out), err, rc


@pytest.mark.parametrize(
    "argv, name, words",
    [
        (["-p", "/no/such/env", "--json"], "TargetError", "does not exist"),
        (["check", "-n", "no-such-env", "--json"], "TargetError", "no environment named 'no-such-env'"),
        (["check", "--bogus", "--json"], "UsageError", "unrecognized arguments: --bogus"),
        (["check", "--format", "json", "--only"], "UsageError", "--only: expected one argument"),
        (["check", "--format=json", "--lang", "xx"], "UsageError", "invalid choice: 'xx'"),
        (["tree", "-p", "/no/such/env", "--format", "json"], "TargetError", "does not exist"),
        (["spec", "check", "/no/such/environment.yml", "--json"], "SpecFileError", "no such file"),
        (["explain", "--json", "--file", "/no/such/paste.txt"], "UsageError", "cannot read"),
    ],
)
def test_input_errors_are_one_json_document(capsys, argv, name, words):
    doc, err, rc = run(capsys, *argv)
    assert rc == 2 and err == ""
    assert set(doc) == ERROR_KEYS
    assert doc["exception_name"] == name and words in doc["message"]
    assert doc["error"] == f"{name}: {doc['message']}" and doc["exit_code"] == 2 and doc["schema"] == 1


def test_malformed_yaml_with_json(capsys, tmp_path):
    spec = tmp_path / "environment.yml"
    spec.write_text("name: x\ndependencies:\n\t- pytorch\n")
    doc, err, rc = run(capsys, "spec", "check", str(spec), "--json")
    assert rc == 2 and doc["exception_name"] == "SpecFileError" and "tab" in doc["message"]


def test_without_json_usage_errors_stay_argparse_lines(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["check", "--bogus"])
    out, err = capsys.readouterr()
    assert exc.value.code == 2 and out == "" and "error: unrecognized arguments: --bogus" in err


@pytest.mark.parametrize(
    "argv, wanted",
    [
        (["--json"], True),
        (["--format", "json"], True),
        (["--format=json"], True),
        (["--format", "text"], False),
        (["explain", "--", "--json"], False),
        (["explain", "some --format"], False),
    ],
)
def test_json_requested(argv, wanted):
    assert json_requested(argv) is wanted
