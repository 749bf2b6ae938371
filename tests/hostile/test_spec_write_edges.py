"""Item 11 of the hostile-input issue: `spec fix --write` refuses a read-only file unless --force, says when a
hard link is broken, and leaves no temporary file behind when it is terminated mid-write."""

from __future__ import annotations

import os
import signal
import sys

import pytest

from conda_torchcheck.cli.main import main

SPEC = "name: x\nchannels:\n  - pytorch\ndependencies:\n  - python=3.11\n  - pytorch\n"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes, links and signals")


def test_a_read_only_file_is_refused_unless_forced(tmp_path, capsys):
    spec = tmp_path / "environment.yml"
    spec.write_text(SPEC, encoding="utf-8")
    spec.chmod(0o444)
    assert main(["spec", "fix", str(spec), "--write"]) == 2
    assert "read-only" in capsys.readouterr().err
    assert spec.read_text(encoding="utf-8") == SPEC and not (tmp_path / "environment.yml.bak").exists()
    assert main(["spec", "fix", str(spec), "--write", "--force"]) in (0, 1)
    assert spec.read_text(encoding="utf-8") != SPEC


def test_a_broken_hard_link_is_said(tmp_path, capsys):
    spec = tmp_path / "environment.yml"
    spec.write_text(SPEC, encoding="utf-8")
    other = tmp_path / "copy.yml"
    os.link(spec, other)
    assert main(["spec", "fix", str(spec), "--write"]) in (0, 1)
    assert "2 hard links" in capsys.readouterr().err
    assert other.read_text(encoding="utf-8") == SPEC


def test_sigterm_mid_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    from conda_torchcheck.envspec import writefile

    spec = tmp_path / "environment.yml"
    spec.write_text(SPEC, encoding="utf-8")
    real_fsync = os.fsync

    def fsync(fd):  # the user's kill arrives while the new text is being flushed
        os.kill(os.getpid(), signal.SIGTERM)
        return real_fsync(fd)

    monkeypatch.setattr(writefile.os, "fsync", fsync)
    with pytest.raises(SystemExit):
        writefile.replace_file(spec, b"name: y\n", backup=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["environment.yml"]
    assert spec.read_text(encoding="utf-8") == SPEC
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL or callable(signal.getsignal(signal.SIGTERM))
