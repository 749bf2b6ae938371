"""Every JSON document of every verb, success and error, validates against the schema shipped in the package."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from conda_torchcheck.cli.main import main
from conda_torchcheck.schema import SCHEMA_FILE
from tests.checks.tc_helpers import healthy
from tests.cli.test_main_check import broken

SCHEMA = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
VALIDATOR = Draft202012Validator(SCHEMA)


def validate(doc: dict) -> None:
    errors = sorted(VALIDATOR.iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])


def documents(capsys, argv: list[str]) -> tuple[dict, int]:
    code = main(argv)
    out = capsys.readouterr().out
    return json.loads(out), code  # exactly one document


def test_the_schema_is_a_valid_json_schema():
    Draft202012Validator.check_schema(SCHEMA)


@pytest.fixture
def envs(make_env, tmp_path):
    spec = tmp_path / "environment.yml"
    spec.write_text("channels:\n  - pytorch\n  - defaults\ndependencies:\n  - python=3.11\n  - pytorch=1.13\n")
    return {
        "healthy_win": healthy(make_env(os="windows")).prefix,
        "broken": broken(make_env()).prefix,
        "no_torch": make_env(layout="venv").prefix,
        "spec": spec,
        "tmp": tmp_path,
    }


CASES = {
    "report, windows": lambda e: ["check", "-p", str(e["healthy_win"]), "--json"],
    "report, errors": lambda e: ["check", "-p", str(e["broken"]), "--json"],
    "report, no torch": lambda e: ["check", "-p", str(e["no_torch"]), "--json"],
    "report, format json": lambda e: ["check", "-p", str(e["broken"]), "--format", "json", "--lang", "zh_CN"],
    "repair, dry run": lambda e: ["repair", "-p", str(e["broken"]), "--dry-run", "--json"],
    "fleet": lambda e: ["check", "--all-envs", "-p", str(e["broken"]), "--json"],
    "tree, windows env": lambda e: ["tree", "-p", str(e["healthy_win"]), "--json"],
    "tree, ELF file": lambda e: ["tree", shutil.which("ls") or "/bin/ls", "--json"],
    "explain, no env": lambda e: [
        "explain",
        "--no-env",
        "--json",
        'OSError: [WinError 126] The specified module could not be found. Error loading "C:\\x\\torch\\lib\\shm.dll"',
    ],
    "explain, env": lambda e: ["explain", "-p", str(e["broken"]), "--json", "operator torchvision::nms does not exist"],
    "spec check": lambda e: ["spec", "check", str(e["spec"]), "--json"],
    "spec fix": lambda e: ["spec", "fix", str(e["spec"]), "--json"],
    "spec check, several files": lambda e: ["spec", "check", str(e["spec"]), str(_tabbed(e["tmp"])), "--json"],
    "hooks status": lambda e: ["hooks", "status", "-p", str(e["broken"]), "--json"],
    "hooks install": lambda e: ["hooks", "install", "-p", str(e["broken"]), "--json"],
    "list-checks": lambda e: ["list-checks", "--json"],
    "docs": lambda e: ["docs", "TC301", "--json"],
    "docs index": lambda e: ["docs", "--json"],
    # input problems
    "error, missing target": lambda e: ["check", "-p", str(e["tmp"] / "nope"), "--json"],
    "error, unknown name": lambda e: ["check", "-n", "no-such-env-here", "--json"],
    "error, bad option": lambda e: ["check", "--bogus", "--json"],
    "error, tree": lambda e: ["tree", "-p", str(e["tmp"] / "nope"), "--json"],
    "error, malformed yaml": lambda e: ["spec", "check", str(_tabbed(e["tmp"])), "--json"],
    "error, explain file": lambda e: ["explain", "--json", "--file", str(e["tmp"] / "nope.txt")],
    "error, docs": lambda e: ["docs", "TC999", "--json"],
    "error, hooks": lambda e: ["hooks", "status", "-p", str(e["tmp"] / "nope"), "--json"],
}


def _tabbed(tmp: Path) -> Path:
    path = tmp / "tabbed.yml"
    path.write_text("name: x\ndependencies:\n\t- pytorch\n")
    return path


@pytest.mark.parametrize("case", list(CASES))
def test_every_verb_output_validates(capsys, envs, case):
    doc, code = documents(capsys, CASES[case](envs))
    validate(doc)
    assert (doc["kind"] == "error") == case.startswith("error"), doc.get("message")
    if doc["kind"] == "error":
        assert code == 2


def test_a_report_with_loader_facts_validates(make_env):
    # the facts table (what the loader models bound) is in the JSON only when a check computed it
    from conda_torchcheck.checks.context import CheckContext
    from conda_torchcheck.inventory import load_environment
    from conda_torchcheck.report import Report

    env, host = load_environment(healthy(make_env()).prefix)
    ctx = CheckContext(env, host)
    facts = {"libstdcxx": "libstdc++.so.6 (GLIBCXX_3.4.32): /usr/lib/x86_64-linux-gnu/libstdc++.so.6"}
    doc = Report(env=env, host=host, torch=ctx.torch, findings=[], facts=facts).to_dict()
    assert doc["facts"] == facts
    validate(doc)
