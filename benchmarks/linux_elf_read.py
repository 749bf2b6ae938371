"""The ELF reader against pyelftools on libtorch_cpu.so (434 MB, 75,415 dynamic symbols).

    python benchmarks/linux_elf_read.py [--file libtorch_cpu.so] [--rounds 5]

pyelftools runs under /usr/bin/python3 (Debian's python3-pyelftools) when the running interpreter lacks it.
Three tasks: the dynamic section (DT_NEEDED, RUNPATH), version needs, and every dynamic symbol with its
version; ours also builds the set of defined names the undefined-symbol check uses.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PYELFTOOLS = r"""
import sys, time
from elftools.elf.elffile import ELFFile
from elftools.elf.dynamic import DynamicSection
from elftools.elf.gnuversions import GNUVerNeedSection, GNUVerSymSection
path, task = sys.argv[1], sys.argv[2]
start = time.perf_counter()
with open(path, "rb") as fh:
    elf = ELFFile(fh)
    if task == "dynamic":
        dyn = elf.get_section_by_name(".dynamic")
        needed = [t.needed for t in dyn.iter_tags() if t.entry.d_tag == "DT_NEEDED"]
    elif task == "verneed":
        sec = next(s for s in elf.iter_sections() if isinstance(s, GNUVerNeedSection))
        needs = [(v.name, a.name) for v, auxs in sec.iter_versions() for a in auxs]
    else:
        dynsym = elf.get_section_by_name(".dynsym")
        versym = next(s for s in elf.iter_sections() if isinstance(s, GNUVerSymSection))
        n = 0
        for i, sym in enumerate(dynsym.iter_symbols()):
            versym.get_symbol(i)["ndx"]
            n += 1
print(time.perf_counter() - start)
"""


def ours(path: Path, task: str) -> float:
    from conda_torchcheck.binaries.elf import read_elf, read_symbols

    start = time.perf_counter()
    info = read_elf(path)
    if task == "symbols":
        syms = read_symbols(info)
        syms.present_names()
    return time.perf_counter() - start


def theirs(path: Path, task: str) -> float | None:
    for python in (sys.executable, "/usr/bin/python3"):
        proc = subprocess.run([python, "-c", PYELFTOOLS, str(path), task], capture_output=True, text=True)
        if proc.returncode == 0:
            return float(proc.stdout.strip())
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    if args.file is None:
        from tests.realdata import extract

        args.file = extract("torch-2.13.0-linux-cpu", ("torch/lib/*", "torch/_C*.so")) / "torch/lib/libtorch_cpu.so"
    print(f"{args.file} ({args.file.stat().st_size:,} bytes)")
    for task in ("dynamic", "verneed", "symbols"):
        mine = [ours(args.file, task) for _ in range(args.rounds)]
        other = [
            t for t in (theirs(args.file, task) for _ in range(min(args.rounds, 2 if task == "symbols" else 5))) if t
        ]
        line = f"{task:8} ours {min(mine) * 1000:8.1f}ms (median {statistics.median(mine) * 1000:.1f})"
        if other:
            line += f"   pyelftools {min(other) * 1000:8.1f}ms   ratio {min(other) / min(mine):.0f}x"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
