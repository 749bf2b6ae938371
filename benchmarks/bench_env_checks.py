"""How long `check` spends on its own work for the TC1xx/TC2xx/TC9xx checks, on fixture envs.

Run by hand:  .venv/bin/python benchmarks/bench_env_checks.py [--repeat 30]
              .venv/bin/python benchmarks/bench_env_checks.py --vs-collect-env [--venv VENV] [--runs 7]

Measures, per env: load_environment (inventory), then the environment/pip checks (channels … cpu_build,
unreadable), and the whole `check` verb in-process (all registered checks, text rendering), as the median
of --repeat runs after one warm-up. Envs: a healthy conda-forge env, a broken pytorch-channel env (Linux),
a Windows venv with pip torch, and a "large" conda env with 400 records and a pytorch record listing
15,000 files (the size of a real CUDA pytorch record), to see how the inventory scales.

``--vs-collect-env``: side by side in separate processes, the full ``check`` of a venv where the real torch
2.13.0+cpu wheel is pip-installed (libtorch_cpu.so 434 MB, 75,415 dynamic symbols; built once under the test-data
cache, or ``--venv``) against that venv's ``python -m torch.utils.collect_env``: wall (min, median), CPU and peak
RSS of each, and the ratio. The tool runs with its bytecode cached, as after ``pip install``.

Last measured (2026-12-02, ninth session, 2-core VM, load 0.4-1.0, 9 runs after one warm-up each):
check 0.090 s median (0.085 s fastest), 13.6x collect_env's median wall, peak RSS 21.3 MB: every run after the
first, the symbol check's verdict read from its cache (loader/linux/symbol_cache.py). A first run, or the cache
off (``CONDA_TORCHCHECK_NO_CACHE=1``): 0.122 s median, 10.0x, 34.5 MB. Before the cache: 0.121 s, 10.1x, 30.7 MB.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.cli.main import main
from conda_torchcheck.inventory import fs, load_environment
from tests.envbuilder import EnvBuilder

MINE = ("channels", "variant", "versions", "mkl_ijit", "pip_conda", "duplicates", "shadowing", "base_env", "cpu_build")
PY_DEP = ("python >=3.11,<3.12.0a0",)


def healthy(root: Path) -> Path:
    b = EnvBuilder(root / "healthy")
    b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0000000_100", depends=PY_DEP)
    b.conda_python_package("torchvision", "0.20.1", "cpu_py311_h0000000_1")
    return b.prefix


def broken(root: Path) -> Path:
    b = EnvBuilder(root / "broken")
    b.conda_pytorch("2.2.2", "py3.11_cpu_0", channel="pytorch", depends=(*PY_DEP, "mkl >=2018"))
    b.conda_record("pytorch-cuda", "12.1", "h0_0", channel="pytorch")
    b.conda_record("mkl", "2024.1.0", "h0_0", channel="defaults")
    b.conda_python_package("torchvision", "0.19.1", "cuda126_py311_h0_1")
    b.dist("torchaudio", "2.4.0+cu121")
    (b.site_packages / "~orch").mkdir()
    return b.prefix


def windows_venv(root: Path) -> Path:
    b = EnvBuilder(root / "winvenv", os="windows", layout="venv")
    b.pip_torch("2.5.1+cpu")
    b.dist("torchvision", "0.20.1+cu121")
    for i in range(60):
        b.dist(f"package-{i}", "1.0")
    return b.prefix


def large(root: Path) -> Path:
    b = EnvBuilder(root / "large")
    files = {f"{b.site_rel}/torch/sub{i // 500}/f{i}.py": b"" for i in range(15000)}
    files[f"{b.site_rel}/torch/__init__.py"] = b""
    files[f"{b.site_rel}/torch-2.5.1.dist-info/METADATA"] = b"Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1\n"
    b.conda_record("pytorch", "2.5.1", "cuda126_mkl_py311_h0_303", depends=PY_DEP, files=files)
    for i in range(400):
        b.conda_record(f"lib{i}", "1.0", "h0_0", files={f"lib/lib{i}.so.{j}": b"" for j in range(20)})
    return b.prefix


def median_ms(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        fs.clear_cache()
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def real_venv(base: Path) -> Path:
    """A venv with the real torch 2.13.0+cpu wheel pip-installed (its pure-Python dependencies from the index)."""
    import subprocess

    from tests import realdata

    venv = base / "venv"
    if not (base / ".complete").exists():
        import shutil

        shutil.rmtree(base, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        wheel = realdata.wheel("torch-2.13.0-linux-cpu")
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        str(wheel)], check=True)  # fmt: skip
        subprocess.run([str(venv / "bin" / "python"), "-c", "import torch"], capture_output=True, check=False)
        (base / ".complete").write_text("ok")
    return venv


def vs_collect_env(venv: Path | None, runs: int) -> None:
    import os

    from benchmarks.windows_check_vs_delvewheel import measure
    from tests import realdata

    venv = venv or real_venv(realdata.CACHE / "bench" / "torch-2.13.0-linux-venv")
    pycache = tempfile.mkdtemp(prefix="ctc-pycache-")
    tool_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "LD_LIBRARY_PATH")}
    tool_env["PYTHONPYCACHEPREFIX"] = pycache
    peer_env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    # the symbol check's cache (conda_torchcheck/loader/linux/symbol_cache.py) in a folder of its own, filled by
    # the warm-up run: "check" is every run after the first; "check, no cache" is a first run (or the cache off)
    tool_env["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="ctc-cache-")
    cold_env = dict(tool_env, CONDA_TORCHCHECK_NO_CACHE="1")
    check = [sys.executable, "-m", "conda_torchcheck", "check", "-p", str(venv)]
    cases = {
        "conda-torchcheck check": (check, tool_env),
        "conda-torchcheck check, no cache": (check, cold_env),
        "python -m torch.utils.collect_env": (
            [str(venv / "bin" / "python"), "-m", "torch.utils.collect_env"],
            peer_env,
        ),
    }
    results = {name: measure(cmd, env, runs) for name, (cmd, env) in cases.items()}
    print(f"real torch 2.13.0+cpu venv: {venv} ({runs} runs after one warm-up; load {os.getloadavg()[0]:.1f})")
    print(f"{'command':36} {'wall min':>9} {'wall med':>9} {'cpu med':>8} {'peak RSS':>9}  exit")
    for name, r in results.items():
        print(
            f"{name:36} {r['wall_min']:8.3f}s {r['wall_median']:8.3f}s {r['cpu_median']:7.3f}s "
            f"{r['rss_max']:7.1f}MB  {r['exit']}"
        )
    peer = results["python -m torch.utils.collect_env"]
    for name in ("conda-torchcheck check", "conda-torchcheck check, no cache"):
        ours = results[name]
        print(
            f"collect_env / {name.removeprefix('conda-torchcheck ')}: "
            f"{peer['wall_median'] / ours['wall_median']:.1f}x (median wall), "
            f"{peer['wall_min'] / ours['wall_min']:.1f}x (min wall), "
            f"{peer['cpu_median'] / ours['cpu_median']:.1f}x (CPU)"
        )


def main_bench() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--vs-collect-env", action="store_true", help="the real-venv check against collect_env")
    parser.add_argument("--venv", type=Path, help="for --vs-collect-env: a venv with torch installed")
    parser.add_argument("--runs", type=int, default=7, help="for --vs-collect-env: measured runs of each")
    args = parser.parse_args()
    if args.vs_collect_env:
        vs_collect_env(args.venv, args.runs)
        return
    modules = [importlib.import_module(f"conda_torchcheck.checks.{m}").CHECK for m in (*MINE, "unreadable")]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        envs = {"healthy": healthy(root), "broken": broken(root), "windows venv": windows_venv(root)}
        envs["large (15k-file pytorch)"] = large(root)
        print(f"{'env':<26} {'inventory':>10} {'TC1/2/9 checks':>15} {'whole check verb':>17}   (median ms)")
        for label, prefix in envs.items():

            def inventory(prefix=prefix):
                return load_environment(prefix, use_live_host=False)

            loaded = load_environment(prefix, use_live_host=False)

            def checks(loaded=loaded):
                ctx = CheckContext(*loaded)  # a fresh context: nothing memoised from the previous round
                for check in modules:
                    list(check.run(ctx))

            def verb(prefix=prefix):
                with contextlib.redirect_stdout(io.StringIO()):
                    main(["check", "-p", str(prefix), "--ignore-environment"])

            inv = median_ms(inventory, args.repeat)
            mine = median_ms(checks, args.repeat)
            whole = median_ms(verb, args.repeat)
            print(f"{label:<26} {inv:>10.1f} {mine:>15.1f} {whole:>17.1f}")


if __name__ == "__main__":
    main_bench()
