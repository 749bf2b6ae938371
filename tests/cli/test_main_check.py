"""The `check` verb end to end: target selection, output formats, --only/--skip, exit codes, colour, list-checks."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

from conda_torchcheck.cli.main import main
from conda_torchcheck.inventory import locate
from tests.checks.tc_helpers import PY_DEP, healthy

MINE = "TC1,TC2,TC9"  # the finding ranges these fixtures are built for
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(autouse=True)
def _no_conda_installation(monkeypatch, tmp_path):
    """Name lookups see only what a test creates (HOME is already a temporary folder)."""
    for var in ("CONDA_EXE", "CONDA_ROOT", "MAMBA_ROOT_PREFIX", "CONDA_ENVS_PATH", "CONDA_ENVS_DIRS", "CONDARC"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(locate, "sys", types.SimpleNamespace(prefix=str(tmp_path / "tool-venv")))


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv: str) -> tuple[int, dict]:
    code, out, err = run(capsys, "check", "--json", *argv)
    assert err == ""
    return code, json.loads(out)  # the whole of stdout is one JSON document


def broken(b):
    """error (TC104), warnings (TC101, TC102) and a note (TC108) in one conda env."""
    b.conda_pytorch("2.5.1", "py3.11_cpu_0", channel="pytorch", depends=PY_DEP)
    b.conda_record("pytorch-cuda", "12.4", "hc786d27_7", channel="pytorch")
    b.conda_python_package("torchvision", "0.19.1", "cpu_py311_h0000000_1", channel="conda-forge")
    return b


# --- target --------------------------------------------------------------------------------------------


def test_prefix(make_env, capsys):
    b = healthy(make_env())
    code, doc = run_json(capsys, "-p", str(b.prefix), "--only", MINE)
    assert code == 0
    assert doc["target"]["prefix"] == str(b.prefix)
    assert doc["torch"]["version"] == "2.5.1" and doc["torch"]["source"] == "conda"


def test_name_from_the_user_envs_dir(make_env, capsys, tmp_path):
    b = healthy(make_env(name="home/.conda/envs/torchenv"))
    code, doc = run_json(capsys, "-n", "torchenv", "--only", MINE)
    assert Path(doc["target"]["prefix"]) == b.prefix
    assert doc["target"]["name"] == "torchenv"


def test_name_from_an_installation(make_env, capsys, tmp_path):
    (tmp_path / "home" / "miniforge3" / "conda-meta").mkdir(parents=True)
    b = broken(make_env(name="home/miniforge3/envs/work"))
    code, doc = run_json(capsys, "-n", "work", "--only", "TC104")
    assert Path(doc["target"]["prefix"]) == b.prefix
    # conda finds it by name, so the fix says -n
    assert doc["findings"][0]["fixes"][0]["commands"][0].startswith("conda install -n work ")


def test_name_from_environments_txt(make_env, capsys, tmp_path):
    b = healthy(make_env(name="projects/vision"))
    (tmp_path / "home" / ".conda").mkdir(parents=True)
    (tmp_path / "home" / ".conda" / "environments.txt").write_text(f"{b.prefix}\n", encoding="utf-8")
    code, doc = run_json(capsys, "-n", "vision", "--only", MINE)
    assert Path(doc["target"]["prefix"]) == b.prefix


def test_unknown_name_is_exit_2(capsys):
    code, out, err = run(capsys, "check", "-n", "missing")
    assert code == 2 and out == ""
    assert err.splitlines()[0] == "conda-torchcheck: error: no environment named 'missing' was found"
    assert err.splitlines()[1].startswith("hint: looked in ")


def test_default_target_is_conda_prefix(make_env, capsys, monkeypatch):
    b = healthy(make_env())
    monkeypatch.setenv("CONDA_PREFIX", str(b.prefix))
    code, doc = run_json(capsys, "--only", MINE)
    assert doc["target"]["prefix"] == str(b.prefix)
    assert doc["target"]["is_active"] is True


def test_default_target_without_activation_is_the_running_env(capsys, monkeypatch):
    monkeypatch.setattr(locate, "sys", sys)
    code, doc = run_json(capsys, "--only", MINE)
    assert Path(doc["target"]["prefix"]) == Path(sys.prefix)


def test_verb_is_optional(make_env, capsys):
    b = healthy(make_env())
    code, out, err = run(capsys, "-p", str(b.prefix), "--only", MINE)
    assert code == 0 and out.startswith(f"Environment {b.prefix} (linux-64, conda)")


# --- output --------------------------------------------------------------------------------------------


def test_json_document_schema(make_env, capsys):
    b = broken(make_env())
    code, doc = run_json(capsys, "-p", str(b.prefix), "--only", MINE)
    assert {"schema", "tool", "target", "inventory", "torch", "findings", "summary"} <= set(doc)
    assert doc["schema"] == 1 and doc["tool"]["name"] == "conda-torchcheck"
    assert doc["summary"] == {"errors": 1, "warnings": 2, "info": 1}
    f = doc["findings"][0]
    assert set(f) >= {"id", "severity", "title", "explanation", "evidence", "fixes", "docs", "check"}
    assert f["docs"]["path"].endswith("/docs/findings/TC104.md") and Path(f["docs"]["path"]).is_file()
    assert f["docs"]["command"] == "conda-torchcheck docs TC104"
    family = {r["name"] for r in doc["inventory"]["torch_family"]["conda"]}
    assert {"pytorch", "pytorch-cuda", "torchvision"} <= family


def test_json_of_a_full_run_is_one_document(make_env, capsys):
    """All checks, including other areas': still exactly one JSON document and no internal errors on my envs."""
    b = broken(make_env())
    code, doc = run_json(capsys, "-p", str(b.prefix))
    assert "TC990" not in [f["id"] for f in doc["findings"]]


def test_text_groups_by_severity(make_env, capsys):
    b = broken(make_env())
    code, out, err = run(capsys, "check", "-p", str(b.prefix), "--only", MINE)
    heads = [line.split()[0] for line in out.splitlines() if re.match(r"^(ERROR|WARNING|INFO) TC\d{3}", line)]
    assert heads == ["ERROR", "WARNING", "WARNING", "INFO"]
    assert out.rstrip().endswith("1 error(s), 2 warning(s), 1 note(s)")
    assert err == ""


def test_text_in_chinese(make_env, capsys):
    b = broken(make_env())
    code, out, err = run(capsys, "check", "-p", str(b.prefix), "--only", "TC104", "--lang", "zh_CN")
    assert "错误 TC104" in out
    assert "与 torch 2.5.1 不匹配" in out


def test_json_and_text_format_contradict(make_env, capsys):
    b = healthy(make_env())
    code, out, err = run(capsys, "check", "-p", str(b.prefix), "--json", "--format", "text")
    # --json was asked for: a script reading stdout gets the error as JSON too
    doc = json.loads(out)
    assert code == 2 and err == "" and doc["message"].startswith("--json and --format text")


@pytest.mark.parametrize(
    ("only", "skip", "expected"),
    [
        (["--only", "TC104"], [], ["TC104"]),
        (["--only", "TC101,TC108"], [], ["TC101", "TC108"]),
        (["--only", "TC1"], [], ["TC104", "TC101", "TC102", "TC108"]),
        (["--only", "tc10"], ["--skip", "TC104"], ["TC101", "TC102", "TC108"]),
        (["--only", "TC1"], ["--skip", "TC10"], []),
        (["--only", "versions"], [], ["TC104"]),  # a check's name works too
        (["--only", "TC1"], ["--skip", "TC101", "--skip", "TC102"], ["TC104", "TC108"]),
    ],
)
def test_only_and_skip(make_env, capsys, only, skip, expected):
    b = broken(make_env())
    code, doc = run_json(capsys, "-p", str(b.prefix), *only, *skip)
    assert [f["id"] for f in doc["findings"]] == expected


# --- exit codes ----------------------------------------------------------------------------------------


def test_exit_0_without_errors(make_env, capsys):
    b = broken(make_env())
    assert run(capsys, "check", "-p", str(b.prefix), "--only", MINE, "--skip", "TC104")[0] == 0


def test_exit_1_with_an_error(make_env, capsys):
    b = broken(make_env())
    assert run(capsys, "check", "-p", str(b.prefix), "--only", MINE)[0] == 1


def test_exit_2_for_bad_host_option(make_env, capsys):
    b = healthy(make_env())
    code, out, err = run(capsys, "check", "-p", str(b.prefix), "--env", "NOEQUALS")
    assert code == 2 and out == ""
    assert err.strip() == "conda-torchcheck: error: --env expects NAME=VALUE, got 'NOEQUALS'"


def test_exit_2_for_prefix_and_name_together(capsys):
    with pytest.raises(SystemExit) as info:
        main(["check", "-p", "/x", "-n", "y"])
    assert info.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


# --- colour --------------------------------------------------------------------------------------------


def _tty(monkeypatch, value: bool):
    import conda_torchcheck.render.style as style

    real = style.wants_color
    monkeypatch.setattr(style, "wants_color", lambda stream=None: real(types.SimpleNamespace(isatty=lambda: value)))


def test_colour_on_a_tty(make_env, capsys, monkeypatch):
    b = broken(make_env())
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    _tty(monkeypatch, True)
    out = run(capsys, "check", "-p", str(b.prefix), "--only", MINE)[1]
    assert ANSI.search(out)
    assert ANSI.sub("", out).splitlines()[0] == f"Environment {b.prefix} (linux-64, conda)"


def test_no_colour_when_not_a_tty(make_env, capsys, monkeypatch):
    b = broken(make_env())
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    _tty(monkeypatch, False)
    assert not ANSI.search(run(capsys, "check", "-p", str(b.prefix), "--only", MINE)[1])


def test_no_colour_with_no_color_even_on_a_tty(make_env, capsys, monkeypatch):
    b = broken(make_env())
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("FORCE_COLOR", "1")
    _tty(monkeypatch, True)
    assert not ANSI.search(run(capsys, "check", "-p", str(b.prefix), "--only", MINE)[1])


def test_an_empty_no_color_does_not_count(make_env, capsys, monkeypatch):
    """no-color.org: NO_COLOR disables colour when it is set to a non-empty value."""
    b = broken(make_env())
    monkeypatch.setenv("NO_COLOR", "")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    _tty(monkeypatch, True)
    assert ANSI.search(run(capsys, "check", "-p", str(b.prefix), "--only", MINE)[1])


def test_no_colour_on_a_dumb_terminal(make_env, capsys, monkeypatch):
    b = broken(make_env())
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "dumb")
    _tty(monkeypatch, True)
    assert not ANSI.search(run(capsys, "check", "-p", str(b.prefix), "--only", MINE)[1])


def test_json_never_has_colour(make_env, capsys, monkeypatch):
    b = broken(make_env())
    monkeypatch.delenv("NO_COLOR", raising=False)
    _tty(monkeypatch, True)
    code, out, err = run(capsys, "check", "--json", "-p", str(b.prefix), "--only", MINE)
    assert not ANSI.search(out)


# --- list-checks ---------------------------------------------------------------------------------------


def test_list_checks_text(capsys):
    code, out, err = run(capsys, "list-checks")
    assert code == 0 and err == ""
    assert out.splitlines()[0] == "Checks (finding ids in brackets):"
    assert re.search(r"^  pip_conda +\[TC201, TC202, TC208\]", out, re.M)
    assert re.search(r"^  mkl_ijit +\[TC105\] \(linux\)", out, re.M)


def test_list_checks_json(capsys):
    code, out, err = run(capsys, "list-checks", "--json")
    doc = json.loads(out)["checks"]
    by_name = {c["name"]: c for c in doc}
    titles = {i["id"]: i["title"] for c in doc for i in c["ids"]}
    for name in ("channels", "variant", "versions", "mkl_ijit", "pip_conda", "duplicates", "shadowing", "base_env"):
        assert name in by_name
    assert titles["TC101"] == "torch-family packages from different channels"
    assert all(not t.startswith("TC") for t in titles.values())  # every id has a catalog title


# --- one real process ----------------------------------------------------------------------------------


def test_python_dash_m(make_env):
    b = broken(make_env())
    proc = subprocess.run(
        [sys.executable, "-m", "conda_torchcheck", "check", "-p", str(b.prefix), "--json", "--only", MINE],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == ""
    assert json.loads(proc.stdout)["summary"]["errors"] == 1


def test_lang_does_not_stick_between_in_process_calls(make_env, capsys):
    from conda_torchcheck.cli.main import main
    from conda_torchcheck.messages import current_language

    env = make_env(os="linux", layout="venv")
    main(["-p", str(env.prefix), "--lang", "zh_CN"])
    assert "环境" in capsys.readouterr().out
    assert current_language() == "en"
    main(["-p", str(env.prefix)])
    assert "Environment" in capsys.readouterr().out


def test_input_errors_follow_the_language(tmp_path, capsys):
    from conda_torchcheck.cli.main import main

    assert main(["-p", str(tmp_path / "missing"), "--lang", "zh_CN"]) == 2
    err = capsys.readouterr().err
    assert "不存在" in err and err.count("\n") == 1


def test_check_never_runs_the_envs_python_for_its_plan(make_env, tmp_path, capsys):
    """The plan's pip steps would be checked by the env's own pip, which is the env's code: `check` runs it only
    with --verify-plan, and says how to have them checked."""
    b = make_env(os="linux", layout="venv")
    b.pip_torch("2.5.1")
    b.dist("torchvision", "0.15.2")  # built for torch 2.0: TC104, fixed with pip
    marker = tmp_path / "ran"
    for name in ("python", "python3"):
        exe = b.prefix / "bin" / name
        exe.parent.mkdir(parents=True, exist_ok=True)
        exe.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n", encoding="utf-8")
        exe.chmod(0o755)
    code, out, _ = run(capsys, "check", "--json", "-p", str(b.prefix))
    doc = json.loads(out)
    assert not marker.exists()
    pip_steps = [s for s in doc["plan"]["steps"] if "pip" in " ".join(s.get("commands", []))]
    assert pip_steps and all("--verify-plan" in (s["verification"]["reason"] or "") for s in pip_steps)
