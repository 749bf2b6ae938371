"""One wine prefix for the whole test session, created before any test runs wine.

wine's first run in a new prefix (a fresh HOME on CI) prints "wine: created the configuration directory ...",
a rundll32 line and "... has been updated" on stderr, and takes tens of seconds. Tests that read wine's
output must never see that, so the prefix is made here with ``wineboot -i`` (bounded in time) and a test
that needs wine skips, with the reason, when it cannot be made.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

BOOT_TIMEOUT_S = 300


def boot_prefix(prefix: Path) -> str | None:
    """Create and initialise a wine prefix at ``prefix``; None when it worked, else why not."""
    if shutil.which("wine") is None or shutil.which("wineboot") is None:
        return "wine is not installed (apt-get install wine wine64)"
    env = dict(os.environ, WINEPREFIX=str(prefix), WINEDEBUG="-all", WINEDLLOVERRIDES="mscoree,mshtml=")
    log = prefix.parent / f"{prefix.name}-boot.log"
    try:
        with open(os.devnull) as devnull, open(log, "w") as out:
            # wine's server inherits our pipes: a file, not a pipe, or the call waits for the server to exit
            done = subprocess.run(
                ["wineboot", "-i"], stdin=devnull, stdout=out, stderr=subprocess.STDOUT, env=env, timeout=BOOT_TIMEOUT_S
            )
            # the registry files are written when the server exits: wait for that
            subprocess.run(
                ["wineserver", "-w"], stdin=devnull, stdout=out, stderr=subprocess.STDOUT, env=env, timeout=60
            )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"wineboot -i did not finish ({type(exc).__name__}: {exc})"
    if done.returncode != 0 or not (prefix / "system.reg").is_file():
        return f"wineboot -i failed (exit {done.returncode}): {log.read_text(errors='replace')[-300:]}"
    return None


@pytest.fixture(scope="session")
def wine_prefix(tmp_path_factory) -> Path:
    """A ready wine prefix (its first-run output already spent), or the test skips with the reason."""
    prefix = tmp_path_factory.mktemp("wine") / "prefix"
    problem = boot_prefix(prefix)
    if problem is not None:
        pytest.skip(problem)
    return prefix
