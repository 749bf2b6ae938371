"""Build small, valid Mach-O images (load commands only) for tests: thin or fat, with the dylib, rpath and
version commands the dyld model reads, plus an optional export trie and undefined symbols.

The bytes follow ``<mach-o/loader.h>``; ``tests/binaries/test_macho.py`` checks that llvm-objdump reads them
the same way as the project's reader.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from conda_torchcheck.binaries import macho as M

CPU = {"x86_64": (0x01000007, 3), "arm64": (0x0100000C, 0), "arm64e": (0x0100000C, 0x80000002), "i386": (7, 3)}
FILETYPE = {"execute": M.MH_EXECUTE, "dylib": M.MH_DYLIB, "bundle": M.MH_BUNDLE}
KIND_CMD = {v: k for k, v in M.DYLIB_KINDS.items()}


def pack_version(text: str) -> int:
    parts = [int(p) for p in text.split(".")] + [0, 0]
    return (parts[0] << 16) | (parts[1] << 8) | parts[2]


def _lc_str(cmd: int, fixed: bytes, text: str) -> bytes:
    raw = text.encode() + b"\0"
    header = 8 + len(fixed)
    size = (header + len(raw) + 7) & ~7
    return struct.pack("<II", cmd, size) + fixed + raw + b"\0" * (size - header - len(raw))


def _trie(names: Sequence[str]) -> bytes:
    """A flat export trie: the root has one edge per name, each to a terminal node (address 0x1000)."""
    nodes = []
    for _ in names:
        nodes.append(bytes([3, 0]) + b"\x80\x20" + b"\x00")  # terminal size 3: flags 0, address 0x1000; no children
    root_edges = b""
    # offsets are 1-byte ULEBs for small tries: compute the root size first
    root_len = 1 + 1 + sum(len(n.encode()) + 1 + 1 for n in names)
    offset = root_len
    offsets = []
    for node in nodes:
        offsets.append(offset)
        offset += len(node)
    if offset >= 0x80:
        raise ValueError("trie too large for this generator")
    for name, off in zip(names, offsets):
        root_edges += name.encode() + b"\0" + bytes([off])
    root = b"\x00" + bytes([len(names)]) + root_edges
    return root + b"".join(nodes)


def image(
    arch: str = "arm64",
    filetype: str = "dylib",
    *,
    install_name: str | None = None,
    dylibs: Sequence[str | tuple[str, str]] = (),
    rpaths: Sequence[str] = (),
    minos: str | None = "11.0",
    sdk: str = "13.3",
    version_min: bool = False,
    exports: Sequence[str] = (),
    undefined: Sequence[tuple[str, int, bool]] = (),
) -> bytes:
    """One thin image. ``dylibs`` entries are install names or (name, kind) with kind load/weak/reexport."""
    cputype, cpusubtype = CPU[arch]
    cmds: list[bytes] = []
    if install_name is not None:
        cmds.append(_lc_str(M.LC_ID_DYLIB, struct.pack("<IIII", 24, 2, 0x10000, 0x10000), install_name))
    if minos is not None:
        if version_min:
            cmds.append(struct.pack("<IIII", M.LC_VERSION_MIN_MACOSX, 16, pack_version(minos), pack_version(sdk)))
        else:
            cmds.append(struct.pack("<IIIIII", M.LC_BUILD_VERSION, 24, 1, pack_version(minos), pack_version(sdk), 0))
    for entry in dylibs:
        name, kind = (entry, "load") if isinstance(entry, str) else entry
        cmds.append(_lc_str(KIND_CMD[kind], struct.pack("<IIII", 24, 2, 0x10000, 0x10000), name))
    for path in rpaths:
        cmds.append(_lc_str(M.LC_RPATH, struct.pack("<I", 12), path))
    # linkedit-ish payload after the commands: export trie, symbols, strings
    trie = _trie(exports) if exports else b""
    strings = b"\0"
    syms = b""
    for name, ordinal, weak in undefined:
        desc = (ordinal << 8) | (M.N_WEAK_REF if weak else 0)
        syms += struct.pack("<IBBHQ", len(strings), M.N_UNDF | M.N_EXT, 0, desc, 0)
        strings += name.encode() + b"\0"
    header = 32
    sizeofcmds = sum(len(c) for c in cmds) + (16 if trie else 0) + ((24 + 80) if undefined else 0)
    payload_at = header + sizeofcmds
    payload = b""
    if trie:
        cmds.append(struct.pack("<IIII", M.LC_DYLD_EXPORTS_TRIE, 16, payload_at, len(trie)))
        payload += trie
    if undefined:
        symoff = payload_at + len(payload)
        stroff = symoff + len(syms)
        cmds.append(struct.pack("<IIIIII", M.LC_SYMTAB, 24, symoff, len(undefined), stroff, len(strings)))
        dysym = [0] * 18
        dysym[4], dysym[5] = 0, len(undefined)  # iundefsym, nundefsym
        cmds.append(struct.pack("<II", M.LC_DYSYMTAB, 80) + struct.pack("<18I", *dysym))
        payload += syms + strings
    ncmds = len(cmds)
    head = struct.pack("<IIIIIIII", M.MH_MAGIC_64, cputype, cpusubtype, FILETYPE[filetype], ncmds, sizeofcmds, 0x85, 0)
    data = head + b"".join(cmds) + payload
    return data + b"\0" * (-len(data) % 16)


def fat(slices: Sequence[bytes], align: int = 12) -> bytes:
    """A universal file of thin ``slices`` (FAT_MAGIC, big-endian headers, each slice 2**align aligned)."""
    step = 1 << align
    out = bytearray(struct.pack(">II", M.FAT_MAGIC, len(slices)))
    offsets = []
    at = step
    for data in slices:
        offsets.append(at)
        at += len(data) + (-len(data)) % step
    for data, offset in zip(slices, offsets):
        cputype, cpusubtype = struct.unpack_from("<II", data, 4)
        out += struct.pack(">IIIII", cputype, cpusubtype, offset, len(data), align)
    for data, offset in zip(slices, offsets):
        out += b"\0" * (offset - len(out))
        out += data
    return bytes(out)
