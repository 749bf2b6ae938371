"""The conda flows end to end (issue 25): the guard's advice is the user's own command corrected, fitted to the
verb they ran, checked by conda's solver; and running the advice, in the test, leaves a consistent env."""

from __future__ import annotations

import shlex

import pytest

from tests.plugin.conftest import CONDA, SKIP_REASON
from tests.plugin.helpers import BOTH_CHANNELS, BROKEN, CHANNELS, MIXED, ours

pytestmark = [pytest.mark.skipif(not CONDA, reason=SKIP_REASON), pytest.mark.conda, pytest.mark.slow]

SELECTORS = ("pytorch=2.5.1", "pytorch-cuda=12.4", "cpuonly")


def dry_run(conda_cli, *argv):
    """A --dry-run command: conda ends it with DryRunExit after the guard ran; returns its stderr."""
    from conda.exceptions import DryRunExit

    out, err, _ = conda_cli(*argv, "--dry-run", raises=DryRunExit)
    return err


def advised(lines: list[str]) -> list[str]:
    """The commands of the advice lines ("Instead...: CMD", "Or...: CMD")."""
    return [line.split(": ", 1)[1] for line in lines if line.startswith(("Instead", "Or"))]


def run_advice(conda_cli, command: str):
    words = shlex.split(command)
    assert words[0] == "conda"
    return conda_cli(*words[1:], "-y")


def torch_findings(prefix) -> set[str]:
    from conda_torchcheck.checks import run_checks
    from conda_torchcheck.checks.context import CheckContext, CheckOptions
    from conda_torchcheck.inventory import load_environment

    env, host = load_environment(prefix)
    ctx = CheckContext(env, host, CheckOptions(verify_hashes=False))
    return {f.id for f in run_checks(ctx) if f.severity.value in ("error", "warning") and f.id.startswith("TC10")}


def test_create_with_both_selectors_offers_each_side_as_a_create(conda_cli, conda_home):
    prefix = conda_home / "mixed"
    out, err, rc = conda_cli("create", "-p", prefix, *BOTH_CHANNELS, "-y", *SELECTORS)
    assert rc == 0
    lines = ours(err)
    assert lines[1].startswith("  TC102 ")
    base = f"conda create -p {prefix} --override-channels -c pytorch -c conda-forge"
    assert lines[2] == f"Instead, for CUDA builds: {base} pytorch=2.5.1 pytorch-cuda=12.4"
    assert lines[3] == f'Or, for CPU builds: {base} "conda-forge::pytorch=2.5.1=*cpu*"'
    # -y: no prompt to answer
    assert lines[4] == "conda goes ahead (-y was given)."
    assert lines[5].startswith("To refuse such transactions from now on: CONDA_PLUGINS_TORCHCHECK_STRICT=true")
    assert not any("Answer n" in line for line in lines)


@pytest.mark.parametrize("which", [0, 1])
def test_each_advised_create_makes_a_consistent_env(conda_cli, conda_home, which):
    prefix = conda_home / "mixed"
    err = dry_run(conda_cli, "create", "-p", prefix, *BOTH_CHANNELS, *SELECTORS)
    commands = advised(ours(err))
    assert len(commands) == 2 and not prefix.exists()
    out, err, rc = run_advice(conda_cli, commands[which])
    assert rc == 0 and (prefix / "conda-meta").is_dir()
    assert ours(err) == []  # the guard has nothing to say about its own advice
    assert torch_findings(prefix) == set()


def test_without_y_the_prompt_is_named(conda_cli, conda_home):
    err = dry_run(conda_cli, "create", "-p", conda_home / "dry", *BOTH_CHANNELS, *MIXED)
    assert any(line.startswith("Answer n at the prompt") for line in ours(err))


def test_a_strict_refusal_of_a_create_advises_a_create_that_works(conda_cli, conda_home, monkeypatch):
    from conda.base.context import reset_context
    from conda.exceptions import CondaError

    monkeypatch.setenv("CONDA_PLUGINS_TORCHCHECK_STRICT", "true")
    reset_context()
    prefix = conda_home / "new"
    out, err, excinfo = conda_cli("create", "-p", prefix, *CHANNELS, "-y", *BROKEN, raises=CondaError)
    message = str(excinfo.value).splitlines()
    assert not prefix.exists()
    instead = [line for line in message if line.startswith("Instead")]
    assert instead == [
        f"Instead: conda create -p {prefix} --override-channels -c conda-forge pytorch=2.5.1 torchvision"
    ]
    out, err, rc = run_advice(conda_cli, advised(instead)[0])
    assert rc == 0 and torch_findings(prefix) == set()


def test_installing_a_companion_for_another_torch_is_corrected_as_an_install(conda_cli, conda_home):
    prefix = conda_home / "existing"
    out, err, rc = conda_cli("create", "-p", prefix, *CHANNELS, "-y", "pytorch=2.5.1")
    assert rc == 0 and ours(err) == []
    err = dry_run(conda_cli, "install", "-p", prefix, *CHANNELS, "torchvision=0.15.2")
    lines = ours(err)
    assert lines[1].startswith("  TC104 torchvision 0.15.2")
    assert advised(lines) == [f"conda install -p {prefix} --override-channels -c conda-forge torchvision"]
    out, err, rc = run_advice(conda_cli, advised(lines)[0])
    assert rc == 0 and torch_findings(prefix) == set()


def test_after_a_broken_create_the_failing_import_is_torchvisions(conda_cli, conda_home):
    prefix = conda_home / "b"
    out, err, rc = conda_cli("create", "-p", prefix, *CHANNELS, "-y", *BROKEN)
    lines = ours(err)
    assert f"conda-torchcheck: `import torchvision` will fail in {prefix}:" in lines
    assert f"conda-torchcheck: `import torch` will fail in {prefix}:" not in lines


def test_an_update_is_corrected_with_install_where_the_correction_pins_a_build(conda_cli, conda_home):
    """`conda update pytorch` in a pytorch-channel CPU env solves to the CUDA build beside cpuonly (the local
    channel has no pytorch-mutex to stop it): the correction pins a build, which `conda update` refuses, so it is
    an install, and the removal that has to come first is aimed with the user's -p; run, they leave a consistent
    env."""
    prefix = conda_home / "u"
    out, err, rc = conda_cli("create", "-p", prefix, *BOTH_CHANNELS, "-y", "pytorch::pytorch=2.2.2", "pytorch::cpuonly")
    assert rc == 0 and ours(err) == []
    err = dry_run(conda_cli, "update", "-p", prefix, *BOTH_CHANNELS, "pytorch")
    lines = ours(err)
    assert lines[1].startswith("  TC102 ")
    [command] = advised(lines)
    remove, install = command.removesuffix(" (not checked with the solver)").split(" && ")
    assert remove == f"conda remove -p {prefix} --force cpuonly"
    assert install.startswith(f"conda install -p {prefix} --override-channels -c pytorch -c conda-forge ")
    assert "conda update" not in command
    # the advice, run as printed, leaves a consistent env (conda-forge's CUDA build, no pytorch-channel selector)
    for step in (remove, install):
        out, err, rc = run_advice(conda_cli, step)
        assert rc == 0
    assert torch_findings(prefix) == set()
