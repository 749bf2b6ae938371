"""The runner: which checks run for an OS (from conda_torchcheck.registry), and what a check stopped by an
exception leaves in the report."""

from __future__ import annotations

import importlib

from conda_torchcheck import registry
from conda_torchcheck.checks import Check, all_checks, run_checks
from conda_torchcheck.findings import Severity, finding
from tests.checks.tc_helpers import context


def test_every_registered_check_module_declares_the_registry_entry():
    for entry in registry.CHECKS:
        check = importlib.import_module(entry.module).CHECK
        assert (check.name, check.ids, check.summary, check.platforms) == (
            entry.name,
            entry.ids,
            entry.summary,
            entry.platforms,
        ), entry.module


def test_the_os_filter_is_the_registry_s_platforms():
    every = all_checks()
    assert [c.name for c in every] == [e.name for e in registry.CHECKS]
    for os_name in ("windows", "linux", "darwin"):
        assert [c.name for c in all_checks(os_name)] == [c.name for c in every if os_name in c.platforms]


def test_the_os_filter_imports_no_check_of_another_os():
    import subprocess
    import sys

    code = (
        "import sys; from conda_torchcheck.checks import all_checks; all_checks('linux'); "
        "print(sorted(m for m in sys.modules if m.startswith(('conda_torchcheck.checks.win_', "
        "'conda_torchcheck.checks.mac_'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.strip() == "[]"


def _stopping(exc: BaseException):
    def run(ctx):
        yield finding("TC101", Severity.WARNING, variant="family", packages="a, b", builders="x, y")
        raise exc

    return run


def test_a_check_stopped_by_a_bad_value_keeps_what_it_found_and_names_the_value(make_env, monkeypatch):
    import conda_torchcheck.checks as checks

    bad = ValueError("invalid literal for int() with base 10: '1' * 5000")
    check = Check("stops", ("TC101",), "stops half-way", _stopping(bad))
    monkeypatch.setattr(checks, "all_checks", lambda target_os=None: [check])
    found = run_checks(context(make_env()))
    assert sorted(f.id for f in found) == ["TC101", "TC909"]
    stop = next(f for f in found if f.id == "TC909")
    assert (stop.severity, stop.check, stop.evidence["check"]) == (Severity.WARNING, "stops", "stops")
    assert stop.evidence["error"].startswith("ValueError: invalid literal for int()")
    assert "stops" in stop.title.render() and "TC909" not in stop.title.render()
    assert "invalid literal" in stop.explanation.render("zh_CN")
    assert all(f.check == "stops" for f in found)


def test_a_huge_bad_value_is_cut_in_the_report(make_env, monkeypatch):
    import conda_torchcheck.checks as checks

    check = Check("stops", ("TC101",), "stops", _stopping(OverflowError("x" * 1_000_000)))
    monkeypatch.setattr(checks, "all_checks", lambda target_os=None: [check])
    stop = next(f for f in run_checks(context(make_env())) if f.id == "TC909")
    assert len(stop.evidence["error"]) < 600 and stop.evidence["error"].endswith("(1000015 characters)")


def test_a_bug_is_still_tc990_and_keeps_what_the_check_found(make_env, monkeypatch):
    import conda_torchcheck.checks as checks

    check = Check("buggy", ("TC101",), "has a bug", _stopping(AttributeError("'NoneType' object has no attribute 'x'")))
    monkeypatch.setattr(checks, "all_checks", lambda target_os=None: [check])
    assert sorted(f.id for f in run_checks(context(make_env()))) == ["TC101", "TC990"]


def test_a_stopped_check_says_so_under_only_and_not_under_skip(make_env, monkeypatch):
    import conda_torchcheck.checks as checks

    check = Check("stops", ("TC101",), "stops", _stopping(RecursionError("maximum recursion depth exceeded")))
    monkeypatch.setattr(checks, "all_checks", lambda target_os=None: [check])
    ctx = context(make_env())
    assert sorted(f.id for f in run_checks(ctx, only=["TC101"])) == ["TC101", "TC909"]
    assert [f.id for f in run_checks(ctx, skip=["TC9"])] == ["TC101"]
