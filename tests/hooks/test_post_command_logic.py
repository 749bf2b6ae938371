"""The post-command check without conda: what changed, the engine run, the ≤6-line summary, never raising."""

from __future__ import annotations

import pytest

from conda_torchcheck.findings import Severity, finding
from conda_torchcheck.hooks import post_command, transaction
from conda_torchcheck.hooks.activation import install as activation
from tests.hooks.fakes import rec


@pytest.fixture(autouse=True)
def _fresh_log(monkeypatch):
    monkeypatch.setattr(transaction, "LOG", transaction.TransactionLog())
    monkeypatch.setattr(transaction, "transaction_hooks_supported", lambda: True)
    for var in ("CONDA_PLUGINS_TORCHCHECK_AUTO", "CONDA_PLUGINS_TORCHCHECK_ACTIVATION_HOOKS"):
        monkeypatch.delenv(var, raising=False)


def broken_env(make_env):
    """conda pytorch 2.5.1 with a torchvision built for torch 2.0 (TC104, an error)."""
    b = make_env(os="linux", layout="conda", name="broken env")
    b.conda_pytorch("2.5.1", "cpu_generic_py311h0000000_0")
    b.conda_record("torchvision", "0.15.2", "cpu_py311h0000000_0")
    return b


def errors(n):
    return [
        finding("TC104", Severity.ERROR, packages=f"torchvision {i}", torch="2.5.1", evidence={"torchvision": {}})
        for i in range(n)
    ]


def test_summary_lists_errors_and_the_full_report_command():
    lines = post_command.summary_lines("/envs/my env", errors(2), lang="en")
    # a torchvision built for another torch breaks `import torchvision`; `import torch` still works
    assert lines[0] == "conda-torchcheck: `import torchvision` will fail in /envs/my env:"
    assert lines[1].startswith("  TC104 ") and lines[2].startswith("  TC104 ")
    assert lines[-1] == "Full report: conda torchcheck -p '/envs/my env'"


def test_the_header_names_every_import_that_fails():
    torch_error = finding("TC301", Severity.ERROR, evidence={})
    lines = post_command.summary_lines("/e", [*errors(1), torch_error], lang="en")
    assert lines[0] == "conda-torchcheck: `import torch`, `import torchvision` will fail in /e:"


def test_summary_never_exceeds_six_lines():
    lines = post_command.summary_lines("/e", errors(9), lang="en")
    assert len(lines) == 6 and lines[4] == "  ... and 6 more"


def test_warnings_only_is_one_line_and_nothing_wrong_is_silent():
    warning = finding("TC102", Severity.WARNING, evidence={})
    assert len(post_command.summary_lines("/e", [warning])) == 1
    info = finding("TC103", Severity.INFO, evidence={})
    assert post_command.summary_lines("/e", [info]) == []


def test_only_torch_related_changes_are_targets():
    transaction.LOG.add("/envs/a", [], [rec("zlib", "1.3", "h0")])
    transaction.LOG.add("/envs/b", [rec("pytorch", "2.4.0", "cpu_0")], [rec("pytorch", "2.5.1", "cpu_0")])
    targets = post_command.targets_after_command("install")
    assert [(t.prefix, t.changed) for t in targets] == [("/envs/b", ("pytorch",))]
    assert post_command.targets_after_command("install") == []  # taken once


def test_post_command_names_the_error_of_a_broken_install(make_env, capsys):
    b = broken_env(make_env)
    transaction.LOG.add(str(b.prefix), [], [rec("torchvision", "0.15.2", "cpu_py311h0000000_0")])
    post_command.post_command("install")
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert 2 <= len(lines) <= 6
    assert any(line.startswith("  TC104 ") for line in lines)
    assert lines[-1].startswith("Full report: conda torchcheck -p ")


def test_post_command_is_silent_for_other_commands_and_when_disabled(make_env, capsys, monkeypatch):
    b = broken_env(make_env)
    transaction.LOG.add(str(b.prefix), [], [rec("pytorch", "2.5.1", "cpu_0")])
    post_command.post_command("list")
    monkeypatch.setenv("CONDA_PLUGINS_TORCHCHECK_AUTO", "false")
    post_command.post_command("install")
    assert capsys.readouterr() == ("", "")


def test_post_command_never_raises(make_env, capsys, monkeypatch):
    b = broken_env(make_env)
    transaction.LOG.add(str(b.prefix), [], [rec("pytorch", "2.5.1", "cpu_0")])

    def boom(prefix):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(post_command, "check_prefix", boom)
    post_command.post_command("install")
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and "RuntimeError: simulated bug" in err and "conda torchcheck -p" in err


def test_post_command_installs_activation_hooks_when_asked(make_env, capsys, monkeypatch):
    b = make_env(os="linux", layout="conda", name="fine env")
    b.conda_pytorch("2.5.1", "cpu_generic_py311h0000000_0")
    transaction.LOG.add(str(b.prefix), [], [rec("pytorch", "2.5.1", "cpu_generic_py311h0000000_0")])
    monkeypatch.setenv("CONDA_PLUGINS_TORCHCHECK_ACTIVATION_HOOKS", "true")
    post_command.post_command("create")
    err = capsys.readouterr().err
    assert "activation checks installed in" in err
    assert activation.status(b.prefix).installed_any
    # later torch changes refresh them silently
    transaction.LOG.add(str(b.prefix), [], [rec("pytorch", "2.5.1", "cpu_generic_py311h0000000_0")])
    post_command.post_command("update")
    assert "activation checks installed" not in capsys.readouterr().err


def test_snapshot_fallback_for_conda_without_transaction_actions(make_env):
    b = make_env(os="linux", layout="conda", name="old conda")
    log = transaction.TransactionLog()
    log.snapshot(str(b.prefix))
    b.conda_pytorch("2.5.1", "cpu_generic_py311h0000000_0")
    changes = log.changes_since_snapshot(str(b.prefix))
    assert changes is not None and changes.changed_names == {"pytorch"}
    assert log.changes_since_snapshot(str(b.prefix)) is None
