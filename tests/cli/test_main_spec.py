"""The ``spec`` verb: ``spec check FILE`` and ``spec fix FILE [--diff | --write] [-p PREFIX] [--lock]``."""

from __future__ import annotations

import argparse
import json

import pytest

from conda_torchcheck.cli.main import main

SEED = (
    "name: pytorch_env\nchannels:\n  - pytorch\n  - nvidia\n  - defaults\ndependencies:\n  - python=3.11\n"
    "  - pytorch\n  - torchvision\n  - torchaudio\n  - pytorch-cuda=11.8\n"
)
FROZEN = "channels:\n  - pytorch\n  - nvidia\ndependencies:\n  - python=3.12\n  - pytorch=2.6\n  - pytorch-cuda=12.4\n"


@pytest.fixture
def seed(tmp_path):
    f = tmp_path / "environment.yml"
    f.write_text(SEED)
    return f


def test_check_text_output_and_exit_code(seed, capsys):
    assert main(["spec", "check", str(seed)]) == 0
    out = capsys.readouterr().out
    assert "TC611" in out and "2.5.1" in out and "line: 8" in out


def test_check_errors_exit_1_and_json(tmp_path, capsys):
    f = tmp_path / "environment.yml"
    f.write_text(FROZEN)
    assert main(["spec", "check", str(f), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == 1 and doc["file"] == str(f)
    assert doc["torch"]["source"] == "pytorch"
    ids = {x["id"] for x in doc["findings"]}
    assert "TC605" in ids
    assert doc["summary"]["errors"] >= 1
    frozen = next(x for x in doc["findings"] if x["id"] == "TC605")
    assert frozen["evidence"]["entry"]["line"] == 6


def test_check_in_chinese(seed, capsys):
    assert main(["spec", "check", str(seed), "--lang", "zh_CN"]) == 0
    assert "未固定版本" in capsys.readouterr().out


def test_check_no_torch(tmp_path, capsys):
    f = tmp_path / "environment.yml"
    f.write_text("dependencies:\n  - python=3.12\n")
    assert main(["spec", "check", str(f)]) == 0
    assert "no torch" in capsys.readouterr().out


@pytest.mark.parametrize(
    "content, needle",
    [
        (b"dependencies:\n\t- pytorch\n", ":2:"),
        (b"dependencies:\n  - a\ndependencies:\n  - b\n", "appears twice"),
        (b"dependencies: [a, b\n", "not valid YAML"),
        (b"channels: pytorch\ndependencies:\n  - pytorch\n", "must be a list"),
        ("# 注释\ndependencies:\n  - pytorch\n".encode("gbk"), "UTF-8"),
    ],
)
def test_bad_input_is_one_clear_line_exit_2_file_untouched(tmp_path, capsys, content, needle):
    f = tmp_path / "environment.yml"
    f.write_bytes(content)
    for argv in (["spec", "check", str(f)], ["spec", "fix", str(f), "--write"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert needle in err
        assert "Traceback" not in err and len(err.strip().splitlines()) <= 2
    assert f.read_bytes() == content
    assert not (tmp_path / "environment.yml.bak").exists()


def test_missing_file_exit_2(tmp_path, capsys):
    assert main(["spec", "check", str(tmp_path / "nope.yml")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_fix_default_prints_diff_and_writes_nothing(seed, capsys):
    assert main(["spec", "fix", str(seed)]) == 0
    captured = capsys.readouterr()
    assert "+  - pytorch::pytorch=2.5.1" in captured.out
    assert captured.out.startswith("---")
    assert "--write" in captured.err and "pinned to 2.5.1" in captured.err
    assert seed.read_text() == SEED


def test_fix_write_then_nothing_to_change(seed, capsys):
    assert main(["spec", "fix", str(seed), "--write"]) == 0
    out = capsys.readouterr().out
    assert "environment.yml.bak" in out
    assert "pytorch::pytorch=2.5.1" in seed.read_text()
    assert (seed.parent / "environment.yml.bak").read_text() == SEED
    assert main(["spec", "fix", str(seed), "--write"]) == 0
    assert "nothing to change" in capsys.readouterr().out


def test_fix_json(seed, capsys):
    assert main(["spec", "fix", str(seed), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["changed"] and not doc["written"]
    assert any(c["new"] == "pytorch::pytorch=2.5.1" for c in doc["changes"])
    assert doc["diff"].startswith("---")
    assert doc["findings_after"] == []


def test_fix_exit_1_when_errors_remain(tmp_path, capsys):
    f = tmp_path / "environment.yml"
    f.write_text("channels: [conda-forge, nodefaults]\ndependencies: [python=3.13, pytorch=2.4.1=cpu*]\n")
    assert main(["spec", "fix", str(f)]) == 1
    assert "error" in capsys.readouterr().out


def test_lock_needs_an_env(seed, capsys):
    assert main(["spec", "fix", str(seed), "--lock"]) == 2
    assert "--lock" in capsys.readouterr().err


def test_fix_with_prefix(make_env, tmp_path, capsys):
    b = make_env(name="envp", python="3.11.9")
    b.conda_pytorch("2.5.1", "cuda126_generic_py311_h1234567_303", cuda="12.6")
    b.conda_record("cuda-version", "12.6", "h7480c83_3", noarch=True)
    f = tmp_path / "environment.yml"
    f.write_text("channels: [conda-forge]\ndependencies:\n  - python=3.11\n  - pytorch\n")
    assert main(["spec", "fix", str(f), "-p", str(b.prefix), "--lock", "--write"]) == 0
    text = f.read_text()
    assert "conda-forge::pytorch=2.5.1=cuda126_generic_py311_h1234567_303" in text
    assert "python=3.11.9=" in text and "cuda-version=12.6=h7480c83_3" in text


def test_fix_with_missing_prefix_is_exit_2(seed, tmp_path, capsys):
    assert main(["spec", "fix", str(seed), "-p", str(tmp_path / "nope")]) == 2


def test_spec_without_action_is_a_usage_error(capsys):
    assert main(["spec"]) == 2


def test_conda_mode_parser_does_not_hide_parent_options():
    from conda_torchcheck.cli import main_spec

    parent = argparse.ArgumentParser()
    parent.add_argument("--json", action="store_true")
    parent.add_argument("-p", "--prefix")
    sub = parent.add_subparsers(dest="verb")
    spec = sub.add_parser("spec")
    main_spec.configure_parser(spec, conda=True)
    args = parent.parse_args(["--json", "-p", "/x", "spec", "fix", "f.yml"])
    assert args.json is True and args.prefix == "/x" and args.spec_action == "fix"
    assert args.spec_command == "conda torchcheck"
    args = parent.parse_args(["spec", "check", "f.yml", "--json"])
    assert args.json is True
