"""The macOS side on the real torch 2.5.1 arm64 wheel, examined from Linux: the Mach-O reader against
``llvm-objdump --macho`` (the only Mach-O tool on this host), and the whole model (``import torch`` replayed,
the undefined-symbol pass, every check) in-process.

    python benchmarks/macos_tree.py              # torch 2.5.1 arm64 from the test-data cache
    python benchmarks/macos_tree.py --rounds 15

Every timing runs ``--rounds`` times; the table shows the fastest and the median wall time.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def timed(fn, rounds: int) -> tuple[float, float]:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)

    from conda_torchcheck.binaries.macho import read_exports, read_macho
    from conda_torchcheck.checks import run_checks
    from conda_torchcheck.checks.context import CheckContext
    from conda_torchcheck.inventory import load_environment
    from conda_torchcheck.loader import macos
    from tests.loader.macos_layouts import install_real_torch, mac_env

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        builder = mac_env(Path(tmp) / "env")
        pkg = install_real_torch(builder)
        files = sorted((pkg / "lib").glob("*.dylib")) + sorted(pkg.glob("_C.*.so"))
        rows.append(("reader: load commands of torch's 9 Mach-O files", *timed(lambda: [read_macho(f) for f in files],
                                                                              args.rounds)))  # fmt: skip
        objdump = shutil.which("llvm-objdump")
        if objdump:
            rows.append(("llvm-objdump --macho --private-headers, same files", *timed(
                lambda: [subprocess.run([objdump, "--macho", "--private-headers", str(f)], capture_output=True)
                         for f in files], args.rounds)))  # fmt: skip
        cpu = pkg / "lib" / "libtorch_cpu.dylib"
        sl = read_macho(cpu).slices[0]
        rows.append(("reader: libtorch_cpu.dylib export trie", *timed(lambda: read_exports(cpu, sl), args.rounds)))
        if objdump:
            rows.append(("llvm-objdump --macho --exports-trie libtorch_cpu.dylib", *timed(
                lambda: subprocess.run([objdump, "--macho", "--exports-trie", str(cpu)], capture_output=True),
                args.rounds)))  # fmt: skip
        env, host = load_environment(builder.prefix)

        def model():
            ctx = CheckContext(env, host)
            macos.torch_load(ctx)
            macos.torch_symbol_misses(ctx)

        rows.append(("model: import torch replayed + symbol pass", *timed(model, args.rounds)))
        rows.append(("every check on the env", *timed(lambda: run_checks(CheckContext(env, host)), args.rounds)))
    width = max(len(r[0]) for r in rows)
    print(f"{'what':<{width}}  {'fastest':>9}  {'median':>9}")
    for name, fastest, median in rows:
        print(f"{name:<{width}}  {fastest * 1000:8.1f}ms  {median * 1000:8.1f}ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
