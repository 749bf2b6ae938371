"""The core works where conda cannot be imported: CI's venv has conda (from ../shared/wheels, for tests/plugin),
so this runs the main verbs in a fresh interpreter in which every ``import conda`` fails."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = r"""
import importlib.abc, json, sys

class NoConda(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "conda" or name.startswith("conda."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoConda())
from conda_torchcheck.cli.main import main

codes = {}
for label, argv in json.loads(sys.argv[1]).items():
    codes[label] = main(argv)
print("\n---codes " + json.dumps(codes))
print("---conda-loaded " + json.dumps(sorted(m for m in sys.modules if m == "conda" or m.startswith("conda."))))
"""


def test_main_verbs_run_without_conda(tmp_path, make_env):
    env = make_env(os="linux", layout="venv")
    spec = tmp_path / "environment.yml"
    spec.write_text("channels: [conda-forge]\ndependencies:\n  - python=3.11\n  - pytorch=2.5.1\n")
    runs = {
        "check": ["check", "-p", str(env.prefix), "--json"],
        "explain": ["explain", "--no-env", "--json", "OSError: [WinError 126] Error loading shm.dll"],
        "spec": ["spec", "check", str(spec), "--json"],
        "list-checks": ["list-checks"],
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(runs)], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr
    tail = done.stdout.rsplit("\n---codes ", 1)[1]
    codes_line, loaded_line = tail.splitlines()[:2]
    codes = json.loads(codes_line)
    assert all(code in (0, 1) for code in codes.values()), (codes, done.stderr)
    assert json.loads(loaded_line.removeprefix("---conda-loaded ")) == []
