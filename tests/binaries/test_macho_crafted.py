"""Crafted Mach-O files whose tables cost more than their size if read naively (issue 26 items 8 and 10): an
export trie of long edge labels, and an LC_SYMTAB claiming 20,000,000 undefined symbols over a sparse tail."""

from __future__ import annotations

import struct
import time

from conda_torchcheck.binaries import macho
from conda_torchcheck.binaries.macho import (
    MachOFile,
    Unreadable,
    exported_from_bytes,
    exports_from_bytes,
    parse_bytes,
    read_macho,
    read_undefined,
)
from tests.binaries.machogen import image


def _uleb4(value: int) -> bytes:
    """A 4-byte (padded) ULEB128, so that node offsets can be computed before the nodes are written."""
    return bytes([0x80 | (value & 0x7F), 0x80 | ((value >> 7) & 0x7F), 0x80 | ((value >> 14) & 0x7F), value >> 21])


def long_label_trie(nodes: int, label: int) -> bytes:
    """A chain of ``nodes`` trie nodes, each terminal, each reached through an edge of ``label`` bytes: listing
    it naively builds names of 1, 2, ... ``nodes`` labels (nodes^2 * label / 2 bytes)."""
    node_size = 3 + 1 + label + 1 + 4  # terminal (size 2: flags, address), one child, the edge
    out = bytearray()
    for k in range(nodes):
        out += bytes([2, 0, 0])
        if k == nodes - 1:
            out += b"\0"
            break
        out += b"\1" + bytes([0x61 + k % 26]) * label + b"\0" + _uleb4((k + 1) * node_size)
    return bytes(out)


def slice_with_trie(trie: bytes):
    data = image(exports=("_x",))
    sl = parse_bytes(data).slices[0]
    return data + trie, sl.replace(exports_trie=(len(data), len(trie)), size=len(data) + len(trie))


def test_an_export_trie_of_long_edge_labels_is_unreadable_quickly():
    trie = long_label_trie(2_000, 1_000)  # 2 MB: listing it naively would build 2 GB of names
    data, sl = slice_with_trie(trie)
    start = time.monotonic()
    result = exports_from_bytes(sl, data)
    assert isinstance(result, Unreadable) and "crafted" in result.reason
    assert time.monotonic() - start < 2


def test_lookups_in_a_trie_of_long_edge_labels_are_bounded():
    trie = long_label_trie(2_000, 1_000)
    data, sl = slice_with_trie(trie)
    deep = "".join(chr(0x61 + k % 26) * 1_000 for k in range(1_999))
    start = time.monotonic()
    found = exported_from_bytes(sl, data, [deep, deep[:5_000], "_x"])
    assert found == frozenset({deep, deep[:5_000]})
    assert time.monotonic() - start < 5


def test_a_small_long_label_trie_still_lists():
    data, sl = slice_with_trie(long_label_trie(20, 100))
    names = exports_from_bytes(sl, data)
    assert isinstance(names, frozenset) and len(names) == 20


def test_twenty_million_undefined_symbols_over_a_sparse_tail(tmp_path):
    data = bytearray(image(dylibs=("@rpath/libx.dylib",), undefined=[("_x", 1, False)]))
    sl = parse_bytes(bytes(data)).slices[0]
    symoff, _nsyms, stroff, strsize = sl.symtab
    claimed = 20_000_000
    at = data.find(struct.pack("<IIIIII", macho.LC_SYMTAB, 24, symoff, 1, stroff, strsize))
    data[at : at + 24] = struct.pack("<IIIIII", macho.LC_SYMTAB, 24, symoff, claimed, stroff, strsize)
    dysym = data.find(struct.pack("<II", macho.LC_DYSYMTAB, 80))
    data[dysym + 8 + 20 : dysym + 8 + 24] = struct.pack("<I", claimed)  # nundefsym
    path = tmp_path / "libsparse.dylib"
    with open(path, "wb") as fh:
        fh.write(data)
        fh.truncate(symoff + 16 * claimed + 4096)  # a hole: the claimed entries are zeros
    start = time.monotonic()
    info = read_macho(path)
    assert isinstance(info, MachOFile)
    undefined = read_undefined(path, info.slices[0])
    assert undefined == (("_x", 1, False),)
    # one C-speed scan of the 320 MB the table claims (0.6 s idle, 3 s on a loaded 2-core machine), where a
    # Python step per entry took 4 s idle
    assert time.monotonic() - start < 10
