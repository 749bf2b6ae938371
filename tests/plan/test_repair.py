"""Each breakage class the suite builds on the real torch wheel, repaired from a local folder of real wheels to a
clean re-check and a real ``import torch``; rollback when a step fails midway."""

from __future__ import annotations

from dataclasses import replace

import pytest

from conda_torchcheck.findings import Fix, Severity, finding
from conda_torchcheck.inventory import load_environment
from conda_torchcheck.messages import msg
from conda_torchcheck.plan import PlanOptions, build_plan
from conda_torchcheck.plan.build import contradictions, unintended_torch_changes
from conda_torchcheck.plan.repair import repair
from conda_torchcheck.report import check_environment
from tests.plan import realenvs

pytestmark = [pytest.mark.realdata, pytest.mark.slow]


def _check(venv, variables):
    env, host = load_environment(venv, host_overrides=dict(variables) or None)
    return check_environment(env, host)


def _broken(real_env, tmp_path, breakage):
    """The env broken as ``breakage`` says, the user's variables, and the report; the break is checked real."""
    venv, house = real_env
    variables = realenvs.BREAKAGES[breakage](venv, tmp_path, house)
    assert realenvs.real_import(venv, variables) is not None or breakage.startswith("torchvision"), breakage
    before = _check(venv, variables)
    assert before.has_errors, breakage
    return venv, house, variables, before


@pytest.mark.parametrize("breakage", sorted(realenvs.BREAKAGES))
def test_each_breakage_gets_a_verified_plan_without_torch_changes_or_contradictions(real_env, tmp_path, breakage):
    venv, house, _variables, before = _broken(real_env, tmp_path, breakage)
    plan = build_plan(before, PlanOptions(find_links=(str(house),)))
    if breakage in realenvs.NEEDS_CPU_TORCHVISION and not realenvs.cpu_torchvision(house):
        assert plan.steps == []  # test_a_cuda_torchvision_is_not_offered_for_a_cpu_torch says why
        return
    assert plan.steps, (breakage, plan.dropped)
    for step in plan.steps:
        assert step.verification.status in ("verified", "exact"), (step, plan.dropped)
    assert unintended_torch_changes(plan) == []
    assert contradictions(plan) == 0
    # one root cause, one step: a consequence's own fix (a torch reinstall for a library another torch lacks)
    # is not offered beside the cause's
    roots = [f for f in before.findings if f.severity is not Severity.INFO]
    assert len(plan.steps) <= len(roots), ([f.id for f in roots], [s.commands for s in plan.steps])


@pytest.mark.parametrize("breakage", sorted(realenvs.BREAKAGES))
def test_each_breakage_is_repaired_to_a_clean_recheck_and_a_real_import(real_env, tmp_path, breakage):
    if breakage in realenvs.NEEDS_CPU_TORCHVISION and not realenvs.cpu_torchvision(real_env[1]):
        pytest.skip("no torchvision +cpu wheel in the folder (test_a_cuda_torchvision_is_not_offered covers it)")
    venv, house, variables, before = _broken(real_env, tmp_path, breakage)
    plan = build_plan(before, PlanOptions(find_links=(str(house),)))
    outcome = repair(before, plan, lambda v: _check(venv, v), variables)
    assert outcome.better, (outcome.to_dict(), [f.id for f in outcome.after.findings])
    assert not outcome.after.has_errors
    assert outcome.after.counts["warnings"] == 0, [f.id for f in outcome.after.findings]
    # a variable step is printed for the user's shell; the import runs with the variables as the plan leaves them
    assert realenvs.real_import(venv, outcome.variables) is None
    if breakage.startswith("torchvision"):
        assert realenvs.real_import(venv, outcome.variables, "torchvision") is None


def test_a_cuda_torchvision_is_not_offered_for_a_cpu_torch(real_env, tmp_path):
    """PyPI's Linux torchvision 0.28.0 is a CUDA build: pip resolves the step, but the CPU torch cannot load it
    (``operator torchvision::nms does not exist``), so neither the family step nor the --no-deps one is offered."""
    venv, house = real_env
    if realenvs.cpu_torchvision(house):
        pytest.skip("the folder has a +cpu torchvision: the repair test covers this class")
    realenvs.BREAKAGES["torchvision-of-another-torch"](venv, tmp_path, house)
    plan = build_plan(_check(venv, {}), PlanOptions(find_links=(str(house),)))
    assert plan.steps == []
    assert len(plan.dropped) == 2
    assert all("needs its +cpu build" in d.reason for d in plan.dropped)
    assert "--no-deps" in plan.dropped[1].commands[0]


def test_a_step_that_fails_midway_rolls_the_env_back(real_env, tmp_path):
    venv, house = real_env
    realenvs.BREAKAGES["missing-typing-extensions"](venv, tmp_path, house)
    before = _check(venv, {})
    plan = build_plan(before, PlanOptions(find_links=(str(house),)))
    [good] = plan.steps
    py = good.commands[0].split(" -m pip ")[0]
    failing = replace(
        good, finding="TC209", commands=(f"{py} -m pip install --no-index --find-links {house} no-such-wheel==9.9",)
    )
    plan.steps.append(failing)
    outcome = repair(before, plan, lambda v: _check(venv, v))
    assert [r.status for r in outcome.runs] == ["applied", "failed"]
    assert not outcome.better and outcome.rolled_back
    assert outcome.undo.pip["typing-extensions"] is None  # added by the plan: the rollback removes it
    assert realenvs.real_import(venv) == "ModuleNotFoundError: No module named 'typing_extensions'"
    assert [f.id for f in outcome.after.findings if f.severity is Severity.ERROR] == ["TC209"]


def test_a_fix_pip_turns_into_another_torch_is_not_offered(real_env, tmp_path):
    """The issue's case: `pip install --force-reinstall torchvision` beside a torchvision built for another torch
    would (per pip's dry run) replace the CPU torch; the plan offers the matching torchvision alone, --no-deps."""
    venv, house = real_env
    realenvs.BREAKAGES["torchvision-of-another-torch"](venv, tmp_path, house)
    before = _check(venv, {})
    py = f'"{venv}/bin/python" -m pip'
    harmful = finding(
        "TC401",
        Severity.ERROR,
        evidence={"package": "torchvision"},
        fixes=[Fix("pip", msg("TC401.fix.reinstall_torch"), commands=(f"{py} install --force-reinstall torchvision",))],
    )
    # pip's own configuration decides what it sees; this needs a source that offers another torch
    plan = build_plan(replace(before, findings=[harmful]), PlanOptions())
    if not plan.dropped:
        pytest.skip("pip's sources here offer no other torch for torchvision to pull in")
    [dropped] = [d for d in plan.dropped if "--force-reinstall" in d.commands[0]]
    assert "would change torch 2.13.0+cpu ->" in dropped.reason
    # the safer step: the matching torchvision alone, --no-deps; offered only where it is the right build
    safer = [c for d in plan.dropped for c in d.commands if "--no-deps" in c] + [
        c for s in plan.steps for c in s.commands
    ]
    assert safer and all("--no-deps" in c and "torchvision==0.28.*" in c for c in safer)
    assert all(s.verification.torch_change is None for s in plan.steps)


def test_conda_doctor_fix_applies_the_same_plan(real_env, tmp_path, capsys):
    from conda_torchcheck.hooks import health

    venv, house = real_env
    realenvs.BREAKAGES["missing-typing-extensions"](venv, tmp_path, house)
    _report, plan = health.report_plan(str(venv))
    [step] = plan.steps
    if step.verification.status != "verified":
        pytest.skip(f"pip cannot reach a source for typing-extensions here: {step.verification.reason}")
    asked = []
    assert health.fix(str(venv), None, asked.append) == 0
    assert len(asked) == 1
    assert step.commands[0] in capsys.readouterr().out
    assert realenvs.real_import(venv) is None


def test_the_repair_verb_prints_a_variable_step_for_the_shell_and_rechecks_with_it(real_env, tmp_path, capsys):
    """A torch.py on PYTHONPATH: `repair --yes` changes nothing in the env, prints `unset PYTHONPATH` for the
    user's shell, and its re-check with PYTHONPATH as the step leaves it is clean."""
    from conda_torchcheck.cli.main import main

    venv, house, variables, _before = _broken(real_env, tmp_path, "torch-py-on-pythonpath")
    before = sorted(p.name for p in realenvs.site(venv).iterdir())
    code = main(["repair", "-p", str(venv), "--yes", "--env", f"PYTHONPATH={variables['PYTHONPATH']}"])
    out = capsys.readouterr().out
    assert code == 0, out
    shell = out.split("For your shell", 1)[1]
    assert "unset PYTHONPATH" in shell
    assert "After: 0 error(s), 0 warning(s)" in out
    assert sorted(p.name for p in realenvs.site(venv).iterdir()) == before
    assert realenvs.real_import(venv, {"PYTHONPATH": ""}) is None
