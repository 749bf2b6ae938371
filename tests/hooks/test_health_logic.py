"""The ``conda doctor`` check and fixer, and the settings, without conda."""

from __future__ import annotations

import pytest

from conda_torchcheck.hooks import health
from conda_torchcheck.hooks.activation import install as activation
from conda_torchcheck.hooks.settings import SETTINGS, parse_bool, setting


def broken_env(make_env):
    b = make_env(os="linux", layout="conda", name="doctor env")
    b.conda_pytorch("2.5.1", "cpu_generic_py311h0000000_0")
    b.conda_record("torchvision", "0.15.2", "cpu_py311h0000000_0")
    return b


def test_check_prints_one_line_when_torch_is_fine_or_absent(make_env, capsys):
    fine = make_env(os="linux", layout="conda", name="fine")
    fine.conda_pytorch("2.5.1", "cpu_generic_py311h0000000_0")
    health.check(str(fine.prefix), False)
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and out[0].startswith("✅ ") and "torch 2.5.1" in out[0]
    empty = make_env(os="linux", layout="conda", name="empty")
    health.check(str(empty.prefix), False)
    assert capsys.readouterr().out.startswith("✅ torch is not installed")


def test_check_lists_errors_and_the_report_command(make_env, capsys):
    b = broken_env(make_env)
    health.check(str(b.prefix), False)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("❌ torch: 1 error(s)")
    assert any(line.strip().startswith("TC104 error:") for line in out)
    assert "conda torchcheck -p" in out[-1]
    health.check(str(b.prefix), True)
    assert "fix" in capsys.readouterr().out  # verbose: explanation and fix commands


def test_check_reports_its_own_failure_instead_of_raising(tmp_path, capsys):
    health.check(str(tmp_path / "nope"), False)
    out = capsys.readouterr().out
    assert out.startswith("❌ ") and "did not finish" in out


@pytest.mark.parametrize(
    "command,runnable",
    [
        ('conda torchcheck hooks install -p "{prefix}"', True),
        ("conda-torchcheck hooks install -p {prefix}", True),
        ('rm -rf "{prefix}/lib/python3.11/site-packages/~orch"', True),
        ('rm -rf "{prefix}"', False),  # the env itself: never
        ('rm -rf "/etc"', False),  # outside the env: never
        ('conda install -p "{prefix}" -c conda-forge pytorch', False),  # left to the user
        ("pip install torch", False),
    ],
)
def test_fix_commands_the_fixer_runs_itself(tmp_path, command, runnable):
    prefix = tmp_path / "my env"
    (prefix / "lib/python3.11/site-packages/~orch").mkdir(parents=True)
    (prefix / "Lib/site-packages/~orch").mkdir(parents=True)
    action = health.plan_command(command.format(prefix=prefix), prefix)
    assert (action is not None) is runnable


def test_fixer_refreshes_outdated_activation_scripts(make_env, capsys):
    b = make_env(os="linux", layout="conda", name="fix env")
    b.conda_pytorch("2.5.1", "cpu_generic_py311h0000000_0")
    activation.install(b.prefix)
    b.conda_record("libtorch", "2.5.1", "cpu_h0_0", files={"lib/libtorch_cpu.so": b""})
    b.conda_record("nccl", "2.23.4.1", "h0_3", files={"lib/libnccl.so.2": b""})
    (b.site_packages / "torch" / "lib").mkdir()
    asked = []
    assert health.fix(str(b.prefix), None, asked.append) == 0
    assert asked and "Apply these fixes?" in asked[0]
    assert activation.status(b.prefix, activation.current_facts(b.prefix)).up_to_date
    assert "TC810" in capsys.readouterr().out


def test_fixer_with_nothing_safe_to_do(make_env, capsys):
    b = broken_env(make_env)
    assert health.fix(str(b.prefix), None, lambda msg: pytest.fail("must not ask")) == 0
    assert "No torch problem here can be fixed automatically" in capsys.readouterr().out


def test_declining_stops_before_changing_anything(make_env):
    b = make_env(os="linux", layout="conda", name="decline env")
    b.conda_pytorch("2.5.1", "cpu_generic_py311h0000000_0")
    activation.install(b.prefix)
    b.conda_record("nccl", "2.23.4.1", "h0_3", files={"lib/libnccl.so.2": b""})
    b.conda_record("libtorch", "2.5.1", "cpu_h0_0", files={"lib/libtorch_cpu.so": b""})
    before = {p: p.read_bytes() for p in activation.activate_dir(b.prefix).iterdir()}

    class Declined(Exception):
        pass

    def decline(msg):
        raise Declined

    with pytest.raises(Declined):
        health.fix(str(b.prefix), None, decline)
    assert {p: p.read_bytes() for p in activation.activate_dir(b.prefix).iterdir()} == before


# --- settings ------------------------------------------------------------------------------------------------


def test_settings_defaults_and_environment_variables(monkeypatch):
    assert {s.name: s.default for s in SETTINGS} == {
        "torchcheck_auto": True,
        "torchcheck_strict": False,
        "torchcheck_activation_hooks": False,
    }
    for spec in SETTINGS:
        monkeypatch.delenv(spec.environment_variable, raising=False)
        assert setting(spec.name) is spec.default
    monkeypatch.setenv("CONDA_PLUGINS_TORCHCHECK_STRICT", "yes")
    assert setting("torchcheck_strict") is True
    monkeypatch.setenv("CONDA_PLUGINS_TORCHCHECK_AUTO", "0")
    assert setting("torchcheck_auto") is False


@pytest.mark.parametrize(
    "value,expected", [("true", True), ("FALSE", False), ("1", True), ("off", False), ("maybe", None), (None, None)]
)
def test_parse_bool(value, expected):
    assert parse_bool(value, None) is expected
