"""Item 2 of the hostile-input issue: a shared install owned by another user, where parts cannot be read or
searched. Run as a user without root's capabilities (setpriv to nobody when the suite runs as root, as CI
does), so permissions really apply: each unreadable part is a finding and the rest is still checked."""

from __future__ import annotations

import shutil
import sys

import pytest

from tests.hostile.envs import build
from tests.hostile.harness import open_tree, run_cli, unprivileged_prefix

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")


@pytest.fixture(scope="module")
def as_user():
    prefix = unprivileged_prefix()
    if prefix is None:
        pytest.skip(
            "no way to run without root's capabilities here (root without setpriv, or this python "
            "is not reachable by nobody)"
        )
    return prefix


@pytest.fixture
def tree():
    root = open_tree()
    yield root
    for path in [root, *root.rglob("*")]:  # give back what a case took away before removing
        if not path.is_symlink():
            path.chmod(0o755)
    shutil.rmtree(root)


PARTS = {
    "site-packages": lambda b: b.site_packages,
    "torch": lambda b: b.site_packages / "torch",
    "torch dist-info": lambda b: b.site_packages / "torch-2.5.1.dist-info",
    "torch METADATA": lambda b: b.site_packages / "torch-2.5.1.dist-info" / "METADATA",
    "torch RECORD": lambda b: b.site_packages / "torch-2.5.1.dist-info" / "RECORD",
    "lib": lambda b: b.prefix / "lib",
    "bin": lambda b: b.prefix / "bin",
    "conda-meta": lambda b: b.prefix / "conda-meta",
}


@pytest.mark.parametrize("mode", [0o000, 0o311], ids=["mode-000", "not-listable"])
@pytest.mark.parametrize("part", PARTS)
def test_an_unreadable_part(as_user, tree, part, mode):
    b = build(tree / "env", "conda")
    path = PARTS[part](b)
    if path.is_file() and mode == 0o311:
        pytest.skip("listing applies to folders")
    path.chmod(mode)
    out = run_cli("check", "-p", str(b.prefix), "--json", target=b.prefix, as_user=as_user, env={"HOME": str(tree)})
    assert out.code in (0, 1)
    assert "TC990" not in out.ids(), out.findings("TC990")
    if part == "conda-meta" and mode == 0o000:
        [f] = out.findings("TC901")
        assert f["evidence"]["file"] == str(path) and f["evidence"]["problem"] == "Permission denied"
    if part == "site-packages" and mode == 0o000:
        assert any(f["evidence"]["file"] == str(path) for f in out.findings("TC902"))
    if part == "torch METADATA":
        [f] = [f for f in out.findings("TC902") if f["evidence"]["file"] == str(path)]
        assert "Permission denied" in f["evidence"]["problem"]


def test_a_home_that_cannot_be_searched(as_user, tree):
    """The user site (~/.local/...) behind a home folder that is not the user's: skipped, not crashed on."""
    b = build(tree / "env", "venv")
    home = tree / "home"
    (home / ".local").mkdir(parents=True)
    home.chmod(0o700)
    out = run_cli("check", "-p", str(b.prefix), "--json", target=b.prefix, as_user=as_user, env={"HOME": str(home)})
    assert out.code in (0, 1) and "TC990" not in out.ids()


def test_a_prefix_that_cannot_be_searched(as_user, tree):
    b = build(tree / "env", "conda")
    b.prefix.chmod(0o000)
    out = run_cli("check", "-p", str(b.prefix), target=b.prefix, as_user=as_user)
    assert out.code == 2 and "Permission denied" in out.stderr
    out = run_cli("check", "-p", str(b.prefix / "sub"), as_user=as_user)
    assert out.code == 2 and "Permission denied" in out.stderr


def test_tree_with_an_unreadable_torch(as_user, tree):
    b = build(tree / "env", "venv")
    (b.site_packages / "torch").chmod(0o000)
    run_cli("tree", "-p", str(b.prefix), "--json", target=b.prefix, as_user=as_user, env={"HOME": str(tree)})
