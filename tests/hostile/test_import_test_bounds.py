"""Item 9 of the hostile-input issue, the import test's side: --import-timeout is a real bound even when the
env's python leaves a process in another session holding its output, endless output costs no memory, and
nan/inf/0 are refused. The "python" here is a shell script standing in for a hostile interpreter."""

from __future__ import annotations

import shutil
import sys
import time

import pytest

from tests.hostile.envs import build
from tests.hostile.harness import run_cli

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or shutil.which("setsid") is None, reason="POSIX shell scripts and setsid"
)

BEHAVIOURS = {
    # a daemon in its own session keeps the output pipe open long after the child is killed
    "leaves-a-daemon": "setsid sleep 15 &\nsleep 15\n",
    # writes without end: the tool must keep a bounded tail, not all of it
    "endless-output": "exec yes 'some output that never ends'\n",
    "silent-hang": "exec sleep 15\n",
}


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_the_timeout_is_a_bound(tmp_path, behaviour):
    b = build(tmp_path / "env", "conda")
    python = b.prefix / "bin" / "python3"
    python.write_text("#!/bin/sh\n" + BEHAVIOURS[behaviour], encoding="utf-8")
    python.chmod(0o755)
    started = time.monotonic()
    out = run_cli("check", "--import-test", "--import-timeout", "1", "-p", str(b.prefix), "--json", timeout=12)
    assert time.monotonic() - started < 12
    assert out.doc["import_test"]["outcome"] == "timeout"
    assert "TC702" in out.ids()
    assert len(out.stdout) < 4 << 20  # the endless output was not kept whole


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-5", "1e999"])
def test_timeouts_that_are_no_bound_are_refused(value):
    out = run_cli("check", "--import-test", "--import-timeout", value)
    assert out.code == 2 and "--import-timeout" in out.stderr
