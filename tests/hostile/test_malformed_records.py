"""Items 4 and 5 of the hostile-input issue: records that Python's json would crash on, YAML nested past the
composer's recursion, and path components longer than the OS allows. Each is a finding or the input error."""

from __future__ import annotations

import json

import pytest

from conda_torchcheck.cli.main import main
from tests.hostile.envs import build

RECORD = "numpy-2.1.0-py311h0_0.json"
VALID = '{"name": "numpy", "version": "2.1.0", "build": "py311h0_0", "build_number": %s}'


def check_json(capsys, *argv: str) -> tuple[int, dict]:
    code = main(["check", "--json", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, json.loads(out)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("[" * 100_000 + "]" * 100_000, "invalid JSON: nested more than 200 levels deep"),
        ('{"a": ' * 50_000 + "1" + "}" * 50_000, "invalid JSON: nested more than 200 levels deep"),
        (VALID % ("9" * 5000), "invalid JSON: a number of 5,000 digits"),
        (VALID % "Infinity", "invalid JSON: Infinity is not JSON"),
        (VALID % "NaN", "invalid JSON: NaN is not JSON"),
        (VALID % "1e999", "invalid JSON: 1e999 is out of range"),
    ],
    ids=["deep-list", "deep-object", "5000-digits", "infinity", "nan", "float-overflow"],
)
def test_conda_meta_record_python_would_crash_on(tmp_path, capsys, content, problem):
    b = build(tmp_path / "env", "conda")
    (b.prefix / "conda-meta" / RECORD).write_text(content, encoding="utf-8")
    code, doc = check_json(capsys, "-p", str(b.prefix))
    [f] = [f for f in doc["findings"] if f["id"] == "TC901"]
    assert f["evidence"]["problem"] == problem
    assert doc["torch"]["version"] == "2.5.1"  # the rest is still read


def test_a_deep_direct_url_json(tmp_path, capsys):
    b = build(tmp_path / "env", "venv")
    path = b.site_packages / "numpy-2.1.0.dist-info" / "direct_url.json"
    path.write_text('{"a": ' * 50_000 + "1" + "}" * 50_000, encoding="utf-8")
    code, doc = check_json(capsys, "-p", str(b.prefix))
    [f] = [f for f in doc["findings"] if f["id"] == "TC902"]
    assert f["evidence"]["file"] == str(path) and "nested" in f["evidence"]["problem"]


@pytest.mark.parametrize(
    "text",
    [
        "name: x\ndependencies: " + "[" * 100_000 + "]" * 100_000 + "\n",
        "name: x\ndependencies:\n" + "".join("  " * i + "- \n" for i in range(1, 3000)),
        "name: x\ndependencies:\n  - " + "9" * 5000 + "\n",
    ],
    ids=["deep-flow", "deep-block", "5000-digits"],
)
@pytest.mark.parametrize("verb", ["check", "fix"])
def test_spec_yaml_past_the_composer(tmp_path, capsys, text, verb):
    spec = tmp_path / "environment.yml"
    spec.write_text(text, encoding="utf-8")
    assert main(["spec", verb, str(spec)]) == 2
    out, err = capsys.readouterr()
    assert "Traceback" not in err and err.startswith("conda-torchcheck: error: ")
    assert len(err) < 600  # the 5,000 digits are named, not printed
    assert spec.read_text(encoding="utf-8") == text


def test_long_path_components(tmp_path, capsys):
    b = build(tmp_path / "env", "venv")
    long = "a" * 4000
    (b.prefix / "pyvenv.cfg").write_text(
        f"home = /{long}/bin\ninclude-system-site-packages = true\nversion = 3.11.9\n", encoding="utf-8"
    )
    (b.site_packages / "long.pth").write_text(f"/{long}\n{long}\n" + ".\n" * 2500, encoding="utf-8")
    code, doc = check_json(capsys, "-p", str(b.prefix))
    assert code in (0, 1) and "TC990" not in [f["id"] for f in doc["findings"]]
    code = main(["check", "-p", str(tmp_path / long)])
    out, err = capsys.readouterr()
    assert code == 2 and "File name too long" in err and "Traceback" not in err
