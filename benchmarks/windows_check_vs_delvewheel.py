"""Side by side: the full check of a torch 2.3.0 Windows env against ``delvewheel show --add-path <torch\\lib>``.

Both read the same files from the same wheel: delvewheel analyses the wheel (it unpacks it), conda-torchcheck the
env it is installed in (the whole wheel unpacked under Lib\\site-packages, a conda-style python.exe folder with the
Visual C++ runtime 14.44, a Windows folder whose System32 holds the OS DLLs). Run by hand, not by CI:

    python -m venv /tmp/peers && /tmp/peers/bin/pip install delvewheel      # the peer, outside the project
    .venv/bin/python benchmarks/windows_check_vs_delvewheel.py --runs 5 --delvewheel /tmp/peers/bin/delvewheel
    .venv/bin/python benchmarks/windows_check_vs_delvewheel.py --runs 5 --other-packages   # + PyQt5-Qt5's DLLs

The tool runs with its bytecode cached (as after ``pip install``), ``PYTHONDONTWRITEBYTECODE`` unset and a private
``PYTHONPYCACHEPREFIX``; one warm-up run each. Figures: wall time (min and median), CPU time (user+sys, median) and
peak RSS (max) of the child process, from ``os.wait4``. The layout is built once under
``~/.cache/conda-torchcheck-testdata/bench`` (about 1 GB).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests import realdata  # noqa: E402
from tests.envbuilder import EnvBuilder  # noqa: E402
from tests.loader import windows_layouts as wl  # noqa: E402


def layout(base: Path) -> tuple[Path, Path, Path]:
    """(env prefix, Windows folder, wheel) for the full torch 2.3.0 install."""
    wheel = realdata.wheel("torch-2.3.0-win")
    env = base / "env"
    windows = base / "Windows"
    marker = base / ".complete"
    if not marker.exists():
        shutil.rmtree(base, ignore_errors=True)
        builder = EnvBuilder(env, os="windows", layout="conda")
        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(builder.site_packages)
        info = next(builder.site_packages.glob("torch-*.dist-info"))
        (info / "INSTALLER").write_text("pip\n", encoding="utf-8")
        wl.install_runtime(env, "msvc-runtime-14.44")
        wl.fake_windows(windows)
        marker.write_text("ok")
    # torch's pure-Python dependencies, as `pip install torch` leaves them (metadata is all the checks read)
    site = next((env / "Lib").glob("site-packages"))
    for name, version in (
        ("filelock", "3.16.1"),
        ("typing_extensions", "4.12.2"),
        ("sympy", "1.13.3"),
        ("networkx", "3.4.2"),
        ("jinja2", "3.1.6"),
        ("fsspec", "2025.9.0"),
    ):
        info = site / f"{name}-{version}.dist-info"
        if not info.exists():
            info.mkdir()
            (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
            (info / "INSTALLER").write_text("pip\n")
    return env, windows, wheel


def measure(cmd: list[str], env: dict[str, str], runs: int) -> dict[str, float]:
    """Wall, CPU and peak RSS of ``cmd``; RSS through GNU time when present (a forked child's ``ru_maxrss`` starts
    from the parent's size before exec, which would hide small figures)."""
    gnu_time = shutil.which("time") if Path("/usr/bin/time").exists() else None
    walls, cpus, rss = [], [], []
    code = 0
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "time.txt"
        for i in range(runs + 1):
            full = [gnu_time or "/usr/bin/time", "-o", str(report), "-f", "%M %U %S", *cmd] if gnu_time else cmd
            start = time.perf_counter()
            proc = subprocess.Popen(full, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
            _pid, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - start
            if i == 0:
                code = os.waitstatus_to_exitcode(status)
                continue  # warm-up (page cache, bytecode, hash cache)
            walls.append(wall)
            if gnu_time:
                kb, user, system = report.read_text().split()[-3:]
                rss.append(int(kb) / 1024)
                cpus.append(float(user) + float(system))
            else:
                cpus.append(usage.ru_utime + usage.ru_stime)
                rss.append(usage.ru_maxrss / 1024)
    return {
        "wall_min": min(walls),
        "wall_median": statistics.median(walls),
        "cpu_median": statistics.median(cpus),
        "rss_max": max(rss),
        "exit": code,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--delvewheel", default=shutil.which("delvewheel") or "/tmp/peers/bin/delvewheel")
    parser.add_argument("--base", type=Path, default=realdata.CACHE / "bench" / "torch-2.3.0-conda")
    parser.add_argument(
        "--other-packages",
        action="store_true",
        help="also install PyQt5-Qt5 5.15.2's DLLs (its VC++ runtime copies: TC311's inventory has work to do)",
    )
    args = parser.parse_args(argv)
    prefix, windows, wheel = layout(args.base)
    pyqt = prefix / "Lib" / "site-packages" / "PyQt5_Qt5-5.15.2.dist-info"
    if args.other_packages and not pyqt.exists():
        wl.install_pyqt5_qt5(EnvBuilder(prefix, os="windows", layout="conda"))
    elif not args.other_packages and pyqt.exists():
        shutil.rmtree(pyqt)
        shutil.rmtree(prefix / "Lib" / "site-packages" / "PyQt5", ignore_errors=True)
    pycache = tempfile.mkdtemp(prefix="ctc-pycache-")
    tool_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    tool_env["PYTHONPYCACHEPREFIX"] = pycache
    tool = [sys.executable, "-m", "conda_torchcheck"]
    common = ["-p", str(prefix), "--system-root", str(windows), "--ignore-environment", "--path", ""]
    cases = [
        ("conda-torchcheck check (all checks, hashes)", [*tool, "check", *common], tool_env),
        ("conda-torchcheck check --no-hashes", [*tool, "check", "--no-hashes", *common], tool_env),
        ("conda-torchcheck check --only TC3,TC9", [*tool, "check", "--only", "TC3,TC9", *common], tool_env),
        ("conda-torchcheck tree torch", [*tool, "tree", "torch", *common], tool_env),
        (
            "  ... check --skip TC311,TC312,TC313,TC314",
            [*tool, "check", "--skip", "TC311,TC312,TC313,TC314", *common],
            tool_env,
        ),
    ]
    torch_lib = prefix / "Lib" / "site-packages" / "torch" / "lib"
    if args.delvewheel and Path(args.delvewheel).exists():
        cases.append(
            (
                "delvewheel show --add-path torch\\lib",
                [args.delvewheel, "show", "--add-path", str(torch_lib), str(wheel)],
                dict(os.environ),
            )
        )
    else:
        print(f"delvewheel not found at {args.delvewheel}: peer column skipped", file=sys.stderr)
    results = {}
    for name, cmd, env in cases:
        results[name] = measure(cmd, env, args.runs)
    print(f"torch 2.3.0 win_amd64 layout: {prefix} ({args.runs} runs after one warm-up; load {os.getloadavg()[0]:.1f})")
    print(f"{'command':48} {'wall min':>9} {'wall med':>9} {'cpu med':>8} {'peak RSS':>9}  exit")
    for name, r in results.items():
        print(
            f"{name:48} {r['wall_min']:8.3f}s {r['wall_median']:8.3f}s {r['cpu_median']:7.3f}s "
            f"{r['rss_max']:7.1f}MB  {r['exit']}"
        )
    peer = results.get("delvewheel show --add-path torch\\lib")
    if peer:
        ours = results["conda-torchcheck check (all checks, hashes)"]
        print(
            f"speed-up (median wall): {peer['wall_median'] / ours['wall_median']:.1f}x; "
            f"(median CPU): {peer['cpu_median'] / ours['cpu_median']:.1f}x"
        )
    shutil.rmtree(pycache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
