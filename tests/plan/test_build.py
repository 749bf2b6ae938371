"""The plan from findings, without asking a resolver: order, one step per command set, no step that undoes
another, and "not verified" where no resolver could be asked."""

from __future__ import annotations

from dataclasses import replace

from conda_torchcheck.findings import Fix, Severity, finding
from conda_torchcheck.inventory import load_environment
from conda_torchcheck.messages import msg
from conda_torchcheck.plan import PlanOptions, build_plan
from conda_torchcheck.plan.actions import parse
from conda_torchcheck.report import check_environment


def _report(builder, findings):
    env, host = load_environment(builder.prefix)
    return replace(check_environment(env, host, only=["TC999"]), findings=findings)


def _fix(*commands: str, kind="pip") -> Fix:
    return Fix(kind, msg("TC404.fix", directory="/x"), commands=commands)


def test_repeated_commands_are_one_step_that_fixes_both(make_env):
    b = make_env(layout="venv")
    b.pip_torch("2.5.1")
    first = finding("TC404", Severity.ERROR, fixes=[_fix("unset LD_LIBRARY_PATH", kind="env")])
    second = finding("TC402", Severity.ERROR, fixes=[_fix("unset LD_LIBRARY_PATH", kind="env")])
    plan = build_plan(_report(b, [first, second]))
    [step] = plan.steps
    assert (step.finding, step.also_fixes) == ("TC404", ("TC402",))
    assert step.verification.status == "exact"


def test_a_step_that_undoes_an_earlier_one_is_dropped_and_the_next_fix_is_taken(make_env):
    b = make_env(layout="venv")
    b.pip_torch("2.5.1")
    py = f'"{b.prefix}/bin/python" -m pip'
    keep = finding("TC104", Severity.ERROR, fixes=[_fix(f'{py} install "torchvision==0.20.*"')])
    undo = finding(
        "TC209",
        Severity.WARNING,
        fixes=[_fix(f"{py} uninstall -y torchvision"), Fix("system", msg("TC404.fix", directory="/x"))],
    )
    plan = build_plan(_report(b, [keep, undo]), PlanOptions(verify=False))
    assert [s.finding for s in plan.steps] == ["TC104", "TC209"]
    assert plan.steps[1].verification.status == "manual"
    [dropped] = plan.dropped
    assert dropped.finding == "TC209" and "step 1" in dropped.reason
    # contradictory fixes in one plan: none
    touched = [t for s in plan.steps for c in s.commands for t in parse(c).targets]
    assert len(touched) == len(set(touched))


def test_no_resolver_asked_says_not_verified(make_env):
    b = make_env(layout="venv")  # its python is a header-only stand-in: it cannot run
    b.pip_torch("2.5.1")
    f = finding("TC104", Severity.ERROR, fixes=[_fix(f'"{b.prefix}/bin/python" -m pip install "torchvision==0.20.*"')])
    plan = build_plan(_report(b, [f]))
    [step] = plan.steps
    assert step.verification.status == "not verified"
    assert step.verification.reason
    assert plan.verified is False
    assert plan.to_dict()["steps"][0]["verification"]["status"] == "not verified"


def test_a_windows_env_examined_from_linux_is_not_verified(make_env):
    b = make_env(os="windows", layout="venv")
    b.pip_torch("2.5.1")
    f = finding("TC104", Severity.ERROR, fixes=[_fix(f'"{b.prefix}\\Scripts\\python.exe" -m pip install torchvision')])
    [step] = build_plan(_report(b, [f])).steps
    assert step.verification.status == "not verified"
    assert "windows" in (step.verification.reason or "")


def test_info_findings_make_no_steps(make_env):
    b = make_env(layout="venv")
    b.pip_torch("2.5.1")
    note = finding("TC404", Severity.INFO, fixes=[_fix("unset LD_LIBRARY_PATH", kind="env")])
    assert build_plan(_report(b, [note])).steps == []


def test_check_carries_the_plan_in_json_and_text(make_env, capsys):
    import json

    from conda_torchcheck.cli.main import main

    b = make_env(layout="venv")
    b.pip_torch("2.5.1")
    b.dist("torchvision", "0.22.0", installer="pip")  # built for torch 2.7: TC104
    assert main(["check", "--json", "-p", str(b.prefix)]) == 1
    doc = json.loads(capsys.readouterr().out)
    [step] = [s for s in doc["plan"]["steps"] if s["finding"] == "TC104"]
    assert step["verification"]["status"] == "not verified"  # the stand-in python cannot run pip
    assert doc["plan"]["verified"] is False
    main(["check", "-p", str(b.prefix)])
    text = capsys.readouterr().out
    assert "Fix plan (" in text and "not verified:" in text
    assert text.count("-m pip install torch==2.5.1") == 1  # the fix is shown once, in the plan
    main(["check", "-p", str(b.prefix), "--no-resolver"])
    assert "not asked (--no-resolver)" in capsys.readouterr().out


def test_markdown_carries_the_plan_once(make_env, capsys):
    from conda_torchcheck.cli.main import main

    b = make_env(layout="venv")
    b.pip_torch("2.5.1")
    b.dist("torchvision", "0.22.0", installer="pip")  # built for torch 2.7: TC104
    main(["check", "--format", "markdown", "-p", str(b.prefix)])
    text = capsys.readouterr().out
    assert "### Fix plan (" in text
    assert "1. **TC104**" in text
    assert text.count("-m pip install torch==2.5.1") == 1  # in the plan, not again in the finding's section
    assert "   ```shell" in text  # the commands inside the step's list item
    assert "not verified:" in text


def test_the_plan_speaks_the_report_language(make_env, capsys):
    from conda_torchcheck.cli.main import main
    from conda_torchcheck.render.markdown import render_markdown
    from conda_torchcheck.render.text import render_text

    b = make_env(layout="venv")
    b.pip_torch("2.5.1")
    py = f'"{b.prefix}/bin/python" -m pip'
    keep = finding("TC104", Severity.ERROR, fixes=[_fix(f'{py} install "torchvision==0.20.*"')])
    undo = finding("TC209", Severity.WARNING, fixes=[_fix(f"{py} uninstall -y torchvision")])
    unset = finding("TC404", Severity.WARNING, fixes=[_fix("unset LD_LIBRARY_PATH", kind="env")])
    report = _report(b, [keep, undo, unset])
    report.plan = build_plan(report, PlanOptions(verify=False, lang="zh_CN"))
    assert report.plan.steps[0].verification.reason == "未询问解析器（--no-resolver）"
    assert report.plan.steps[1].changes == "当前 shell 环境中的 LD_LIBRARY_PATH"
    assert report.plan.dropped[0].reason.startswith("会撤销第 1 步或与之矛盾")
    for text in (render_text(report, lang="zh_CN"), render_markdown(report, lang="zh_CN")):
        assert "修复计划（共 2 步，按此顺序）" in text
        assert "未验证：未询问解析器" in text and "未采用（TC209）" in text
    english = build_plan(report, PlanOptions(verify=False))
    assert english.steps[1].changes == "LD_LIBRARY_PATH in this shell's environment"
    # the CLI passes --lang to the plan: no English plan words in a zh_CN report
    b.dist("torchvision", "0.22.0", installer="pip")
    main(["check", "--lang", "zh_CN", "-p", str(b.prefix)])
    out = capsys.readouterr().out
    assert "修复计划" in out and "not verified" not in out and "checking it runs" not in out
