"""Fuzz job for the Mach-O reader: mutated Mach-O headers must never crash it or make it hang.

pytest runs a small deterministic slice (400 cases). The full job is run by hand:

    python -m tests.binaries.test_macho_fuzz                        # 12,000 cases from generated thin/fat images
    python -m tests.binaries.test_macho_fuzz --cases 50000 --real   # also real dylibs of the torch and other
                                                                     # macOS wheels (tests/realdata.py)

A case mutates a seed (random bytes in the Mach-O/fat headers and the load commands, the export trie or the
symbol table; 4- and 8-byte fields set to 0, all ones, the file size or random values; truncation) and runs
``parse_bytes``, then ``exports_from_bytes``, ``exported_from_bytes`` and ``undefined_from_bytes`` on every slice
that parsed. It fails
when anything raises, returns something other than MachOFile/frozenset/tuple/Unreadable, or takes longer than
``--limit`` seconds (default 1 s). Exit status 0 when every case passed.
"""

from __future__ import annotations

import argparse
import random
import signal
import sys
import time

from conda_torchcheck.binaries.macho import (
    MachOFile,
    Unreadable,
    exported_from_bytes,
    exports_from_bytes,
    parse_bytes,
    undefined_from_bytes,
)
from tests.binaries import machogen as gen


class Hang(Exception):
    pass


def _alarm(_signum, _frame):
    raise Hang()


def generated_seeds() -> list[bytes]:
    lib = gen.image(
        "arm64",
        install_name="@rpath/libc10.dylib",
        dylibs=["@rpath/libomp.dylib", ("/usr/lib/libobjc.A.dylib", "weak"), "/usr/lib/libSystem.B.dylib"],
        rpaths=["@loader_path", "/Users/runner/work/_temp/lib"],
        exports=["_a", "_omp_get_num_threads", "___kmpc_fork_call"],
        undefined=[("_malloc", 3, False), ("_objc_msgSend", 2, True)],
    )
    old = gen.image("x86_64", "execute", dylibs=["@rpath/libtorch.dylib"], version_min=True, minos="10.9", sdk="10.15")
    return [lib, old, gen.fat([old, lib])]


def seeds(real: bool) -> list[bytes]:
    out = generated_seeds()
    if real:
        from tests.realdata import extract

        root = extract("torch-2.5.1-macos-arm64", ("torch/lib/*", "torch/_C*.so", "torch/bin/torch_shm_manager"))
        for rel in (
            "_C.cpython-311-darwin.so",
            "lib/libomp.dylib",
            "lib/libtorch_global_deps.dylib",
            "lib/libshm.dylib",
        ):
            out.append((root / "torch" / rel).read_bytes())
        nj = extract("ninja-1.11.1.1-macos-universal2", ("ninja/data/bin/ninja",))
        out.append((nj / "ninja" / "data" / "bin" / "ninja").read_bytes())
    return out


def _regions(data: bytes) -> list[tuple[int, int]]:
    regions = [(0, min(96, len(data)))]
    info = parse_bytes(data)
    if isinstance(info, MachOFile):
        for sl in info.slices:
            regions.append((sl.offset, min(4096, sl.size)))
            if sl.exports_trie:
                regions.append((sl.offset + sl.exports_trie[0], min(256, sl.exports_trie[1] or 1)))
            if sl.symtab:
                regions.append((sl.offset + sl.symtab[0], 16 * 16))
                regions.append((sl.offset + sl.symtab[2], 128))
    return [(o, max(1, min(n, len(data) - o))) for o, n in regions if 0 <= o < len(data)]


def mutate(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    if rng.random() < 0.12:
        return bytes(buf[: rng.randrange(0, len(buf))])
    regions = _regions(data)
    for _ in range(rng.randint(1, 6)):
        offset, length = rng.choice(regions)
        at = offset + rng.randrange(length)
        choice = rng.random()
        if choice < 0.45:
            buf[at] = rng.randrange(256)
        else:
            width = 8 if choice < 0.6 else 4
            if at + width > len(buf):
                continue
            value = rng.choice([0, (1 << (8 * width)) - 1, len(buf), len(buf) - 1, rng.getrandbits(8 * width)])
            order = rng.choice(["little", "big"])  # fat headers are big-endian
            buf[at : at + width] = value.to_bytes(width, order)
    return bytes(buf)


def run_case(data: bytes) -> None:
    info = parse_bytes(data, "fuzz.dylib")
    if isinstance(info, Unreadable):
        return
    assert isinstance(info, MachOFile), type(info)
    for sl in info.slices:
        exports = exports_from_bytes(sl, data)
        assert isinstance(exports, (frozenset, Unreadable)), type(exports)
        found = exported_from_bytes(sl, data, ["_a", "___kmpc_fork_call", "_omp_get_num_threads", "__Z"])
        assert isinstance(found, (frozenset, Unreadable)), type(found)
        undefined = undefined_from_bytes(sl, data)
        assert isinstance(undefined, (tuple, Unreadable)), type(undefined)


def fuzz(cases: int, seed: int, real: bool, limit: float) -> tuple[int, list[str], float]:
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
        try:
            if use_alarm:
                signal.alarm(10)
            run_case(data)
        except Hang:
            failures.append(f"case {i}: hang")
        except Exception as exc:
            failures.append(f"case {i}: {type(exc).__name__}: {exc}")
        finally:
            if use_alarm:
                signal.alarm(0)
        took = time.perf_counter() - start
        slowest = max(slowest, took)
        if took > limit:
            failures.append(f"case {i}: took {took:.2f}s")
    return cases, failures, slowest


def test_fuzz_small_slice():
    _n, failures, _slowest = fuzz(400, 15, False, 1.0)
    assert not failures, failures[:5]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=12000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--real", action="store_true")
    parser.add_argument("--limit", type=float, default=1.0)
    args = parser.parse_args(argv)
    n, failures, slowest = fuzz(args.cases, args.seed, args.real, args.limit)
    print(f"{n} cases, {len(failures)} failures, slowest {slowest * 1000:.1f} ms")
    for line in failures[:20]:
        print(line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
