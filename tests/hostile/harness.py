"""Run the CLI as a user meets it on a hostile target: a subprocess with no stdin, a time limit and an
address-space limit, optionally as a user without root's capabilities, and check what every case must hold.

Every case asserts the same three things: no traceback, exit code 0/1 with a JSON document or 2 with one line
of error, and nothing written in the target (listing and mtimes before and after). A hang is a test failure
after ``TIMEOUT`` seconds, not a stuck suite.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

TIMEOUT = 20  # seconds: every case ends in well under one; this only bounds a regression
MEMORY = 8 << 30  # as in the report that found these: an 8 GB address-space limit
NOBODY = 65534


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str

    @property
    def doc(self) -> dict:
        return json.loads(self.stdout)

    def ids(self) -> list[str]:
        return [f["id"] for f in self.doc.get("findings", [])]

    def findings(self, fid: str) -> list[dict]:
        return [f for f in self.doc.get("findings", []) if f["id"] == fid]


def _limit_memory() -> None:  # pragma: no cover - runs in the child
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def unprivileged_prefix() -> list[str] | None:
    """The command prefix that runs a child as a user without root's file capabilities, or None when this
    machine has no way to (not root, or no setpriv)."""
    if not hasattr(os, "geteuid"):
        return None
    if os.geteuid() != 0:
        return []  # already an ordinary user: permissions apply as they are
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    probe = subprocess.run([*prefix, sys.executable, "-c", "import conda_torchcheck"], capture_output=True, timeout=30)
    return prefix if probe.returncode == 0 else None


def open_tree() -> Path:
    """A folder every user can search, for targets a child without root's capabilities must reach (pytest's
    tmp_path sits under a folder only its owner can enter)."""
    root = Path(tempfile.mkdtemp(prefix="torchcheck-hostile-"))
    root.chmod(0o755)
    return root


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """(mode, mtime) of every path below ``root``, links not followed, unreadable folders as they are."""
    out: dict[str, tuple[int, int]] = {}
    for current, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(current, name)
            st = os.lstat(path)
            out[path] = (st.st_mode, st.st_mtime_ns)
    return out


def run_cli(
    *argv: str,
    target: Path | None = None,
    as_user: list[str] | None = None,
    env: dict[str, str] | None = None,
    stdin: bytes | None = None,
    timeout: float = TIMEOUT,
) -> Outcome:
    """``python -m conda_torchcheck ARGV`` on ``target``, asserting no hang, no traceback, a sane exit code and
    nothing changed below ``target``."""
    before = snapshot(target) if target is not None else None
    child_env = {k: v for k, v in os.environ.items() if not k.startswith(("CONDA", "PYTHON", "VIRTUAL_ENV"))}
    child_env.update({"NO_COLOR": "1", "PYTHONIOENCODING": "utf-8"}, **(env or {}))
    cwd = tempfile.gettempdir()
    try:
        proc = subprocess.run(
            [*(as_user or []), sys.executable, "-m", "conda_torchcheck", *argv],
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            env=child_env,
            cwd=cwd,
            preexec_fn=_limit_memory if sys.platform.startswith("linux") else None,
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"hung past {timeout} s: {argv}") from exc
    out = Outcome(proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))
    assert "Traceback" not in out.stderr, out.stderr[-3000:]
    assert out.code in (0, 1, 2), (out.code, out.stderr[-2000:])
    if out.code == 2 and "--json" in argv:  # the error as a JSON document on stdout
        assert out.doc["kind"] == "error" or out.doc.get("exit_code") == 2, out.stdout[-2000:]
    elif out.code == 2:
        assert out.stderr.startswith(("conda-torchcheck: error: ", "usage: ")), out.stderr[-2000:]
    if target is not None:
        assert snapshot(target) == before, "the target was changed"
    return out
