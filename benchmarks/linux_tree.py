"""Side by side on torch's ``_C`` extension module: ldd, libtree, lddtree and conda-torchcheck.

    python benchmarks/linux_tree.py                       # torch 2.13.0+cpu from the test-data cache
    python benchmarks/linux_tree.py --file /path/_C.cpython-311-x86_64-linux-gnu.so --rounds 15
    python benchmarks/linux_tree.py --snapshot            # run our CLI from a `git archive HEAD` copy, so that
                                                          # edits in the working tree do not force recompiles

Peers (not needed by CI): ``apt-get install -y pax-utils libtree``; lddtree needs Debian's /usr/bin/python3
with python3-pyelftools. Every command runs ``--rounds`` times, interleaved; the table shows the fastest and the
median wall time, and the in-process section times the loader model alone (graph + symbol-version checks,
then the full undefined-symbol pass) with cold caches each round.

Last measured (2026-12-02, 2-core VM shared with a CI run, load 1.3-1.4, 15 rounds, this and the previous code in
turn): lddtree / conda-torchcheck tree 2.96-2.99x median (previous code 2.80-2.87x), 34-37 ms fastest, peak RSS
13.4 MB; interleaved, 40 runs each: 47.1 -> 44.6 ms median, 2.76 -> 2.91x median, 2.92 -> 3.00x fastest.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def default_file() -> tuple[Path, Path]:
    """(the _C module, an env prefix holding it) laid out from the cached real wheel."""
    from tests.envbuilder import EnvBuilder
    from tests.loader.linux_layouts import install_real_torch

    base = Path(tempfile.mkdtemp(prefix="tc-bench-"))
    builder = EnvBuilder(base / "venv", layout="venv")
    pkg = install_real_torch(builder)
    return next(pkg.glob("_C.cpython-311-*.so")), builder.prefix


def snapshot() -> Path:
    target = Path(tempfile.mkdtemp(prefix="tc-snapshot-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "HEAD"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(target / "conda_torchcheck")], check=True)
    return target


PEAK_RSS: dict[str, float] = {}  # command -> the largest peak RSS (MB) seen, from GNU time when present


def wall(cmd: list[str], env: dict[str, str] | None = None) -> float:
    """Wall time of ``cmd``; its peak RSS goes to PEAK_RSS (through /usr/bin/time: a forked child's own
    ``ru_maxrss`` starts from the parent's size before exec)."""
    key = " ".join(cmd)
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as report:
        timed = ["/usr/bin/time", "-o", report.name, "-f", "%M", *cmd] if os.path.exists("/usr/bin/time") else cmd
        start = time.perf_counter()
        subprocess.run(timed, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
        elapsed = time.perf_counter() - start
        text = report.read().split()
    if text and text[-1].isdigit():
        PEAK_RSS[key] = max(PEAK_RSS.get(key, 0.0), int(text[-1]) / 1024)
    return elapsed


def in_process(file: Path, rounds: int) -> tuple[list[float], list[float]]:
    from conda_torchcheck.inventory.model import HostFacts
    from conda_torchcheck.loader import linux
    from conda_torchcheck.loader.contract import FileContext

    graph_times, symbol_times = [], []
    ctx = FileContext(HostFacts(live=True, environ={}))
    for _ in range(rounds):
        start = time.perf_counter()
        load = linux.load_file(ctx, file)
        graph_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        linux.check_symbols(load)
        symbol_times.append(time.perf_counter() - start)
    return graph_times, symbol_times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", type=Path, help="the ELF file (default: torch 2.13.0+cpu _C module)")
    parser.add_argument("--prefix", type=Path, help="the env passed to `conda-torchcheck tree -p`")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--snapshot", action="store_true", help="run our CLI from a git archive of HEAD")
    args = parser.parse_args(argv)
    if args.file is None:
        args.file, prefix = default_file()
        args.prefix = args.prefix or prefix
    prefix = args.prefix or Path(sys.prefix)
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    ours_env = dict(env)
    if args.snapshot:
        ours_env["PYTHONPATH"] = str(snapshot())
    commands: dict[str, tuple[list[str], dict[str, str]]] = {}
    if shutil.which("ldd"):
        commands["ldd"] = (["ldd", str(args.file)], env)
    if shutil.which("libtree"):
        commands["libtree"] = (["libtree", str(args.file)], env)
    if shutil.which("lddtree") and Path("/usr/bin/python3").exists():
        commands["lddtree"] = (["/usr/bin/python3", shutil.which("lddtree"), str(args.file)], env)
    tree_args = ["tree", "-p", str(prefix), str(args.file)]
    script = Path(sys.executable).with_name("conda-torchcheck")
    if script.is_file():  # the installed command: what people type
        commands["conda-torchcheck tree"] = ([str(script), *tree_args], ours_env)
    commands["python -m conda_torchcheck tree"] = ([sys.executable, "-m", "conda_torchcheck", *tree_args], ours_env)
    for cmd, e in commands.values():  # warm the page cache and the bytecode caches
        wall(cmd, e)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.rounds):
        for name, (cmd, e) in commands.items():
            times[name].append(wall(cmd, e))
    print(f"file: {args.file} ({args.file.stat().st_size:,} bytes), {args.rounds} rounds, load {os.getloadavg()}")
    print(f"{'command':34} {'fastest':>9} {'median':>9} {'peak RSS':>9}")
    for name, values in times.items():
        rss = PEAK_RSS.get(" ".join(commands[name][0]), 0.0)
        print(f"{name:34} {min(values) * 1000:8.1f}ms {statistics.median(values) * 1000:8.1f}ms {rss:7.1f}MB")
    if "lddtree" in times:
        for name in ("conda-torchcheck tree", "python -m conda_torchcheck tree"):
            if name not in times:
                continue
            ours = times[name]
            print(
                f"lddtree / {name}: fastest {min(times['lddtree']) / min(ours):.2f}x, "
                f"median {statistics.median(times['lddtree']) / statistics.median(ours):.2f}x"
            )
    graph, symbols = in_process(args.file, args.rounds)
    print(
        f"in-process: graph + version checks {min(graph) * 1000:.1f}ms (median {statistics.median(graph) * 1000:.1f}), "
        f"undefined-symbol pass {min(symbols) * 1000:.1f}ms (median {statistics.median(symbols) * 1000:.1f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
