"""Symbol lookups through the hash tables (binaries/elf.py ``Symbols.defined_among``): the same answers as the
whole-table reading they replace, on the real torch wheel, hand-made SysV-hash files and crafted chains."""

from __future__ import annotations

import struct
import time
from pathlib import Path

import pytest

from conda_torchcheck.binaries.elf import (
    ElfFile,
    Symbols,
    defined_names_exact,
    gnu_hash,
    parse_bytes,
    read_elf,
    read_symbols,
    symbols_from_bytes,
)
from tests.binaries.elfgen import make_elf


def reference_gnu_hash(name: bytes) -> int:
    """The DT_GNU_HASH function as binutils and glibc write it."""
    h = 5381
    for c in name:
        h = (h * 33 + c) & 0xFFFFFFFF
    return h


def asked(names) -> dict[int, list[tuple[bytes, str | None, int]]]:
    wanted: dict[int, list[tuple[bytes, str | None, int]]] = {}
    for name, version in names:
        h = gnu_hash(name)
        wanted.setdefault(h | 1, []).append((name, version, h))
    return wanted


@pytest.mark.parametrize(
    "name", [b"", b"a", b"printf", b"_ZN3c1019UndefinedTensorImpl10_singletonE", bytes(range(1, 256)) * 7]
)
def test_gnu_hash_is_the_linkers(name):
    assert gnu_hash(name) == reference_gnu_hash(name)


@pytest.mark.parametrize("bits", [32, 64])
@pytest.mark.parametrize("little", [True, False])
def test_system_v_hash_lookup_on_handmade_files(bits, little):
    data = make_elf(bits=bits, little=little, defines=("alpha", "beta"), undefined=("gamma",))
    info = parse_bytes(data)
    assert isinstance(info, ElfFile) and info.tables.gnu_hash is None and info.tables.sysv_hash is not None
    syms = symbols_from_bytes(info, data)
    assert isinstance(syms, Symbols)
    found = {e[0] for e in syms.defined_among(asked([(b"alpha", None), (b"beta", "V1"), (b"gamma", None)]))}
    assert found == {b"alpha", b"beta"}  # an unversioned file's symbol satisfies a versioned reference


@pytest.fixture(scope="module")
def torch_linux_lib():
    from tests.realdata import extract

    return extract("torch-2.13.0-linux-cpu", ("torch/lib/*", "torch/_C*.so")) / "torch" / "lib"


@pytest.mark.realdata
def test_lookups_equal_the_whole_table_on_the_real_wheel(torch_linux_lib):
    """Every reference any torch library makes, asked of every torch library: the hash lookup finds exactly
    the exported names (the whole-table answer), with the version each reference asks for."""
    libs = {p.name: read_elf(p) for p in sorted(torch_linux_lib.glob("*.so*"))}
    symbols = {name: read_symbols(info) for name, info in libs.items()}
    refs = {(r[0], r[1]) for s in symbols.values() for r in s.refs}
    wanted = asked(refs)
    for name, syms in symbols.items():
        assert syms._source is not None and syms._source.lookup() is not None, name  # the GNU table is used
        exact = defined_names_exact(libs[name])
        found = {(e[0], e[1]) for e in syms.defined_among(wanted)}
        assert {n for n, _v in found} <= exact, name
        assert {(n, v) for n, v in refs if n in exact} == found, name
        assert {e[0] for e in syms.defined_among(asked((n, None) for n in exact))} == exact, name


def crafted_endless_chain(path: Path, size: int) -> Path:
    """An ELF64 shared object whose GNU hash chain has no end bit: after one defined symbol, the chain is the
    file's zero-filled (sparse) tail, and there are no section headers to count the symbols by."""
    strtab = b"\0\0foo\0"  # foo at an even offset: the chain runs on through the symbol table
    str_off, dyn_off, hash_off, sym_off = 0x100, 0x200, 0x400, 0x420  # the chain last: zeros follow
    symtab = bytes(24) + struct.pack("<IBBHQQ", 2, 0x12, 0, 7, 0x1000, 0)  # foo: GLOBAL FUNC, defined
    h = reference_gnu_hash(b"foo")
    gnu = struct.pack("<IIII", 1, 1, 1, 6) + struct.pack("<Q", (1 << 64) - 1) + struct.pack("<I", 1)
    gnu += struct.pack("<I", h & ~1)  # no end bit; the zeros after it do not have one either
    dyn = b"".join(struct.pack("<qQ", t, v) for t, v in [(5, str_off), (10, len(strtab)), (6, sym_off),
                                                          (11, 24), (0x6FFFFEF5, hash_off), (0, 0)])  # fmt: skip
    header = b"\x7fELF\x02\x01\x01" + bytes(9)
    header += struct.pack("<HHIQQQIHHHHHH", 3, 0x3E, 1, 0, 64, 0, 0, 64, 56, 2, 64, 0, 0)
    phdrs = struct.pack("<IIQQQQQQ", 1, 5, 0, 0, 0, size, size, 0x1000)
    phdrs += struct.pack("<IIQQQQQQ", 2, 6, dyn_off, dyn_off, dyn_off, len(dyn), len(dyn), 8)
    with open(path, "wb") as fh:
        fh.write(header + phdrs)
        for offset, blob in ((dyn_off, dyn), (sym_off, symtab), (str_off, strtab), (hash_off, gnu)):
            fh.seek(offset)
            fh.write(blob)
        fh.truncate(size)
    return path


def test_a_gnu_hash_chain_without_an_end_bit_is_bounded(tmp_path):
    path = crafted_endless_chain(tmp_path / "libendless.so", 64 << 20)
    start = time.monotonic()
    info = read_elf(path)
    assert isinstance(info, ElfFile)
    # the chain runs off the end of the file: no symbol count, so no symbol-level checks (and no hang)
    assert info.tables.symtab is None
    assert time.monotonic() - start < 5


def test_a_long_chain_is_searched_not_walked(tmp_path):
    """A chain that ends only at the file's last word: the symbol count is the file's capacity, and a lookup
    that lands in it searches the chain at C speed."""
    path = crafted_endless_chain(tmp_path / "liblong.so", 64 << 20)
    with open(path, "r+b") as fh:
        fh.seek((64 << 20) - 4)
        fh.write(struct.pack("<I", 1))
    start = time.monotonic()
    info = read_elf(path)
    assert isinstance(info, ElfFile) and info.tables.nsyms > 1_000_000
    syms = read_symbols(info)
    assert isinstance(syms, Symbols)
    assert [e[0] for e in syms.defined_among(asked([(b"foo", None), (b"bar", None)]))] == [b"foo"]
    assert time.monotonic() - start < 5


@pytest.mark.realdata
def test_check_symbols_equals_the_whole_table_algorithm(tmp_path):
    """The real torch import's undefined-symbol misses, as the lookups find them and as the former
    whole-table pass (``present_names`` of every scope object) found them."""
    from conda_torchcheck.inventory.model import HostFacts
    from conda_torchcheck.loader import linux
    from conda_torchcheck.loader.contract import FileContext
    from tests.envbuilder import EnvBuilder
    from tests.loader.linux_layouts import install_real_torch

    pkg = install_real_torch(EnvBuilder(tmp_path / "venv", layout="venv"))
    module = next(pkg.glob("_C.cpython-311-*.so"))
    ctx = FileContext(HostFacts(live=True, environ={}))
    new = linux.check_symbols(linux.load_file(ctx, module))
    load = linux.load_file(ctx, module)
    old = []
    for step in load.ldso.steps:
        if step.root is None or step.failed:
            continue
        wanted: dict[bytes, list] = {}
        for obj in step.new_objects:
            syms = linux.symbols_of(obj)
            if isinstance(syms, Symbols):
                for name in syms.required_names():
                    wanted.setdefault(name, []).append(obj)
        remaining = set(wanted)  # the module is the executable here: its own table is read, Python's API too
        for obj in step.searchlist:
            syms = linux.symbols_of(obj)
            if isinstance(syms, Symbols):
                remaining -= syms.present_names()
        old += [(n, o.path) for n in sorted(remaining) for o in wanted[n]]
    assert old, "loaded without Python, the module's C API references are missing either way"
    assert sorted((m.name.encode(), m.required_by) for m in new) == sorted(old)


def test_versions_are_checked_on_the_symbol_found():
    """gcc-built libv.so.1 (tests/fixtures/elf): v_new@@V_2.0 and v_old@@V_1.0; libprov.so.1 has no versions."""
    fix = Path(__file__).resolve().parents[1] / "fixtures" / "elf" / "prebuilt"
    libv = read_symbols(read_elf(fix / "version" / "new" / "libv.so.1"))
    asked_of_libv = [(b"v_new", "V_2.0"), (b"v_new", "V_1.0"), (b"v_new", None), (b"v_old", "V_1.0"), (b"v_old", "V_9")]
    found = {(e[0], e[1]) for e in libv.defined_among(asked(asked_of_libv))}
    assert found == {(b"v_new", "V_2.0"), (b"v_new", None), (b"v_old", "V_1.0")}
    # the base version (the soname) is not available for matching a versioned reference (glibc dl-version.c)
    assert not libv.defined_among(asked([(b"v_new", "libv.so.1")]))
    # an unversioned library's definition satisfies a versioned reference (ld.so accepts it)
    prov = read_symbols(read_elf(fix / "symbol" / "new" / "libprov.so.1"))
    assert [e[0] for e in prov.defined_among(asked([(b"prov_new", "V_1.0")]))] == [b"prov_new"]
