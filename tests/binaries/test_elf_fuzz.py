"""Fuzz job for the ELF reader: mutated real ELF headers must never crash it or make it hang.

pytest runs a small deterministic slice (400 cases). The full job is run by hand or in a scheduled CI job:

    python -m tests.binaries.test_elf_fuzz                        # 12,000 cases from tests/fixtures/elf
    python -m tests.binaries.test_elf_fuzz --cases 50000 --real   # also small files of the real torch wheel
                                                                   # and this host's libc/libstdc++

A case mutates a seed (random bytes in the ELF/program headers, the dynamic section, the version tables or the
symbol table; 4- and 8-byte fields set to 0, all ones, the file size or random values; truncation) and runs
``parse_bytes``, then ``symbols_from_bytes``, ``present_names`` and ``defined_among`` on what parsed. It fails
when anything raises, returns something other than ElfFile/Symbols/Unreadable, or takes longer than ``--limit`` seconds
(default 1 s; an alarm stops a real hang after 10 s). Failing inputs are kept in ``--keep``. Exit status 0
when every case passed.
"""

from __future__ import annotations

import argparse
import random
import signal
import struct
import sys
import tempfile
import time
from pathlib import Path

from conda_torchcheck.binaries.elf import ElfFile, Symbols, Unreadable, gnu_hash, parse_bytes, symbols_from_bytes

FX = Path(__file__).resolve().parents[1] / "fixtures" / "elf" / "prebuilt"


class Hang(Exception):
    pass


def _alarm(_signum, _frame):
    raise Hang()


def seeds(real: bool) -> list[bytes]:
    out = [p.read_bytes() for p in sorted(FX.rglob("*.so*"))]
    if real:
        from tests.realdata import extract

        lib = extract("torch-2.13.0-linux-cpu", ("torch/lib/*", "torch/_C*.so")) / "torch" / "lib"
        for name in ("libtorch.so", "libtorch_global_deps.so", "libshm.so", "libgomp.so.1"):
            out.append((lib / name).read_bytes())
        for host in ("/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"):
            try:
                out.append(Path(host).read_bytes())
            except OSError:
                pass
    return out


def _regions(data: bytes) -> list[tuple[int, int]]:
    """(offset, length) of the parts worth attacking, from a clean parse of the seed."""
    regions = [(0, min(64, len(data)))]
    info = parse_bytes(data)
    if isinstance(info, ElfFile):
        phoff = struct.unpack_from("<Q", data, 32)[0] if info.bits == 64 else struct.unpack_from("<I", data, 28)[0]
        regions.append((phoff, 56 * 8))
        t = info.tables
        for start, size in ((t.strtab, 256), (t.symtab, 24 * 64), (t.versym, 128), (t.gnu_hash, 256)):
            if start is not None:
                regions.append((start, size))
        end = data.find(b"\x01\x00\x00\x00\x00\x00\x00\x00", 0)  # a DT_NEEDED tag, roughly where .dynamic is
        if end > 0:
            regions.append((end, 512))
    return [(o, max(1, min(n, len(data) - o))) for o, n in regions if 0 <= o < len(data)]


def mutate(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    kind = rng.random()
    if kind < 0.12:
        return bytes(buf[: rng.randrange(0, len(buf))])
    regions = _regions(data)
    for _ in range(rng.randint(1, 6)):
        offset, length = rng.choice(regions)
        at = offset + rng.randrange(length)
        choice = rng.random()
        if choice < 0.45:
            buf[at] = rng.randrange(256)
        else:
            width = 8 if choice < 0.7 else 4
            if at + width > len(buf):
                continue
            value = rng.choice([0, (1 << (8 * width)) - 1, len(buf), len(buf) - 1, rng.getrandbits(8 * width)])
            buf[at : at + width] = value.to_bytes(width, "little")
    return bytes(buf)


def run_case(data: bytes) -> None:
    info = parse_bytes(data, "fuzz.so")
    if isinstance(info, Unreadable):
        return
    assert isinstance(info, ElfFile), type(info)
    syms = symbols_from_bytes(info, data)
    if isinstance(syms, Symbols):
        syms.present_names()
        syms.required_names()
        asked = {(gnu_hash(r[0]) | 1): [(r[0], r[1], gnu_hash(r[0]))] for r in syms.refs[:50]}
        syms.defined_among(asked)
        _ = syms.undefined
    else:
        assert isinstance(syms, Unreadable), type(syms)


def fuzz(cases: int, seed: int, real: bool, limit: float, keep: Path | None) -> tuple[int, list[str], float]:
    rng = random.Random(seed)
    pool = seeds(real)
    failures: list[str] = []
    slowest = 0.0
    use_alarm = hasattr(signal, "SIGALRM")
    if use_alarm:
        signal.signal(signal.SIGALRM, _alarm)
    for i in range(cases):
        data = mutate(rng, rng.choice(pool))
        start = time.perf_counter()
        problem = None
        if use_alarm:
            signal.alarm(10)
        try:
            run_case(data)
        except Hang:
            problem = "hang (alarm after 10 s)"
        except BaseException as exc:
            problem = f"{type(exc).__name__}: {exc}"
        finally:
            if use_alarm:
                signal.alarm(0)
        took = time.perf_counter() - start
        slowest = max(slowest, took)
        if problem is None and took > limit:
            problem = f"took {took:.2f} s"
        if problem is not None:
            failures.append(f"case {i}: {problem}")
            if keep is not None:
                keep.mkdir(parents=True, exist_ok=True)
                (keep / f"case{i}.so").write_bytes(data)
    return cases, failures, slowest


def test_fuzz_slice():
    cases, failures, slowest = fuzz(400, seed=1234, real=False, limit=2.0, keep=None)
    assert not failures, failures[:5]
    assert slowest < 2.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=12_000)
    parser.add_argument("--seed", type=int, default=20260930)
    parser.add_argument("--real", action="store_true", help="also seed with files from the real torch wheel")
    parser.add_argument("--limit", type=float, default=1.0, help="seconds one case may take")
    parser.add_argument("--keep", type=Path, default=Path(tempfile.gettempdir()) / "elf-fuzz-failures")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    cases, failures, slowest = fuzz(args.cases, args.seed, args.real, args.limit, args.keep)
    total = time.perf_counter() - start
    print(f"{cases} cases in {total:.1f} s, slowest {slowest * 1000:.1f} ms, {len(failures)} failures")
    for line in failures[:20]:
        print("  " + line)
    if failures:
        print(f"failing inputs kept in {args.keep}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
