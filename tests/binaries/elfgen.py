"""A tiny ELF writer for tests: shared objects of any class and byte order with chosen dynamic entries.

Real 64-bit little-endian files come from tests/fixtures/elf (gcc-built); this covers what gcc on the test
machine cannot build (32-bit, big-endian, hand-broken tables). Addresses equal file offsets (one PT_LOAD).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

DT = {"NEEDED": 1, "STRTAB": 5, "STRSZ": 10, "SONAME": 14, "RPATH": 15, "RUNPATH": 29, "VERNEED": 0x6FFFFFFE,
      "VERNEEDNUM": 0x6FFFFFFF, "FLAGS_1": 0x6FFFFFFB, "VERDEF": 0x6FFFFFFC, "VERDEFNUM": 0x6FFFFFFD,
      "HASH": 4, "SYMTAB": 6, "SYMENT": 11}  # fmt: skip


def elf_hash(name: str) -> int:
    """The SysV ELF hash (vd_hash of a version definition)."""
    h = 0
    for c in name.encode():
        h = (h << 4) + c
        g = h & 0xF0000000
        if g:
            h ^= g >> 24
        h &= ~g & 0xFFFFFFFF
    return h


def make_elf(
    *,
    bits: int = 64,
    little: bool = True,
    machine: int = 0x3E,
    needed: Sequence[str] = (),
    soname: str | None = None,
    rpath: str | None = None,
    runpath: str | None = None,
    version_needs: Sequence[tuple[str, Sequence[str]]] = (),
    version_defs: Sequence[str] = (),
    defines: Sequence[str] = (),
    undefined: Sequence[str] = (),
    flags_1: int = 0,
) -> bytes:
    """``version_defs``: the versions the file defines (GLIBCXX_3.4 ...); the base entry is its SONAME.
    ``defines`` / ``undefined``: global function symbols it defines / needs (unversioned; DT_SYMTAB + DT_HASH)."""
    e = "<" if little else ">"
    ehsize = 64 if bits == 64 else 52
    phentsize = 56 if bits == 64 else 32
    phoff = ehsize
    strtab = bytearray(b"\0")

    def add(text: str) -> int:
        off = len(strtab)
        strtab.extend(text.encode() + b"\0")
        return off

    entries: list[tuple[int, int]] = []
    for name in needed:
        entries.append((DT["NEEDED"], add(name)))
    if soname:
        entries.append((DT["SONAME"], add(soname)))
    if rpath:
        entries.append((DT["RPATH"], add(rpath)))
    if runpath:
        entries.append((DT["RUNPATH"], add(runpath)))
    if flags_1:
        entries.append((DT["FLAGS_1"], flags_1))
    # version needs: Verneed(16) + n * Vernaux(16) per file
    verneed = bytearray()
    index = 2
    for i, (file, versions) in enumerate(version_needs):
        file_off = add(file)
        vn_next = 16 + 16 * len(versions) if i < len(version_needs) - 1 else 0
        verneed += struct.pack(e + "HHIII", 1, len(versions), file_off, 16, vn_next)
        for j, version in enumerate(versions):
            name_off = add(version)
            next_aux = 16 if j < len(versions) - 1 else 0
            verneed += struct.pack(e + "IHHII", 0, 0, index, name_off, next_aux)
            index += 1
    # version definitions: Verdef(20) + Verdaux(8) each, the first one the base (VER_FLG_BASE)
    verdef = bytearray()
    defs = [soname or "base", *version_defs] if version_defs else []
    for i, version in enumerate(defs):
        vd_next = 28 if i < len(defs) - 1 else 0
        verdef += struct.pack(e + "HHHHIII", 1, 1 if i == 0 else 0, i + 1, 1, elf_hash(version), 20, vd_next)
        verdef += struct.pack(e + "II", add(version), 0)
    # dynamic symbols: the null symbol, then the undefined and defined ones; a one-bucket SysV hash
    symbols = [(0, 0)] + [(add(n), 0) for n in undefined] + [(add(n), 1) for n in defines]
    symtab = bytearray()
    for name_off, defined in symbols:
        info = 0x12 if name_off else 0  # STB_GLOBAL, STT_FUNC
        if bits == 64:
            symtab += struct.pack(e + "IBBHQQ", name_off, info, 0, defined, 0x1000 if defined else 0, 0)
        else:
            symtab += struct.pack(e + "IIIBBH", name_off, 0x1000 if defined else 0, 0, info, 0, defined)
    nsyms = len(symbols)
    hashtab = struct.pack(e + "II", 1, nsyms) + struct.pack(e + "I", nsyms - 1)
    hashtab += struct.pack(e + f"{nsyms}I", *[0] + list(range(nsyms - 1)))
    strtab_off = phoff + 2 * phentsize
    verneed_off = strtab_off + len(strtab)
    verneed_off += (-verneed_off) % 8
    verdef_off = verneed_off + len(verneed)
    verdef_off += (-verdef_off) % 8
    verneed += bytes(verdef_off - verneed_off - len(verneed)) + verdef
    sym_off = verneed_off + len(verneed)
    sym_off += (-sym_off) % 8
    hash_off = sym_off + len(symtab) if undefined or defines else sym_off
    dyn_off = hash_off + (len(hashtab) if undefined or defines else 0)
    dyn_off += (-dyn_off) % 8
    entries = [(DT["STRTAB"], strtab_off), (DT["STRSZ"], len(strtab)), *entries]
    if version_needs:
        entries += [(DT["VERNEED"], verneed_off), (DT["VERNEEDNUM"], len(version_needs))]
    if defs:
        entries += [(DT["VERDEF"], verdef_off), (DT["VERDEFNUM"], len(defs))]
    if undefined or defines:
        entries += [(DT["SYMTAB"], sym_off), (DT["SYMENT"], 24 if bits == 64 else 16), (DT["HASH"], hash_off)]
    entries.append((0, 0))
    dyn = b"".join(struct.pack(e + ("qQ" if bits == 64 else "iI"), t, v) for t, v in entries)
    size = dyn_off + len(dyn)
    ident = b"\x7fELF" + bytes([2 if bits == 64 else 1, 1 if little else 2, 1, 0]) + bytes(8)
    if bits == 64:
        header = struct.pack(e + "HHIQQQIHHHHHH", 3, machine, 1, 0, phoff, 0, 0, ehsize, phentsize, 2, 64, 0, 0)
        load = struct.pack(e + "IIQQQQQQ", 1, 5, 0, 0, 0, size, size, 0x1000)
        dynamic = struct.pack(e + "IIQQQQQQ", 2, 6, dyn_off, dyn_off, dyn_off, len(dyn), len(dyn), 8)
    else:
        header = struct.pack(e + "HHIIIIIHHHHHH", 3, machine, 1, 0, phoff, 0, 0, ehsize, phentsize, 2, 40, 0, 0)
        load = struct.pack(e + "IIIIIIII", 1, 0, 0, 0, size, size, 5, 0x1000)
        dynamic = struct.pack(e + "IIIIIIII", 2, dyn_off, dyn_off, dyn_off, len(dyn), len(dyn), 6, 4)
    out = bytearray(size)
    out[0:16] = ident
    out[16 : 16 + len(header)] = header
    out[phoff : phoff + phentsize] = load
    out[phoff + phentsize : phoff + 2 * phentsize] = dynamic
    out[strtab_off : strtab_off + len(strtab)] = strtab
    out[verneed_off : verneed_off + len(verneed)] = verneed
    if undefined or defines:
        out[sym_off : sym_off + len(symtab)] = symtab
        out[hash_off : hash_off + len(hashtab)] = hashtab
    out[dyn_off : dyn_off + len(dyn)] = dyn
    return bytes(out)
