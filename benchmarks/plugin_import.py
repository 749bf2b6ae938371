"""What the conda plugin costs: importing plugin.py (every conda command does), and running the activation
scripts (every `conda activate` does). Run by hand, not in CI:

    .venv/bin/python benchmarks/plugin_import.py                # needs conda in that python (.ci/run's .venv)
    .venv/bin/python benchmarks/plugin_import.py --scripts-only
    .venv/bin/python benchmarks/plugin_import.py --end-to-end --runs 15

Part 1 starts fresh interpreters that first import what conda has loaded when it loads plugins
(conda.base.context, conda.plugins, conda.plugins.types), then time ``import conda_torchcheck.plugin``
(perf_counter around the import, and python -X importtime's self time). Part 2 sources the generated POSIX
script in bash/dash/zsh/fish a few hundred times and subtracts the time of sourcing an empty file.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PROBE = r"""
import argparse, json, sys, time
import conda.base.context, conda.plugins, conda.plugins.types, conda.cli.helpers
before = set(sys.modules)
t0 = time.perf_counter()
import conda_torchcheck.plugin
t1 = time.perf_counter()
new = sorted(set(sys.modules) - before)
# conda builds every plugin subcommand's parser on every command (conda list, conda install ...): measured the
# way conda reaches it, through the plugin manager
from conda.base.context import context
subcommand = context.plugin_manager.get_subcommands()["torchcheck"]
parser = argparse.ArgumentParser()
t2 = time.perf_counter()
subcommand.configure_parser(parser)
t3 = time.perf_counter()
assert not conda_torchcheck.plugin._PARSER_PROBLEM, conda_torchcheck.plugin._PARSER_PROBLEM
print(json.dumps({"ms": (t1 - t0) * 1000, "parser_ms": (t3 - t2) * 1000, "new": new}))
"""


def import_cost(runs: int) -> None:
    # installed packages ship compiled bytecode; measure with it (cached outside the repo), as conda users run
    with tempfile.TemporaryDirectory() as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        _import_cost(runs, env, "with bytecode")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX=tempfile.gettempdir() + "/nonexistent")
    _import_cost(max(5, runs // 3), env, "compiling from source (no bytecode)")


def _import_cost(runs: int, env: dict[str, str], label: str) -> None:
    subprocess.run([sys.executable, "-c", PROBE], capture_output=True, check=True, env=env)  # warm the cache
    samples, parser_ms, new = [], [], None
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, env=env)
        doc = json.loads(out.stdout)
        samples.append(doc["ms"])
        parser_ms.append(doc["parser_ms"])
        new = doc["new"]
    importtime = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-c",
            "import conda.base.context, conda.plugins.types; import conda_torchcheck.plugin",
        ],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stderr
    self_us = {}
    for line in importtime.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) == 3 and parts[2].startswith("conda_torchcheck"):
            self_us[parts[2]] = int(parts[0].split(":")[-1])
    print(f"import conda_torchcheck.plugin after conda's own modules, {label} ({runs} fresh interpreters)")
    print(f"  median {statistics.median(samples):.3f} ms   min {min(samples):.3f} ms   max {max(samples):.3f} ms")
    print(f"  -X importtime self time: {', '.join(f'{k} {v} us' for k, v in self_us.items())}")
    print(f"  modules added: {new}")
    print(
        f"  building the `conda torchcheck` parser (every conda command): median {statistics.median(parser_ms):.3f}"
        f" ms, min {min(parser_ms):.3f} ms"
    )


def script_cost(runs: int) -> None:
    from conda_torchcheck.hooks.activation import render
    from conda_torchcheck.hooks.activation.facts import ActivationFacts

    facts = ActivationFacts(
        os="linux",
        torch="2.5.1 (pip, cuda)",
        python_version="3.11.9",
        dll_search_mode="active",
        sonames=tuple(f"libcu{n}.so.12" for n in ("blas", "blasLt", "fft", "rand", "solver", "sparse", "dart"))
        + ("libnccl.so.2", "libcudnn.so.9", "libnvJitLink.so.12", "libtorch_cpu.so", "libc10.so"),
        own_lib_dirs=("lib/python3.11/site-packages/torch/lib", "lib/python3.11/site-packages/nvidia/cublas/lib"),
    )
    with tempfile.TemporaryDirectory() as tmp:
        prefix = Path(tmp) / "env with space"
        (prefix / "bin").mkdir(parents=True)
        for ext in (".sh", ".fish"):
            (Path(tmp) / f"s{ext}").write_bytes(render.render(ext, facts))
            (Path(tmp) / f"empty{ext}").write_text("true\n")
        path = f"{prefix}/bin:/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
        env = {"PATH": path, "CONDA_PREFIX": str(prefix), "LD_LIBRARY_PATH": "/usr/local/cuda/lib64:/opt/x/lib"}
        print(f"activation script, sourced {runs} times per shell (PATH of 7 folders, LD_LIBRARY_PATH of 2)")
        for shell in ("bash", "dash", "zsh", "fish"):
            exe = shutil.which(shell)
            if exe is None:
                print(f"  {shell:5} not installed")
                continue
            per = {}
            for name in ("s", "empty"):
                ext = ".fish" if shell == "fish" else ".sh"
                script = Path(tmp) / f"{name}{ext}"
                if shell == "fish":
                    code = f"for i in (seq {runs}); source '{script}'; end"
                    argv = [exe, "--no-config", "-c", code]
                else:
                    code = f'i=0; while [ $i -lt {runs} ]; do . "$1"; i=$((i+1)); done'
                    argv = [exe, "-c", code, "sh", str(script)]
                best = min(_timed(argv, env) for _ in range(3))
                per[name] = best
            each = (per["s"] - per["empty"]) / runs * 1000
            print(f"  {shell:5} {each:.3f} ms per activation")


def post_command_cost(runs: int) -> None:
    """The post-command's engine run (``check`` without hashing) on envs holding real torch wheels' binaries
    (from the test-data cache: run the realdata tests once to fill it)."""
    import time

    from benchmarks.real_envs import link_cached_torch
    from conda_torchcheck.hooks.activation import install as activation
    from conda_torchcheck.hooks.post_command import check_prefix
    from tests import realdata
    from tests.envbuilder import EnvBuilder

    cases = {
        "win-64 conda env, pip torch 2.3.0": ("torch-2.3.0-win", "windows"),
        "linux-64 conda env, pip torch 2.13.0+cpu": ("torch-2.13.0-linux-cpu", "linux"),
    }
    for label, (key, os_name) in cases.items():
        with tempfile.TemporaryDirectory() as tmp:
            b = EnvBuilder(Path(tmp) / "env", os=os_name, layout="conda")
            if not link_cached_torch(b, key):
                print(f"  {label}: not in the test-data cache ({realdata.CACHE}), skipped")
                continue
            samples = []
            for _ in range(runs):
                t0 = time.perf_counter()
                findings, installed = check_prefix(str(b.prefix))
                samples.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            activation.install(b.prefix)
            install_s = time.perf_counter() - t0
            ids = sorted({f.id for f in findings})
            print(
                f"  {label}: check median {statistics.median(samples) * 1000:.0f} ms (min "
                f"{min(samples) * 1000:.0f}); findings {ids}; hooks install {install_s * 1000:.0f} ms"
            )


def end_to_end(runs: int) -> None:
    """``conda create --offline -y -p X``: the same conda with and without this package, interleaved."""
    wheels = ROOT.parent / "shared" / "wheels"
    conda_wheels = sorted(map(str, wheels.glob("menuinst-*.whl"))) + sorted(map(str, wheels.glob("conda-*.whl")))
    if len(conda_wheels) < 2:
        print(f"end-to-end: no conda wheels in {wheels}, skipped")
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        pythons = {}
        for label in ("without", "with"):
            venv = root / label
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            extra = [str(ROOT)] if label == "with" else []
            pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *conda_wheels, *extra]
            subprocess.run(pip, check=True, capture_output=True)
            pythons[label] = str(venv / "bin" / "python")
        condarc = root / "condarc"
        condarc.write_text("solver: classic\nnotify_outdated_conda: false\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith("CONDA")}
        env.update(CONDARC=str(condarc), CONDA_PKGS_DIRS=str(root / "pkgs"), HOME=str(root))
        samples: dict[str, list[float]] = {"without": [], "with": []}
        for i in range(runs + 1):
            for label, python in pythons.items():
                target = root / f"env-{label}-{i}"
                took = _timed([python, "-m", "conda", "create", "--offline", "-y", "-q", "-p", str(target)], env)
                if i:  # the first round fills the OS caches
                    samples[label].append(took * 1000)
        print(f"conda create --offline -y -p X (empty env), {runs} interleaved runs each")
        for label, values in samples.items():
            print(f"  {label:7} conda-torchcheck: median {statistics.median(values):.1f} ms, min {min(values):.1f} ms")
        delta = statistics.median(samples["with"]) - statistics.median(samples["without"])
        low = min(samples["with"]) - min(samples["without"])
        print(f"  difference: median {delta:+.1f} ms, min {low:+.1f} ms")


def _timed(argv: list[str], env: dict[str, str]) -> float:
    import time

    t0 = time.perf_counter()
    subprocess.run(argv, env=env, check=True, capture_output=True)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--script-runs", type=int, default=300)
    parser.add_argument("--scripts-only", action="store_true")
    parser.add_argument("--check-runs", type=int, default=3)
    parser.add_argument("--end-to-end", action="store_true", help="only conda create with and without the package")
    args = parser.parse_args()
    if args.end_to_end:
        end_to_end(args.runs)
        return
    if not args.scripts_only:
        try:
            import conda  # noqa: F401
        except ImportError:
            print("conda is not importable with this python: skipping the import cost (use --scripts-only)")
        else:
            import_cost(args.runs)
    script_cost(args.script_runs)
    if not args.scripts_only:
        print(f"post-command engine run (no hashing), {args.check_runs} runs")
        post_command_cost(args.check_runs)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
