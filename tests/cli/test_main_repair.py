"""``repair`` at the command line: the plan shown, one question, nothing changed without an answer."""

from __future__ import annotations

import json

from conda_torchcheck.cli.main import main


def _broken(make_env):
    b = make_env(layout="venv")
    b.pip_torch("2.5.1")
    b.dist("torchvision", "0.22.0", installer="pip")  # built for torch 2.7: TC104
    return b


def test_dry_run_shows_the_plan_and_changes_nothing(make_env, capsys):
    b = _broken(make_env)
    before = sorted(p.name for p in b.site_packages.iterdir())
    assert main(["repair", "-p", str(b.prefix), "--dry-run"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("Fix plan (1 step(s)")
    assert "torchvision==0.20.*" in out
    assert sorted(p.name for p in b.site_packages.iterdir()) == before
    main(["repair", "-p", str(b.prefix), "--dry-run", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["kind"] == "repair" and doc["applied"] is False
    assert doc["plan"]["steps"][0]["finding"] == "TC104"


def test_without_yes_and_without_a_terminal_it_asks_nothing_and_refuses(make_env, capsys, monkeypatch):
    b = _broken(make_env)
    monkeypatch.setattr("sys.stdin.isatty", lambda: False, raising=False)
    assert main(["repair", "-p", str(b.prefix)]) == 2
    assert "--yes" in capsys.readouterr().err


def test_a_healthy_env_has_nothing_to_repair(make_env, capsys):
    b = make_env(layout="venv")
    b.pip_torch("2.5.1")
    assert main(["repair", "-p", str(b.prefix), "--yes"]) == 0
    assert capsys.readouterr().out == "nothing to repair\n"


def test_repair_speaks_the_report_language(make_env, capsys):
    b = _broken(make_env)
    main(["repair", "-p", str(b.prefix), "--dry-run", "--lang", "zh_CN"])
    out = capsys.readouterr().out
    assert out.startswith("修复计划（共 1 步，按此顺序）")
    assert "改动：" in out and "changes:" not in out
    healthy = make_env(name="healthy", layout="venv")
    healthy.pip_torch("2.5.1")
    main(["repair", "-p", str(healthy.prefix), "--yes", "--lang", "zh_CN"])
    assert capsys.readouterr().out == "没有需要修复的内容\n"
