"""Item 6 of the hostile-input issue: `check --all-envs` over an environments.txt holding entries that cannot
be looked at (a folder the user cannot search, a name past 255 bytes, a NUL byte, /proc/1/cwd), or that is
itself a link to /dev/zero; and an env that does not finish in time: its own line, and the run goes on."""

from __future__ import annotations

import sys

import pytest

from tests.hostile.envs import build
from tests.hostile.harness import run_cli

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX paths")


def home_with(tmp_path, lines: list[str]):
    home = tmp_path / "home"
    (home / ".conda").mkdir(parents=True)
    (home / ".conda" / "environments.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return home


def fleet(home, **env: str):
    out = run_cli("check", "--all-envs", "--json", env={"HOME": str(home), "CONDA_TORCHCHECK_WORKERS": "1", **env})
    return out, {e["prefix"]: e for e in out.doc["envs"]}


def test_odd_entries_do_not_stop_the_run(tmp_path):
    good = build(tmp_path / "good", "conda").prefix
    locked = tmp_path / "locked"
    locked.mkdir()
    odd = [str(tmp_path / ("x" * 300)), str(tmp_path / "nul\x00byte"), "/proc/1/cwd", str(locked / "env")]
    out, entries = fleet(home_with(tmp_path, [str(good), *odd]))
    # what cannot be looked at holds no conda-meta that can be seen: left out, as conda leaves such lines out
    assert list(entries) == [str(good)] and entries[str(good)]["status"] == "checked"


def test_an_environments_txt_linked_to_dev_zero(tmp_path):
    home = tmp_path / "home"
    (home / ".conda").mkdir(parents=True)
    (home / ".conda" / "environments.txt").symlink_to("/dev/zero")
    run_cli("check", "--all-envs", "--json", env={"HOME": str(home)})


def test_an_env_not_finished_in_time(tmp_path):
    prefixes = [build(tmp_path / f"env{i}", "conda").prefix for i in range(2)]
    out, entries = fleet(home_with(tmp_path, [str(p) for p in prefixes]), CONDA_TORCHCHECK_ENV_SECONDS="0.000001")
    assert out.code == 2
    for prefix in prefixes:
        assert "not finished within" in entries[str(prefix)]["error"]["message"]
