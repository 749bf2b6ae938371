"""conda steps checked by conda's own solver (in-process, as under ``conda torchcheck``) and applied by conda,
against the suite's local channels of real conda packages (tests/plugin/channel.py). It tests
conda_torchcheck/plan; it lives here for conda's fixtures in tests/plugin/conftest.py."""

from __future__ import annotations

import pytest

from tests.plugin.conftest import CONDA, SKIP_REASON
from tests.plugin.helpers import BROKEN, CHANNELS, one_json_document

pytestmark = [pytest.mark.skipif(not CONDA, reason=SKIP_REASON), pytest.mark.conda, pytest.mark.slow]


def _check(prefix, variables=None):
    from conda_torchcheck.inventory import load_environment
    from conda_torchcheck.report import check_environment

    env, host = load_environment(prefix, host_overrides=dict(variables or {}) or None)
    return check_environment(env, host)


def test_a_conda_torchvision_of_another_torch_is_planned_verified_and_repaired(conda_cli, conda_home, monkeypatch):
    from conda_torchcheck.plan import build_plan, resolvers
    from conda_torchcheck.plan.repair import repair

    prefix = conda_home / "broken"
    _out, _err, rc = conda_cli("create", "-p", prefix, *CHANNELS, "-y", *BROKEN)
    assert rc == 0
    monkeypatch.setattr(resolvers, "IN_PROCESS_CONDA", True)  # as under `conda torchcheck`
    before = _check(prefix)
    assert "TC104" in [f.id for f in before.findings]
    plan = build_plan(before)
    [step] = [s for s in plan.steps if s.finding == "TC104"]
    assert step.verification.status == "verified", step.verification
    assert step.verification.by == "conda's solver (in-process)"
    vision = next(c for c in step.verification.changes if c.name == "torchvision")
    assert vision.before.startswith("0.15.2") and vision.after.startswith("0.20.1")
    assert step.verification.torch_change is None
    outcome = repair(before, plan, lambda v: _check(prefix, v))
    assert outcome.undo.conda_revision is not None
    assert outcome.better, outcome.to_dict()
    assert "TC104" not in [f.id for f in outcome.after.findings]


def test_conda_torchcheck_repair_shows_then_applies_the_plan(conda_cli, conda_home, monkeypatch):
    from conda_torchcheck.plan import resolvers

    prefix = conda_home / "broken-cli"
    _out, _err, rc = conda_cli("create", "-p", prefix, *CHANNELS, "-y", *BROKEN)
    assert rc == 0
    monkeypatch.setattr(resolvers, "IN_PROCESS_CONDA", True)
    out, err, rc = conda_cli("torchcheck", "repair", "-p", prefix, "--dry-run")
    assert rc == 1 and out.startswith("Fix plan (") and "checked by conda's solver" in out, err
    out, err, rc = conda_cli("torchcheck", "repair", "-p", prefix, "--dry-run", "--json")
    assert one_json_document(out)["plan"]["steps"][0]["verification"]["status"] == "verified"
    out, err, rc = conda_cli("torchcheck", "repair", "-p", prefix, "--yes")
    assert rc == 0, out + err
    assert "After: 0 error(s)" in out
    assert "TC104" not in [f.id for f in _check(prefix).findings]
