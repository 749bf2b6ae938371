"""Item 9 of the hostile-input issue, the activation hooks' side: `hooks install|status|remove` on a FIFO or a
folder named like the script, an etc/ the user cannot write, and an activate.d that is a link out of the env.
Never a hang or a traceback, and never a file written or deleted outside the prefix."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from tests.hostile.envs import build
from tests.hostile.harness import open_tree, run_cli, snapshot, unprivileged_prefix

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and POSIX permissions")

SCRIPT = "zz_conda_torchcheck.sh"


def activate_d(b):
    return b.prefix / "etc" / "conda" / "activate.d"


@pytest.mark.parametrize("kind", ["fifo", "folder", "dev-zero"])
def test_a_non_file_named_like_the_script(tmp_path, kind):
    b = build(tmp_path / "env", "conda")
    folder = activate_d(b)
    folder.mkdir(parents=True)
    path = folder / SCRIPT
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero")
    for verb in ("status", "install", "remove"):
        out = run_cli("hooks", verb, "-p", str(b.prefix), target=b.prefix if verb != "install" else None)
        if verb == "install":
            assert out.code == 2 and str(path) in out.stderr
    assert os.path.lexists(path)  # not ours: left alone


def test_an_activate_d_link_out_of_the_env(tmp_path):
    b = build(tmp_path / "env", "conda")
    outside = tmp_path / "outside"
    outside.mkdir()
    (b.prefix / "etc" / "conda").mkdir(parents=True)
    activate_d(b).symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    out = run_cli("hooks", "install", "-p", str(b.prefix))
    assert out.code == 2 and "leads out of the environment" in out.stderr
    run_cli("hooks", "status", "-p", str(b.prefix))
    run_cli("hooks", "remove", "-p", str(b.prefix))
    assert snapshot(outside) == before and not list(outside.iterdir())


def test_an_etc_the_user_cannot_write():
    as_user = unprivileged_prefix()
    if as_user is None:
        pytest.skip("no way to run without root's capabilities here")
    root = open_tree()
    try:
        b = build(root / "env", "conda")
        for path in [root, *root.rglob("*")]:
            if not path.is_symlink():
                path.chmod(0o755 if path.is_dir() else 0o644)
        out = run_cli("hooks", "install", "-p", str(b.prefix), target=b.prefix, as_user=as_user)
        assert out.code == 2 and "Permission denied" in out.stderr
        run_cli("hooks", "status", "-p", str(b.prefix), target=b.prefix, as_user=as_user)
    finally:
        shutil.rmtree(root)


@pytest.mark.parametrize("shell", ["bash", "dash", "zsh"])
def test_a_long_path_is_walked_in_linear_time(tmp_path, shell):
    """6,000 PATH and LD_LIBRARY_PATH entries (near the 128 KiB a variable may hold): the old front-cutting walk
    was quadratic (20-40 s here); a linear one ends well inside the subprocess bound, which is the assertion
    (no timing assert)."""
    import subprocess

    from conda_torchcheck.hooks.activation import render
    from tests.hooks.test_activation_scripts import facts

    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    script = tmp_path / "activate.sh"
    script.write_bytes(render.render(".sh", facts(), ()))
    prefix = tmp_path / "env"
    (prefix / "bin").mkdir(parents=True)
    many = ":".join(f"/nonexistent/d{i}" for i in range(6_000))
    env = {"CONDA_PREFIX": str(prefix), "PATH": f"{many}:{prefix}/bin:/usr/bin:/bin", "LD_LIBRARY_PATH": many}
    done = subprocess.run([shell, "-c", f". '{script}'"], env=env, capture_output=True, timeout=15)
    assert done.returncode == 0, done.stderr[-500:]
