"""Fuzz job for the PE reader: mutated real PE headers must never crash it or make it hang.

Not part of the normal test run (pytest collects only test_*.py). Run it by hand or in a scheduled CI job:

    python -m tests.binaries.fuzz_pe                 # 12,000 cases, seeds from tests/fixtures/pe
    python -m tests.binaries.fuzz_pe --cases 50000 --seed 7 --real   # also small files from the real wheels

Each case writes one mutated file and calls ``read_pe(symbols=True)`` and ``read_exports`` with its lookups. A
case fails when either raises, returns something other than a PEInfo/Exports/Unreadable value, or takes longer
than ``--limit`` seconds (default 1 s; a hard alarm stops a real hang after 10 s). Failing inputs are kept in
``--keep`` for reproduction.
Exit status: 0 when every case passed.
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

from conda_torchcheck.binaries.pe import Exports, ImportedSymbol, PEInfo, Unreadable, read_exports, read_pe

FX = Path(__file__).resolve().parents[1] / "fixtures" / "pe"


class Hang(Exception):
    pass


def _alarm(_signum, _frame):
    raise Hang()


def seeds(real: bool) -> list[bytes]:
    files = sorted(FX.rglob("*.dll"))
    out = [p.read_bytes() for p in files]
    if real:
        from tests.loader import windows_layouts as wl

        rt = wl.runtime_dlls("msvc-runtime-14.44")
        for name in ("vcruntime140_1.dll", "vcruntime140_threads.dll", "msvcp140_atomic_wait.dll"):
            out.append(rt[name].read_bytes())
        out.append((wl.torch_root("2.3.0") / "torch" / "lib" / "shm.dll").read_bytes())
    return out


def _header_offsets(data: bytes) -> dict[str, int]:
    """Offsets of the fields worth attacking: e_lfanew, section count, optional header size, data directories."""
    out: dict[str, int] = {"e_lfanew": 0x3C}
    if len(data) < 0x40:
        return out
    (pe,) = struct.unpack_from("<I", data, 0x3C)
    if pe + 24 > len(data):
        return out
    out["nsections"] = pe + 6
    out["opt_size"] = pe + 20
    opt = pe + 24
    magic = struct.unpack_from("<H", data, opt)[0] if opt + 2 <= len(data) else 0
    dirs = opt + (112 if magic == 0x20B else 96)
    out["ndirs"] = dirs - 4
    for i in (0, 1, 2, 13):  # export, import, resource, delay import
        out[f"dir{i}_rva"] = dirs + 8 * i
        out[f"dir{i}_size"] = dirs + 8 * i + 4
    (opt_size,) = struct.unpack_from("<H", data, pe + 20)
    sections = opt + opt_size
    (count,) = struct.unpack_from("<H", data, pe + 6)
    for i in range(min(count, 8)):
        base = sections + 40 * i
        out[f"s{i}_vsize"] = base + 8
        out[f"s{i}_va"] = base + 12
        out[f"s{i}_rawsize"] = base + 16
        out[f"s{i}_rawptr"] = base + 20
    return out


INTERESTING = (0, 1, 2, 0x7F, 0x80, 0xFF, 0x100, 0x1000, 0x7FFF, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF)


def mutate(data: bytes, rng: random.Random) -> bytes:
    buf = bytearray(data)
    strategy = rng.randrange(6)
    fields = _header_offsets(data)
    if strategy == 0:  # flip bytes in the headers
        for _ in range(rng.randint(1, 16)):
            pos = rng.randrange(0, min(len(buf), 1024))
            buf[pos] = rng.randrange(256)
    elif strategy == 1 and fields:  # an interesting value in a header field
        for _ in range(rng.randint(1, 3)):
            name = rng.choice(sorted(fields))
            pos = fields[name]
            if pos + 4 <= len(buf):
                width = 2 if name in ("nsections", "opt_size") else 4
                value = rng.choice(INTERESTING) & (0xFFFF if width == 2 else 0xFFFFFFFF)
                struct.pack_into("<H" if width == 2 else "<I", buf, pos, value)
    elif strategy == 2:  # truncate
        return bytes(buf[: rng.randrange(0, len(buf))])
    elif strategy == 3:  # scribble over a random region (import / export tables live past the headers)
        start = rng.randrange(0, len(buf))
        for pos in range(start, min(len(buf), start + rng.randint(1, 64))):
            buf[pos] = rng.randrange(256)
    elif strategy == 4:  # point a data directory into itself / past the end
        for name in ("dir1_rva", "dir13_rva", "dir0_rva"):
            if name in fields and fields[name] + 4 <= len(buf):
                struct.pack_into("<I", buf, fields[name], rng.choice((0x40, len(buf) - 4, len(buf) * 4, 0x1000)))
    else:  # duplicate a chunk (loops in tables)
        if len(buf) > 64:
            a = rng.randrange(0, len(buf) - 32)
            b = rng.randrange(0, len(buf) - 32)
            buf[b : b + 32] = buf[a : a + 32]
    return bytes(buf)


def run(cases: int, seed: int, limit: float, real: bool, keep: Path | None) -> int:
    rng = random.Random(seed)
    corpus = seeds(real)
    signal.signal(signal.SIGALRM, _alarm)
    failures = 0
    slowest = 0.0
    unreadable = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "case.dll"
        start_all = time.perf_counter()
        for i in range(cases):
            data = mutate(rng.choice(corpus), rng)
            path.write_bytes(data)
            t0 = time.perf_counter()
            problem = None
            signal.alarm(10)
            try:
                info = read_pe(path, symbols=True)
                exports = read_exports(path)
                if isinstance(exports, Exports):  # the lookups read the table lazily: run them on this file
                    for symbol in (ImportedSymbol("b_func"), ImportedSymbol("zz", hint=3), ImportedSymbol(None, 7)):
                        exports.has(symbol)
                        exports.forwarder(symbol)
                    _ = exports.names, exports.forwarders, exports.ordinals, exports.has_forwarders
                if not isinstance(info, (PEInfo, Unreadable)) or not isinstance(exports, (Exports, Unreadable)):
                    problem = f"unexpected result types {type(info).__name__}, {type(exports).__name__}"
                unreadable += isinstance(info, Unreadable)
            except Hang:
                problem = "hang (alarm after 10 s)"
            except BaseException as exc:  # any escape is the bug this job looks for
                problem = f"{type(exc).__name__}: {exc}"
            finally:
                signal.alarm(0)
            elapsed = time.perf_counter() - t0
            slowest = max(slowest, elapsed)
            if problem is None and elapsed > limit:
                problem = f"took {elapsed:.2f} s"
            if problem is not None:
                failures += 1
                print(f"case {i}: {problem}", file=sys.stderr)
                if keep is not None:
                    keep.mkdir(parents=True, exist_ok=True)
                    (keep / f"case-{seed}-{i}.dll").write_bytes(data)
        total = time.perf_counter() - start_all
    print(
        f"{cases} cases from {len(corpus)} seeds in {total:.1f} s: {failures} failures, "
        f"{unreadable} reported unreadable, slowest case {slowest * 1000:.1f} ms"
    )
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=12_000)
    parser.add_argument("--seed", type=int, default=20260101)
    parser.add_argument("--limit", type=float, default=1.0, help="seconds allowed per case")
    parser.add_argument("--real", action="store_true", help="also seed with small real DLLs (downloads wheels)")
    parser.add_argument("--keep", type=Path, default=None, help="folder for failing inputs")
    args = parser.parse_args(argv)
    return run(args.cases, args.seed, args.limit, args.real, args.keep)


if __name__ == "__main__":
    raise SystemExit(main())
