"""check --all-envs: every env conda knows (base, envs dirs, environments.txt) plus -p, one line each and a total;
JSON is one document; an env that cannot be read is a line, not the end; the exit code is the worst."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conda_torchcheck import fleet
from conda_torchcheck.cli.main import main
from conda_torchcheck.inventory.locate import known_envs
from tests.checks.tc_helpers import healthy
from tests.cli.test_main_check import broken
from tests.envbuilder import EnvBuilder


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """A home with a miniforge base, three named envs (healthy, broken, no torch) and one listed only in
    environments.txt."""
    home = Path(os.environ["HOME"])
    base = EnvBuilder(home / "miniforge3", layout="conda")
    (base.prefix / "condabin").mkdir()
    base.conda_record("conda", "25.1.1", "py311h38be061_0")
    healthy(EnvBuilder(home / "miniforge3" / "envs" / "good", layout="conda"))
    broken(EnvBuilder(home / "miniforge3" / "envs" / "bad", layout="conda"))
    EnvBuilder(home / "miniforge3" / "envs" / "empty", layout="conda")
    elsewhere = healthy(EnvBuilder(tmp_path / "projects" / "proj-env", layout="conda"))
    (home / ".conda").mkdir(exist_ok=True)
    (home / ".conda" / "environments.txt").write_text(f"{base.prefix}\n{elsewhere.prefix}\n{tmp_path}/gone\n")
    for var in ("CONDA_EXE", "CONDA_ROOT", "MAMBA_ROOT_PREFIX", "CONDA_ENVS_PATH", "CONDA_ENVS_DIRS", "CONDARC"):
        monkeypatch.delenv(var, raising=False)
    return home, elsewhere.prefix


def test_known_envs_finds_base_envs_dirs_and_environments_txt(machine):
    home, elsewhere = machine
    found = known_envs()
    prefixes = [p for p, _ in found]
    base = home / "miniforge3"
    assert prefixes[:1] == [base]
    assert {base / "envs" / n for n in ("good", "bad", "empty")} <= set(prefixes)
    assert prefixes[-1] == elsewhere and len(prefixes) == len(set(prefixes)) == 5  # `gone` no longer exists


def test_text_one_line_per_env_and_a_total(machine, capsys):
    code = main(["check", "--all-envs"])
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "5 environment(s) on this machine:"
    by_name = {
        name: line
        for line in lines[1:6]
        for name in ("good", "bad", "empty", "base", "proj-env")
        if f" {name} " in line
    }
    assert by_name["bad"].split()[0] == "ERROR" and "TC104" in by_name["bad"]
    assert by_name["good"].split()[0] in ("ok", "WARNING") and "torch 2.5.1 (conda" in by_name["good"]
    assert by_name["empty"].startswith("  no torch") and "torch not installed" in by_name["empty"]
    assert "5 environment(s): " in out and "1 with errors" in out
    assert code == 1  # the worst: an error finding


def test_an_unreadable_env_is_reported_not_fatal(machine, capsys, tmp_path):
    code = main(["check", "--all-envs", "-p", str(tmp_path / "no-such-env"), "--json"])
    doc = json.loads(capsys.readouterr().out)
    first = doc["envs"][0]
    assert (
        first["status"] == "unreadable"
        and first["found_in"] == ["-p"]
        and "does not exist" in first["error"]["message"]
    )
    assert doc["summary"] == {"envs": 6, "ok": 1, "warnings": 1, "errors": 1, "no_torch": 2, "unreadable": 1} or (
        doc["summary"]["envs"] == 6 and doc["summary"]["unreadable"] == 1
    )
    assert code == doc["exit_code"] == 2


def test_json_is_one_document_with_one_report_per_env(machine, capsys):
    assert main(["check", "--all-envs", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["kind"] == "fleet" and len(doc["envs"]) == 5
    for entry in doc["envs"]:
        assert entry["report"]["kind"] == "report" and entry["report"]["target"]["prefix"] == entry["prefix"]


def test_parallel_and_sequential_agree(machine):
    targets = known_envs()
    options = {"hashes": False, "only": [], "skip": [], "lang": None, "live": False}
    one = fleet.audit(targets, options, workers=1)
    two = fleet.audit(targets, options, workers=2)

    def strip(doc):
        return [{k: v for k, v in e.items() if k != "seconds"} for e in doc["envs"]]

    assert strip(one) == strip(two) and one["summary"] == two["summary"]


def test_name_and_all_envs_do_not_mix(machine, capsys):
    assert main(["check", "--all-envs", "-n", "good"]) == 2
    assert "--all-envs" in capsys.readouterr().err


def test_no_env_found_says_where_it_looked(capsys, monkeypatch):
    for var in ("CONDA_EXE", "CONDA_ROOT", "MAMBA_ROOT_PREFIX", "CONDA_ENVS_PATH", "CONDA_ENVS_DIRS", "CONDARC"):
        monkeypatch.delenv(var, raising=False)
    assert main(["check", "--all-envs"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("No conda environment found on this machine (looked in ") and "environments.txt" in out


def test_the_progress_line_fits_one_row_and_is_gone_at_the_end(monkeypatch):
    import io
    import os
    import sys

    from conda_torchcheck import fleet

    class Tty(io.StringIO):
        def isatty(self):
            return True

    stream = Tty()
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setattr("shutil.get_terminal_size", lambda fallback=(80, 24): os.terminal_size((70, 24)))
    show = fleet.stderr_progress()
    show(1, 2, "/a/very/long/prefix/" + "x" * 200)
    show(2, 2, "/b")
    writes = stream.getvalue().split("\r\033[K")
    assert all(len(w) <= 69 for w in writes)
    # the last write erases the line and writes nothing: the table that follows stands alone
    assert writes[-1] == ""


def test_text_and_json_agree_on_every_verdict_count(machine, capsys):
    main(["check", "--all-envs", "--json"])
    doc = json.loads(capsys.readouterr().out)
    main(["check", "--all-envs"])
    text = capsys.readouterr().out
    counts = doc["summary"]
    verdicts = [e["verdict"] for e in doc["envs"]]
    assert counts["envs"] == len(verdicts)
    for verdict, key in (("ok", "ok"), ("warnings", "warnings"), ("errors", "errors"), ("no-torch", "no_torch")):
        assert counts[key] == verdicts.count(verdict)
    from conda_torchcheck.messages import translate

    assert translate("fleet.summary", "en", **counts) in text.splitlines()


def test_an_env_whose_torch_record_is_damaged_is_unreadable_not_without_torch(machine, capsys):
    """Issue 25: a pytorch record cut short by a crash, its files gone: "no torch" would be a guess; the line, the
    summary, the JSON and the single report say that torch's record cannot be read."""
    from tests.checks.tc_helpers import damaged_pytorch_record

    home, _ = machine
    b = EnvBuilder(home / "miniforge3" / "envs" / "cut", layout="conda")
    record = damaged_pytorch_record(b)
    main(["check", "--all-envs", "--json"])
    doc = json.loads(capsys.readouterr().out)
    [entry] = [e for e in doc["envs"] if e["prefix"] == str(b.prefix)]
    assert entry["verdict"] == "unreadable" and entry["torch"]["source"] == "unreadable-record"
    assert entry["torch"]["record"] == str(record)
    assert doc["summary"]["unreadable"] == 1
    main(["check", "--all-envs"])
    text = capsys.readouterr().out
    [line] = [line for line in text.splitlines() if " cut " in line]
    assert line.split()[0] == "UNREADABLE" and "torch's conda record cannot be read" in line
    assert "1 unreadable" in text
    main(["check", "-p", str(b.prefix)])
    single = capsys.readouterr().out.splitlines()
    assert single[2] == (
        "  torch's conda record (pytorch-2.5.1-py3.11_cuda12.1_cudnn9_0.json) cannot be read, so whether torch is"
        " installed cannot be told (TC901 below)"
    )
    assert not any("torch is not installed" in line for line in single[:3])
