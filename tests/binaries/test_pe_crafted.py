"""Crafted PE files whose tables cost more than their size if read naively (issue 26 items 8 and 10): the
reader's work stays bounded by the file, and the answer is a bounded value or Unreadable within seconds."""

from __future__ import annotations

import struct
import time
from pathlib import Path

from conda_torchcheck.binaries.pe import Exports, ImportedSymbol, PEInfo, Unreadable, read_exports, read_pe

SECTION_RVA, SECTION_RAW = 0x1000, 0x200


def make_pe(path: Path, body: bytes, *, imports: tuple[int, int] = (0, 0), exports: tuple[int, int] = (0, 0)) -> Path:
    """A PE32+ DLL with one section holding ``body`` at RVA 0x1000; ``imports``/``exports``: (RVA, size) of the
    import and export directories inside it."""
    opt = struct.pack("<HBBIIIII", 0x20B, 14, 0, 0, len(body), 0, 0, SECTION_RVA)
    opt += struct.pack("<QII", 0x180000000, 0x1000, 0x200)
    opt += struct.pack("<HHHHHHI", 6, 0, 0, 0, 6, 0, 0)
    opt += struct.pack("<IIIHH", SECTION_RVA + len(body) + 0x1000, SECTION_RAW, 0, 2, 0x160)
    opt += struct.pack("<QQQQII", 0x100000, 0x1000, 0x100000, 0x1000, 0, 16)
    dirs = [exports, imports] + [(0, 0)] * 14
    opt += b"".join(struct.pack("<II", *d) for d in dirs)
    coff = struct.pack("<HHIIIHH", 0x8664, 1, 0, 0, 0, len(opt), 0x2022)
    section = struct.pack("<8sIIIIIIHHI", b".data", len(body), SECTION_RVA, len(body), SECTION_RAW, 0, 0, 0, 0,
                          0xC0000040)  # fmt: skip
    dos = b"MZ" + bytes(0x3A) + struct.pack("<I", 0x40)
    headers = dos + b"PE\0\0" + coff + opt + section
    path.write_bytes(headers.ljust(SECTION_RAW, b"\0") + body)
    return path


def test_descriptors_sharing_one_huge_thunk_array_read_it_once(tmp_path):
    """64 descriptors, every one pointing at the same 999,990-entry thunk array (an 8 MB DLL)."""
    descriptors, entries = 64, 999_990
    name_at = 0x100  # offsets inside the section
    hint_name_at = 0x120
    thunks_at = 0x1000
    body = bytearray(thunks_at + 8 * (entries + 1))
    body[name_at : name_at + 9] = b"libx.dll\0"
    body[hint_name_at : hint_name_at + 8] = b"\0\0func\0\0"
    thunk = struct.pack("<Q", SECTION_RVA + hint_name_at)
    body[thunks_at : thunks_at + 8 * entries] = thunk * entries
    table = b"".join(
        struct.pack("<IIIII", SECTION_RVA + thunks_at, 0, 0, SECTION_RVA + name_at, SECTION_RVA + thunks_at)
        for _ in range(descriptors)
    )
    body[0x200 : 0x200 + len(table)] = table  # then a null descriptor (zeros)
    path = make_pe(tmp_path / "shared.dll", bytes(body), imports=(SECTION_RVA + 0x200, len(table) + 20))
    start = time.monotonic()
    info = read_pe(path, symbols=True)
    assert isinstance(info, PEInfo)
    assert len(info.imports) == descriptors
    assert all(i.symbols is info.imports[0].symbols for i in info.imports)  # one array, read once
    assert len(info.imports[0].symbols) == entries
    assert time.monotonic() - start < 10


def test_descriptors_overlapping_one_array_run_out_of_the_files_room(tmp_path):
    """Descriptors pointing at successive entries of one array: each would read nearly all of it."""
    descriptors, entries = 4_000, 200_000
    thunks_at = 0x20000
    body = bytearray(thunks_at + 8 * (entries + 1))
    body[0x100:0x109] = b"libx.dll\0"
    body[0x120:0x128] = b"\0\0func\0\0"
    body[thunks_at : thunks_at + 8 * entries] = struct.pack("<Q", SECTION_RVA + 0x120) * entries
    table = b"".join(
        struct.pack("<IIIII", SECTION_RVA + thunks_at + 8 * i, 0, 0, SECTION_RVA + 0x100, 0) for i in range(descriptors)
    )
    body[0x200 : 0x200 + len(table)] = table
    path = make_pe(tmp_path / "overlap.dll", bytes(body), imports=(SECTION_RVA + 0x200, len(table) + 20))
    start = time.monotonic()
    info = read_pe(path, symbols=True)
    assert isinstance(info, Unreadable) and "overlap" in info.reason
    assert time.monotonic() - start < 10
    assert isinstance(read_pe(path), PEInfo)  # the DLL names alone still read


def test_millions_of_export_names_at_one_rva_are_looked_up_not_decoded(tmp_path):
    """4,000,000 name pointers, all to one name (the functions table overlapping the names table)."""
    names = 4_000_000
    table_at, name_at = 0x1000, 0x100
    body = bytearray(table_at + 6 * names)
    body[name_at : name_at + 5] = b"func\0"
    body[0x80:0x89] = b"libx.dll\0"
    body[table_at : table_at + 4 * names] = struct.pack("<I", SECTION_RVA + name_at) * names
    directory = struct.pack("<IIHHIIIIIII", 0, 0, 0, 0, SECTION_RVA + 0x80, 1, names, names, SECTION_RVA + table_at,
                            SECTION_RVA + table_at, SECTION_RVA + table_at + 4 * names)  # fmt: skip
    body[0x200 : 0x200 + len(directory)] = directory
    path = make_pe(tmp_path / "exports.dll", bytes(body), exports=(SECTION_RVA + 0x200, len(directory)))
    start = time.monotonic()
    exports = read_exports(path)
    assert isinstance(exports, Exports) and exports.dll_name == "libx.dll"
    assert exports.has(ImportedSymbol("func")) and exports.has(ImportedSymbol("func", hint=12345))
    assert not exports.has(ImportedSymbol("other"))
    assert exports.forwarder(ImportedSymbol("func")) is None
    assert time.monotonic() - start < 5
