"""``check --all-envs`` on 20 envs, the whole command as a user runs it. Run by hand, not in CI:

    .venv/bin/python benchmarks/fleet.py --runs 7

A scratch HOME holds a miniforge-style base with 19 envs: 4 with a real torch 2.13.0+cpu Linux wheel's files
and 2 with the real torch 2.3.0 Windows wheel's (linked from the tests' real-data cache; run the realdata tests
once to fill it), 5 with fake conda torch families (healthy and broken), 8 without torch. Each run is a fresh
process (`conda-torchcheck check --all-envs`), in parallel workers (the default) and with
CONDA_TORCHCHECK_WORKERS=1 for comparison. Target: <= 2 s for 20 envs on this machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def build(home: Path) -> int:
    from benchmarks.real_envs import link_cached_torch
    from tests.checks.tc_helpers import healthy
    from tests.cli.test_main_check import broken
    from tests.envbuilder import EnvBuilder

    base = EnvBuilder(home / "miniforge3", layout="conda")
    (base.prefix / "condabin").mkdir()
    envs = home / "miniforge3" / "envs"
    real = 0
    for i in range(4):
        real += link_cached_torch(EnvBuilder(envs / f"linux-real-{i}", layout="conda"), "torch-2.13.0-linux-cpu")
    for i in range(2):
        real += link_cached_torch(EnvBuilder(envs / f"win-real-{i}", os="windows", layout="conda"), "torch-2.3.0-win")
    for i in range(3):
        healthy(EnvBuilder(envs / f"healthy-{i}", layout="conda"))
    for i in range(2):
        broken(EnvBuilder(envs / f"broken-{i}", layout="conda"))
    for i in range(8):
        EnvBuilder(envs / f"no-torch-{i}", layout="conda")
    return real


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    exe = Path(sys.executable).parent / "conda-torchcheck"
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        real = build(home)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CONDA", "VIRTUAL_ENV", "MAMBA"))}
        env["HOME"] = str(home)
        count = subprocess.run([str(exe), "check", "--all-envs", "--json"], env=env, capture_output=True, text=True)
        import json

        doc = json.loads(count.stdout)
        print(f"{doc['summary']['envs']} envs ({real} with real torch binaries): {doc['summary']}")
        for label, extra in (("parallel (default)", {}), ("one worker", {"CONDA_TORCHCHECK_WORKERS": "1"})):
            samples = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                subprocess.run([str(exe), "check", "--all-envs"], env={**env, **extra}, capture_output=True)
                samples.append(time.perf_counter() - t0)
            print(f"  {label:20} median {statistics.median(samples):.2f} s, min {min(samples):.2f} s")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
