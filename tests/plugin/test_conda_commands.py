"""Real conda commands, in process (conda's ``conda_cli``), against local channels of fake packages.

``conda create -p DIR --offline -y`` reaches every hook without network; the fake ``conda-forge`` and
``pytorch`` channels hold a broken torch set (torchvision built for another torch: TC104) and a cuda/cpu mix
(TC102) for the post-solve guard.
"""

from __future__ import annotations

import pytest

from tests.plugin.conftest import CONDA, SKIP_REASON
from tests.plugin.helpers import BOTH_CHANNELS, BROKEN, CHANNELS, MIXED, one_json_document, ours

pytestmark = [pytest.mark.skipif(not CONDA, reason=SKIP_REASON), pytest.mark.conda, pytest.mark.slow]


def test_empty_create_reaches_every_hook_and_stays_silent(conda_cli, conda_home, monkeypatch):
    from conda_torchcheck.hooks import post_command, post_solve, transaction

    calls = []
    for module, name in ((post_command, "pre_command"), (post_command, "post_command"), (post_solve, "post_solve")):
        real = getattr(module, name)

        def spy(*args, _real=real, _name=name):
            calls.append(_name)
            return _real(*args)

        monkeypatch.setattr(module, name, spy)
    real_add = transaction.LOG.add
    monkeypatch.setattr(transaction.LOG, "add", lambda *a: (calls.append("transaction"), real_add(*a)))
    out, err, rc = conda_cli("create", "-p", conda_home / "empty", "--offline", "-y")
    assert rc == 0
    assert calls == ["pre_command", "post_solve", "transaction", "post_command"]
    assert ours(err) == [] and "conda-torchcheck" not in out


def test_installing_a_broken_torch_set_names_the_error(conda_cli, conda_home):
    prefix = conda_home / "broken"
    out, err, rc = conda_cli("create", "-p", prefix, *CHANNELS, "-y", *BROKEN)
    assert rc == 0
    lines = ours(err)
    # the guard warns before linking, the post-command names the error after it
    assert lines[0] == f"conda-torchcheck: after this transaction torch would be broken in {prefix}:"
    summary = lines[lines.index(f"conda-torchcheck: `import torchvision` will fail in {prefix}:") :]
    assert 3 <= len(summary) <= 6
    assert summary[1].startswith("  TC104 torchvision 0.15.2")
    assert summary[-1] == f"Full report: conda torchcheck -p {prefix}"
    assert "conda-torchcheck" not in out


def test_json_stdout_stays_one_document(conda_cli, conda_home):
    prefix = conda_home / "broken-json"
    out, err, rc = conda_cli("create", "-p", prefix, *CHANNELS, "-y", "--json", *BROKEN)
    assert rc == 0
    assert one_json_document(out)["success"] is True
    assert any(line.startswith("  TC104") for line in ours(err))


def test_post_solve_guard_warns_and_the_env_is_created(conda_cli, conda_home):
    prefix = conda_home / "mixed"
    out, err, rc = conda_cli("create", "-p", prefix, *BOTH_CHANNELS, "-y", *MIXED)
    assert rc == 0 and (prefix / "conda-meta").is_dir()
    lines = ours(err)
    assert lines[0] == f"conda-torchcheck: after this transaction torch would be broken in {prefix}:"
    assert lines[1].startswith("  TC102 ")
    # the post-command does not repeat a warning the guard already printed
    assert not any("warning(s) about torch" in line for line in lines)


def test_strict_refuses_and_leaves_nothing(conda_cli, conda_home, monkeypatch):
    from conda.base.context import reset_context
    from conda.exceptions import CondaError

    monkeypatch.setenv("CONDA_PLUGINS_TORCHCHECK_STRICT", "true")
    reset_context()
    prefix = conda_home / "refused"
    out, err, excinfo = conda_cli("create", "-p", prefix, *BOTH_CHANNELS, "-y", *MIXED, raises=CondaError)
    assert type(excinfo.value).__name__ == "TorchcheckRefusedTransaction"
    message = str(excinfo.value)
    assert "refused this transaction" in message and "TC102" in message
    assert "CONDA_PLUGINS_TORCHCHECK_STRICT=false" in message
    assert not prefix.exists()


def test_post_solve_is_idempotent_when_conda_solves_twice(conda_home, capsys):
    from conda.base.context import context, reset_context

    from conda_torchcheck.hooks import post_solve
    from tests.hooks.fakes import rec

    reset_context([], argparse_args=None)
    prefix = conda_home / "twice"
    context.__init__(argparse_args={"prefix": str(prefix)})
    link = [rec("pytorch", "2.5.1", "py3.11_cuda12.4_cudnn9_0", "pytorch"), rec("cpuonly", "2.0", "0", "pytorch")]
    post_solve.post_solve("current_repodata.json", (), link)
    post_solve.post_solve("repodata.json", (), link)
    err = capsys.readouterr().err
    assert err.count("after this transaction torch would be broken") == 1
    reset_context()


def test_env_update_from_a_file_checks_the_env_named_in_the_file(conda_cli, conda_home, tmp_path):
    spec = tmp_path / "environment.yml"
    spec.write_text("name: fromfile\nchannels:\n  - conda-forge\ndependencies:\n  - pytorch=2.5.1\n")
    out, err, rc = conda_cli("env", "create", "-f", spec, "-y")
    assert rc == 0 and ours(err) == []
    spec.write_text(
        "name: fromfile\nchannels:\n  - conda-forge\ndependencies:\n  - pytorch=2.5.1\n  - torchvision=0.15.2\n"
    )
    out, err, rc = conda_cli("env", "update", "-f", spec)
    assert rc == 0
    target = conda_home / "fromfile"
    lines = ours(err)
    # conda's context stays on base for `env update -f`; the guard reads the name from the file and the
    # post-command takes the prefix from the transaction itself
    assert f"conda-torchcheck: after this transaction torch would be broken in {target}:" in lines
    assert f"conda-torchcheck: `import torchvision` will fail in {target}:" in lines


def test_auto_off_keeps_the_post_command_silent(conda_cli, conda_home, monkeypatch):
    from conda.base.context import reset_context

    monkeypatch.setenv("CONDA_PLUGINS_TORCHCHECK_AUTO", "false")
    reset_context()
    out, err, rc = conda_cli("create", "-p", conda_home / "quiet", *CHANNELS, "-y", *BROKEN)
    assert rc == 0
    assert not any("will fail" in line for line in ours(err))


def test_activation_hooks_setting_installs_scripts(conda_cli, conda_home, monkeypatch):
    from conda.base.context import reset_context

    monkeypatch.setenv("CONDA_PLUGINS_TORCHCHECK_ACTIVATION_HOOKS", "true")
    reset_context()
    prefix = conda_home / "hooked"
    out, err, rc = conda_cli("create", "-p", prefix, *CHANNELS, "-y", "pytorch=2.5.1")
    assert rc == 0
    assert f"conda-torchcheck: activation checks installed in {prefix / 'etc/conda/activate.d'}." in ours(err)
    assert sorted(p.name for p in (prefix / "etc/conda/activate.d").iterdir()) == [
        "zz_conda_torchcheck.fish",
        "zz_conda_torchcheck.sh",
    ]


# --- forced internal failures: conda's command must still succeed ---------------------------------------


def _boom(*args, **kwargs):
    raise RuntimeError("simulated torchcheck bug")


@pytest.mark.parametrize("json_flag", [(), ("--json",)], ids=["text", "json"])
def test_failing_checks_never_fail_the_users_command(conda_cli, conda_home, monkeypatch, json_flag):
    from conda_torchcheck.hooks import post_command, post_solve

    monkeypatch.setattr(post_solve, "evaluate", _boom)
    monkeypatch.setattr(post_command, "check_prefix", _boom)
    prefix = conda_home / ("failing" + "".join(json_flag).replace("-", ""))
    out, err, rc = conda_cli("create", "-p", prefix, *CHANNELS, "-y", *json_flag, *BROKEN)
    assert rc == 0 and (prefix / "conda-meta").is_dir()
    lines = ours(err)
    assert len(lines) == 2  # one warning line per hook
    assert "transaction check did not finish (RuntimeError: simulated torchcheck bug)" in lines[0]
    assert "torch check after this command did not finish (RuntimeError: simulated torchcheck bug)" in lines[1]
    if json_flag:
        assert one_json_document(out)["success"] is True
    else:
        assert "conda-torchcheck" not in out


@pytest.mark.parametrize(
    "module,line",
    [
        ("conda_torchcheck.hooks.post_command", "the torch check after this command is unavailable"),
        ("conda_torchcheck.hooks.post_solve", "the transaction check is unavailable"),
    ],
)
def test_a_hook_module_that_fails_to_import_costs_one_line(conda_cli, conda_home, monkeypatch, module, line):
    import sys

    monkeypatch.setitem(sys.modules, module, None)  # `from module import x` now raises ImportError
    out, err, rc = conda_cli("create", "-p", conda_home / "noimport", *CHANNELS, "-y", "--json", *BROKEN)
    assert rc == 0 and one_json_document(out)["success"] is True
    hits = [x for x in err.splitlines() if line in x]
    assert len(hits) == 1 and hits[0].startswith(f"conda-torchcheck: {line} (ModuleNotFoundError: ")


def test_failing_doctor_check_prints_one_line(conda_cli, conda_home, monkeypatch):
    from conda_torchcheck.hooks import health

    prefix = conda_home / "doc-fail"
    conda_cli("create", "-p", prefix, *CHANNELS, "-y", "pytorch=2.5.1")
    monkeypatch.setattr(health, "findings_for", _boom)
    out, err, rc = conda_cli("doctor", "-p", prefix, "torch")
    assert rc == 0
    torch_lines = [line for line in out.splitlines() if "torch check" in line]
    assert torch_lines == ["❌ The torch check did not finish (RuntimeError: simulated torchcheck bug)."]


# --- conda doctor and conda torchcheck ---------------------------------------------------------------------


def test_doctor_torch_check_and_list(conda_cli, conda_home):
    prefix = conda_home / "doctor"
    conda_cli("create", "-p", prefix, *CHANNELS, "-y", *BROKEN)
    out, err, rc = conda_cli("doctor", "-p", prefix, "torch")
    assert rc == 0
    assert "❌ torch: 1 error(s), 0 warning(s):" in out and "TC104 error:" in out
    out, _, _ = conda_cli("doctor", "--list")
    assert "torch: Why `import torch` fails" in out and "(fix: Apply conda-torchcheck's safe automatic fixes)" in out


def test_doctor_fix_refreshes_outdated_activation_scripts(conda_cli, conda_home):
    from conda_torchcheck.hooks.activation import install as activation

    prefix = conda_home / "fixme"
    conda_cli("create", "-p", prefix, *CHANNELS, "-y", "pytorch=2.5.1")
    activation.install(prefix)
    script = activation.activate_dir(prefix) / "zz_conda_torchcheck.sh"
    script.write_bytes(script.read_bytes().replace(b"fingerprint:", b"fingerprint: stale"))
    out, err, rc = conda_cli("doctor", "-p", prefix, "torch", "--fix", "--yes")
    assert rc == 0
    assert "TC810" in out
    assert activation.status(prefix, activation.current_facts(prefix)).up_to_date


def test_torchcheck_subcommand_follows_conda_conventions(conda_cli, conda_home):
    conda_cli("create", "-p", conda_home / "named", *CHANNELS, "-y", *BROKEN)
    # -n resolved through conda's envs dirs; --json honoured; exit code 1 for errors
    out, err, rc = conda_cli("torchcheck", "-n", "named", "--json")
    doc = one_json_document(out)
    assert rc == 1 and doc["target"]["prefix"] == str(conda_home / "named")
    assert "TC104" in {f["id"] for f in doc["findings"]}
    out, err, rc = conda_cli("torchcheck", "check", "-p", conda_home / "named", "--only", "TC104")
    assert rc == 1 and "ERROR TC104" in out
    out, err, rc = conda_cli("torchcheck", "hooks", "install", "-n", "named")
    assert rc == 0 and "Installed activation checks" in out
    out, err, rc = conda_cli("torchcheck", "hooks", "status", "-n", "named", "--json")
    assert one_json_document(out)["up_to_date"] is True
    out, err, rc = conda_cli("torchcheck", "hooks", "remove", "-p", conda_home / "named")
    assert rc == 0 and not (conda_home / "named" / "etc").exists()
    out, err, rc = conda_cli("torchcheck", "list-checks")
    assert rc == 0 and "TC810" in out


def test_torchcheck_help(conda_cli):
    # conda hands the raw arguments to the action; the real parser prints the help and the action returns 0
    out, err, rc = conda_cli("torchcheck", "--help")
    assert rc == 0
    assert "hooks" in out and "-p PATH" in out and "--json" in out


@pytest.mark.parametrize("argv", [("tree", "--help"), ("tree", "-h"), ("-h", "tree")])
def test_a_verbs_help(conda_cli, argv):
    out, err, rc = conda_cli("torchcheck", *argv)
    assert rc == 0 and out.startswith("usage: conda torchcheck tree") and "[FILE | torch]" in out


def test_conda_options_after_the_verb_are_read(conda_cli, conda_home):
    conda_cli("create", "-p", conda_home / "after", *CHANNELS, "-y", "pytorch=2.5.1")
    out, err, rc = conda_cli("torchcheck", "hooks", "status", "--json", "-n", "after")
    doc = one_json_document(out)
    assert rc == 0 and doc["directory"] == str(conda_home / "after" / "etc" / "conda" / "activate.d")


def test_unknown_env_name_is_one_line_and_exit_code_2(conda_cli, conda_home):
    out, err, rc = conda_cli("torchcheck", "-n", "does-not-exist")
    assert rc == 2 and out == ""
    lines = err.splitlines()
    assert lines[0].startswith("conda-torchcheck: error: no environment named 'does-not-exist'")
    # as documented: the error line, then one hint line (where it looked), nothing else
    assert len(lines) == 2 and lines[1].startswith("hint: ")


def test_conda_options_before_the_verb_are_kept(conda_cli, conda_home):
    conda_cli("create", "-p", conda_home / "order", *CHANNELS, "-y", "pytorch=2.5.1")
    out, err, rc = conda_cli("torchcheck", "-n", "order", "--json", "hooks", "status")
    doc = one_json_document(out)
    assert rc == 0 and doc["directory"] == str(conda_home / "order" / "etc" / "conda" / "activate.d")


def test_removing_the_whole_env_is_silent(conda_cli, conda_home):
    prefix = conda_home / "gone"
    conda_cli("create", "-p", prefix, *CHANNELS, "-y", *BROKEN)
    out, err, rc = conda_cli("remove", "-p", prefix, "--all", "-y")
    assert rc == 0 and ours(err) == [] and not (prefix / "conda-meta").exists()


def test_a_broken_parser_setup_breaks_only_conda_torchcheck(conda_cli, conda_home, monkeypatch):
    from conda_torchcheck.hooks import subcommand

    def broken(parser):
        raise RuntimeError("simulated parser bug")

    from conda_torchcheck import plugin

    monkeypatch.setattr(subcommand, "configure_parser", broken)
    monkeypatch.setattr(plugin, "_PARSER_PROBLEM", [])
    out, err, rc = conda_cli("create", "-p", conda_home / "still-works", "--offline", "-y")
    assert rc == 0
    out, err, rc = conda_cli("torchcheck", "-p", conda_home / "still-works")
    assert rc == 2 and "could not be set up (RuntimeError: simulated parser bug)" in err


def test_all_envs_through_conda(conda_cli, conda_home):
    conda_cli("create", "-p", conda_home / "fleet-ok", *CHANNELS, "-y", "pytorch=2.5.1")
    conda_cli("create", "-p", conda_home / "fleet-empty", "--offline", "-y")
    out, err, rc = conda_cli("torchcheck", "--all", "--json")
    doc = one_json_document(out)
    prefixes = {e["prefix"]: e for e in doc["envs"]}
    assert str(conda_home / "fleet-ok") in prefixes and str(conda_home / "fleet-empty") in prefixes
    assert prefixes[str(conda_home / "fleet-empty")]["verdict"] == "no-torch"
    assert doc["kind"] == "fleet" and rc == doc["exit_code"]
    out, err, rc = conda_cli("torchcheck", "--all")
    assert "environment(s) on this machine:" in out.splitlines()[0] and "fleet-ok" in out


def test_all_envs_through_conda_names_condas_command_in_the_footer(conda_cli, conda_home):
    conda_cli("create", "-p", conda_home / "fleet-broken", *CHANNELS, "-y", *BROKEN)
    out, err, rc = conda_cli("torchcheck", "--all")
    assert out.rstrip().splitlines()[-1] == "Full report of one: conda torchcheck -p PREFIX (or -n NAME)"


def test_docs_through_conda(conda_cli):
    out, err, rc = conda_cli("torchcheck", "docs", "TC301")
    assert rc == 0 and out.startswith("# TC301")
