"""A small, direct Mach-O reader: the load commands dyld reads to load an image, nothing more.

What it reads (``<mach-o/loader.h>``, ``<mach-o/fat.h>``):

* thin files (``MH_MAGIC_64``/``MH_MAGIC``, little-endian as every macOS binary since PowerPC) and fat /
  universal2 files (``FAT_MAGIC``/``FAT_MAGIC_64``, big-endian headers), each slice's CPU type and subtype;
* per slice: file type, ``LC_ID_DYLIB``, ``LC_LOAD_DYLIB``, ``LC_LOAD_WEAK_DYLIB``, ``LC_REEXPORT_DYLIB``,
  ``LC_LAZY_LOAD_DYLIB``, ``LC_LOAD_UPWARD_DYLIB`` (in order: dyld's library ordinals follow it), ``LC_RPATH``
  (in order: dyld tries them in order), ``LC_BUILD_VERSION`` or ``LC_VERSION_MIN_MACOSX`` (platform, minimum
  OS, SDK), and where the export trie and the symbol tables are;
* on demand (:func:`read_exports`, :func:`read_undefined`): exported names from the export trie
  (``LC_DYLD_EXPORTS_TRIE`` or ``LC_DYLD_INFO[_ONLY]``) and undefined symbols from ``LC_SYMTAB`` /
  ``LC_DYSYMTAB`` with their library ordinal and weak flag.

Every offset is bounds-checked and every loop bounded, so a truncated or corrupt file becomes an
:class:`Unreadable` value (``format="Mach-O"``), never an exception or a hang (``tests/binaries/fuzz_macho.py``).
"""

from __future__ import annotations

import mmap
import os
import struct
from pathlib import Path

from conda_torchcheck.binaries.unreadable import Unreadable
from conda_torchcheck.inventory.fs import open_binary
from conda_torchcheck.records import Record

__all__ = [
    "Unreadable", "DylibRef", "MachOSlice", "MachOFile", "read_macho", "parse_bytes", "read_exports",
    "read_undefined", "read_exported", "exports_from_bytes", "exported_from_bytes", "undefined_from_bytes",
    "arch_name", "version_text",
]  # fmt: skip

# --- constants (<mach-o/loader.h>, <mach/machine.h>) --------------------------------------------------------
MH_MAGIC, MH_MAGIC_64 = 0xFEEDFACE, 0xFEEDFACF
FAT_MAGIC, FAT_MAGIC_64 = 0xCAFEBABE, 0xCAFEBABF
MH_EXECUTE, MH_DYLIB, MH_BUNDLE = 0x2, 0x6, 0x8
LC_REQ_DYLD = 0x80000000
LC_SYMTAB, LC_DYSYMTAB = 0x2, 0xB
LC_LOAD_DYLIB, LC_ID_DYLIB = 0xC, 0xD
LC_LOAD_WEAK_DYLIB = 0x18 | LC_REQ_DYLD
LC_RPATH = 0x1C | LC_REQ_DYLD
LC_REEXPORT_DYLIB = 0x1F | LC_REQ_DYLD
LC_LAZY_LOAD_DYLIB = 0x20
LC_DYLD_INFO, LC_DYLD_INFO_ONLY = 0x22, 0x22 | LC_REQ_DYLD
LC_LOAD_UPWARD_DYLIB = 0x23 | LC_REQ_DYLD
LC_VERSION_MIN_MACOSX = 0x24
LC_BUILD_VERSION = 0x32
LC_DYLD_EXPORTS_TRIE = 0x33 | LC_REQ_DYLD
DYLIB_KINDS = {
    LC_LOAD_DYLIB: "load",
    LC_LOAD_WEAK_DYLIB: "weak",
    LC_REEXPORT_DYLIB: "reexport",
    LC_LAZY_LOAD_DYLIB: "lazy",
    LC_LOAD_UPWARD_DYLIB: "upward",
}
CPU_ARCH_ABI64 = 0x01000000
CPU_TYPE_X86, CPU_TYPE_ARM, CPU_TYPE_POWERPC = 7, 12, 18
CPU_TYPES = {
    CPU_TYPE_X86: "i386",
    CPU_TYPE_X86 | CPU_ARCH_ABI64: "x86_64",
    CPU_TYPE_ARM: "arm",
    CPU_TYPE_ARM | CPU_ARCH_ABI64: "arm64",
    CPU_TYPE_ARM | 0x02000000: "arm64_32",
    CPU_TYPE_POWERPC: "ppc",
    CPU_TYPE_POWERPC | CPU_ARCH_ABI64: "ppc64",
}
CPU_SUBTYPE_MASK = 0xFF000000  # capability bits (CPU_SUBTYPE_LIB64, pointer-auth ABI) above the subtype
CPU_SUBTYPE_ARM64E, CPU_SUBTYPE_X86_64_H = 2, 8
PLATFORMS = {1: "macos", 2: "ios", 3: "tvos", 4: "watchos", 5: "bridgeos", 6: "maccatalyst", 7: "iossimulator"}
N_STAB, N_TYPE, N_EXT, N_UNDF = 0xE0, 0x0E, 0x01, 0x0
N_WEAK_REF = 0x0040
EXPORT_SYMBOL_FLAGS_REEXPORT, EXPORT_SYMBOL_FLAGS_STUB_AND_RESOLVER = 0x08, 0x10

# Limits that keep a hostile file from making us loop or allocate for long; real files are far below them
# (libtorch_cpu.dylib: 80 load commands, ~60,000 exported names).
MAX_FAT_ARCHES = 32
MAX_LOAD_COMMANDS = 8192
MAX_TRIE_NODES = 5_000_000
MAX_SYMBOLS = 20_000_000
TRIE_NAME_BYTES_PER_BYTE = 8  # the names an export trie lists may total 8x its size (real tries: 1.4x) ...
TRIE_NAME_BYTES_SLACK = 1 << 16  # ... plus 64 KB for tiny tries
TRIE_EDGES_PER_LOOKUP = 1024  # edges a lookup may scan per name asked, beyond one pass over the trie


class MachOError(ValueError):
    """Raised inside this module for malformed input; callers only ever see :class:`Unreadable`."""


def arch_name(cputype: int, cpusubtype: int = 0) -> str:
    """``arm64``, ``arm64e``, ``x86_64``, ``x86_64h`` — the names dyld uses in its messages."""
    name = CPU_TYPES.get(cputype, f"0x{cputype:x}")
    sub = cpusubtype & ~CPU_SUBTYPE_MASK
    if name == "arm64" and sub == CPU_SUBTYPE_ARM64E:
        return "arm64e"
    if name == "x86_64" and sub == CPU_SUBTYPE_X86_64_H:
        return "x86_64h"
    return name


def version_text(packed: int | None) -> str | None:
    """``0x000B0000`` → ``11.0`` (xxxx.yy.zz nibbles; the patch level only when set)."""
    if packed is None:
        return None
    major, minor, patch = packed >> 16, (packed >> 8) & 0xFF, packed & 0xFF
    return f"{major}.{minor}.{patch}" if patch else f"{major}.{minor}"


class DylibRef(Record):
    """One dylib load command: the install name as written, its kind and the versions recorded at link time."""

    __slots__ = ("name", "kind", "current_version", "compat_version")

    def __init__(self, name: str, kind: str = "load", current_version: int = 0, compat_version: int = 0) -> None:
        self.name = name
        self.kind = kind  # load, weak, reexport, lazy, upward
        self.current_version = current_version
        self.compat_version = compat_version

    @property
    def weak(self) -> bool:
        return self.kind == "weak"


class MachOSlice(Record):
    """One architecture's image: the load commands dyld reads, and where the symbol tables are."""

    __slots__ = (
        "arch", "cputype", "cpusubtype", "filetype", "bits", "offset", "size", "install_name", "dylibs", "rpaths",
        "platform", "minos", "sdk", "exports_trie", "symtab", "dysymtab",
    )  # fmt: skip

    def __init__(
        self,
        arch: str,
        cputype: int,
        cpusubtype: int,
        filetype: int,
        bits: int,
        offset: int,
        size: int,
        install_name: str | None = None,
        dylibs: tuple[DylibRef, ...] = (),
        rpaths: tuple[str, ...] = (),
        platform: str | None = None,
        minos: int | None = None,
        sdk: int | None = None,
        exports_trie: tuple[int, int] | None = None,
        symtab: tuple[int, int, int, int] | None = None,
        dysymtab: tuple[int, int] | None = None,
    ) -> None:
        self.arch = arch
        self.cputype = cputype
        self.cpusubtype = cpusubtype
        self.filetype = filetype
        self.bits = bits
        self.offset = offset  # of the slice in the file (0 for thin files)
        self.size = size
        self.install_name = install_name
        self.dylibs = dylibs
        self.rpaths = rpaths
        self.platform = platform
        self.minos = minos  # packed xxxx.yy.zz
        self.sdk = sdk
        self.exports_trie = exports_trie  # (offset in slice, size)
        self.symtab = symtab  # (symoff, nsyms, stroff, strsize), offsets in slice
        self.dysymtab = dysymtab  # (iundefsym, nundefsym)

    @property
    def minos_text(self) -> str | None:
        return version_text(self.minos)

    @property
    def sdk_text(self) -> str | None:
        return version_text(self.sdk)

    @property
    def is_executable(self) -> bool:
        return self.filetype == MH_EXECUTE

    @property
    def needed(self) -> tuple[DylibRef, ...]:
        """Dependencies dyld loads at launch (lazy ones excepted: dyld4 treats them as regular loads too)."""
        return self.dylibs


class MachOFile(Record):
    """A thin or fat Mach-O file: one or more slices."""

    __slots__ = ("path", "fat", "slices")

    def __init__(self, path: Path, fat: bool, slices: tuple[MachOSlice, ...]) -> None:
        self.path = path
        self.fat = fat
        self.slices = slices

    @property
    def archs(self) -> tuple[str, ...]:
        return tuple(s.arch for s in self.slices)

    def slice_for(self, arch: str) -> MachOSlice | None:
        """The slice dyld picks for a process of ``arch`` (arm64 also runs arm64e-less arm64 slices)."""
        for s in self.slices:
            if s.arch == arch:
                return s
        if arch == "arm64e":
            return self.slice_for("arm64")
        if arch == "x86_64":
            return next((s for s in self.slices if s.arch == "x86_64h"), None)
        return None


# --- parsing ---------------------------------------------------------------------------------------------


def _cstr(data: bytes | mmap.mmap, start: int, end: int) -> str:
    if start < 0 or start >= end:
        raise MachOError("string outside its load command")
    stop = data.find(b"\0", start, end)
    raw = data[start : (stop if stop >= 0 else end)]
    return bytes(raw).decode("utf-8", "surrogateescape")


def _parse_slice(data, base: int, size: int, arch_hint: str | None = None) -> MachOSlice:
    end = base + size
    if size < 28 or end > len(data):
        raise MachOError("truncated Mach-O header")
    (magic,) = struct.unpack_from("<I", data, base)
    if magic == MH_MAGIC_64:
        bits, header = 64, 32
    elif magic == MH_MAGIC:
        bits, header = 32, 28
    elif magic in (0xCFFAEDFE, 0xCEFAEDFE):
        raise MachOError("big-endian Mach-O (PowerPC) is not supported")
    else:
        raise MachOError(f"not a Mach-O image (magic 0x{magic:08x})")
    if base + header > end:
        raise MachOError("truncated Mach-O header")
    cputype, cpusubtype, filetype, ncmds, sizeofcmds, _flags = struct.unpack_from("<IIIIII", data, base + 4)
    if ncmds > MAX_LOAD_COMMANDS:
        raise MachOError(f"too many load commands ({ncmds})")
    cmds_end = base + header + sizeofcmds
    if cmds_end > end:
        raise MachOError("load commands extend past the end of the file")
    arch = arch_name(cputype, cpusubtype)
    install_name = platform = None
    minos = sdk = None
    dylibs: list[DylibRef] = []
    rpaths: list[str] = []
    exports_trie = symtab = dysymtab = None
    dyld_info_exports = None
    at = base + header
    for _ in range(ncmds):
        if at + 8 > cmds_end:
            raise MachOError("truncated load command")
        cmd, cmdsize = struct.unpack_from("<II", data, at)
        if cmdsize < 8 or at + cmdsize > cmds_end:
            raise MachOError(f"load command 0x{cmd:x} has a bad size ({cmdsize})")
        stop = at + cmdsize
        if cmd in DYLIB_KINDS or cmd == LC_ID_DYLIB:
            if cmdsize < 24:
                raise MachOError("dylib command too small")
            name_off, _ts, current, compat = struct.unpack_from("<IIII", data, at + 8)
            name = _cstr(data, at + name_off, stop)
            if cmd == LC_ID_DYLIB:
                install_name = name
            else:
                dylibs.append(DylibRef(name, DYLIB_KINDS[cmd], current, compat))
        elif cmd == LC_RPATH:
            if cmdsize < 12:
                raise MachOError("rpath command too small")
            (path_off,) = struct.unpack_from("<I", data, at + 8)
            rpaths.append(_cstr(data, at + path_off, stop))
        elif cmd == LC_BUILD_VERSION:
            if cmdsize < 24:
                raise MachOError("build version command too small")
            plat, minos_v, sdk_v = struct.unpack_from("<III", data, at + 8)
            if platform is None or PLATFORMS.get(plat) == "macos":
                platform, minos, sdk = PLATFORMS.get(plat, str(plat)), minos_v, sdk_v
        elif cmd == LC_VERSION_MIN_MACOSX:
            if cmdsize < 16:
                raise MachOError("version min command too small")
            minos_v, sdk_v = struct.unpack_from("<II", data, at + 8)
            if platform is None:
                platform, minos, sdk = "macos", minos_v, sdk_v
        elif cmd == LC_DYLD_EXPORTS_TRIE:
            if cmdsize < 16:
                raise MachOError("exports trie command too small")
            exports_trie = struct.unpack_from("<II", data, at + 8)
        elif cmd in (LC_DYLD_INFO, LC_DYLD_INFO_ONLY):
            if cmdsize < 48:
                raise MachOError("dyld info command too small")
            dyld_info_exports = struct.unpack_from("<II", data, at + 40)
        elif cmd == LC_SYMTAB:
            if cmdsize < 24:
                raise MachOError("symtab command too small")
            symtab = struct.unpack_from("<IIII", data, at + 8)
        elif cmd == LC_DYSYMTAB:
            if cmdsize < 80:
                raise MachOError("dysymtab command too small")
            dysymtab = struct.unpack_from("<II", data, at + 24)
        at = stop
    if exports_trie is None and dyld_info_exports is not None and dyld_info_exports[1]:
        exports_trie = dyld_info_exports
    return MachOSlice(
        arch=arch_hint or arch,
        cputype=cputype,
        cpusubtype=cpusubtype,
        filetype=filetype,
        bits=bits,
        offset=base,
        size=size,
        install_name=install_name,
        dylibs=tuple(dylibs),
        rpaths=tuple(rpaths),
        platform=platform,
        minos=minos,
        sdk=sdk,
        exports_trie=exports_trie,
        symtab=symtab,
        dysymtab=dysymtab,
    )


def _parse(data, path: Path) -> MachOFile:
    if len(data) < 8:
        raise MachOError("file too short")
    (be_magic,) = struct.unpack_from(">I", data, 0)
    if be_magic in (FAT_MAGIC, FAT_MAGIC_64):
        (nfat,) = struct.unpack_from(">I", data, 4)
        if nfat == 0 or nfat > MAX_FAT_ARCHES:
            # 0xCAFEBABE is also a Java class file (whose next field, the version, is >= 45)
            raise MachOError(f"not a fat Mach-O file ({nfat} architectures)")
        wide = be_magic == FAT_MAGIC_64
        entry = 32 if wide else 20
        if 8 + nfat * entry > len(data):
            raise MachOError("truncated fat header")
        slices = []
        for i in range(nfat):
            at = 8 + i * entry
            if wide:
                cputype, cpusubtype, offset, size, _align = struct.unpack_from(">IIQQI", data, at)
            else:
                cputype, cpusubtype, offset, size, _align = struct.unpack_from(">IIIII", data, at)
            if offset + size > len(data) or offset < 8 + nfat * entry:
                raise MachOError(f"fat slice {i} lies outside the file")
            sl = _parse_slice(data, offset, size)
            if sl.cputype != cputype:
                raise MachOError(f"fat slice {i}: header says {arch_name(cputype)}, image is {sl.arch}")
            slices.append(sl)
        return MachOFile(path, True, tuple(slices))
    return MachOFile(path, False, (_parse_slice(data, 0, len(data)),))


def parse_bytes(data: bytes, name: str | Path = "<bytes>") -> MachOFile | Unreadable:
    path = Path(name)
    try:
        return _parse(data, path)
    except (MachOError, struct.error, IndexError, OverflowError, ValueError, MemoryError) as exc:
        return Unreadable(path, str(exc) or type(exc).__name__, "Mach-O")


def read_macho(path: Path | str) -> MachOFile | Unreadable:
    """Read the load commands of every slice; a file that is not a readable Mach-O file is Unreadable."""
    path = Path(path)
    try:
        with open_binary(path) as fh:
            size = os.fstat(fh.fileno()).st_size
            if size == 0:
                return Unreadable(path, "file too short", "Mach-O")
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                try:
                    return _parse(mm, path)
                except (MachOError, struct.error, IndexError, OverflowError, ValueError, MemoryError) as exc:
                    return Unreadable(path, str(exc) or type(exc).__name__, "Mach-O")
    except OSError as exc:
        return Unreadable(path, exc.strerror or str(exc), "Mach-O")


# --- symbols, on demand ----------------------------------------------------------------------------------


def _uleb(data, at: int, end: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= end:
            raise MachOError("truncated ULEB128")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7
        if shift > 63:
            raise MachOError("ULEB128 too long")


def _exports(data, sl: MachOSlice) -> frozenset[str]:
    if sl.exports_trie is None:
        return frozenset()
    off, size = sl.exports_trie
    start = sl.offset + off
    end = start + size
    if size == 0:
        return frozenset()
    if end > sl.offset + sl.size or end > len(data):
        raise MachOError("export trie outside the image")
    names: set[str] = set()
    stack: list[tuple[int, bytes]] = [(start, b"")]
    visited: set[int] = set()
    # every name is built from its edges' labels, so long labels down a deep trie would cost N^2*L bytes: the
    # names may total a small multiple of the trie (real ones: 1.4x, libtorch_cpu's 2 MB trie lists 2.7 MB)
    budget = TRIE_NAME_BYTES_PER_BYTE * size + TRIE_NAME_BYTES_SLACK
    while stack:
        node, prefix = stack.pop()
        if node in visited:
            continue  # a node reached twice (a loop in a corrupt trie, or shared): its names are listed once
        visited.add(node)
        if len(visited) > MAX_TRIE_NODES:
            raise MachOError("export trie too large")
        terminal, at = _uleb(data, node, end)
        if terminal:
            if at + terminal > end:
                raise MachOError("export trie node outside the trie")
            names.add(prefix.decode("utf-8", "surrogateescape"))
        at += terminal
        if at >= end:
            raise MachOError("truncated export trie node")
        children = data[at]
        at += 1
        for _ in range(children):
            stop = data.find(b"\0", at, end)
            if stop < 0:
                raise MachOError("unterminated export trie edge")
            label = bytes(data[at:stop])
            child, at = _uleb(data, stop + 1, end)
            if child == 0 or start + child >= end:
                raise MachOError("export trie edge outside the trie")
            budget -= len(prefix) + len(label)
            if budget < 0:
                raise MachOError("export trie names far longer than the trie (crafted edge labels)")
            stack.append((start + child, prefix + label))
    return frozenset(names)


def _lookup(data, sl: MachOSlice, names) -> frozenset[str]:
    """Which of ``names`` the export trie has: one walk down the trie per name (dyld's ``trieWalk``), far cheaper
    than listing a 35,000-name trie when a dependent binds a few hundred of them."""
    if sl.exports_trie is None or not sl.exports_trie[1]:
        return frozenset()
    off, size = sl.exports_trie
    start = sl.offset + off
    end = start + size
    if end > sl.offset + sl.size or end > len(data):
        raise MachOError("export trie outside the image")
    found = set()
    # every child edge scanned costs a step: a lookup reads at most the whole trie once plus a few hundred
    # edges per name, so a crafted trie of wide nodes cannot cost a pass over itself for every name asked
    budget = size // 2 + TRIE_EDGES_PER_LOOKUP * len(names)
    for name in names:
        # edges need not be canonical (ld64 writes empty labels and shared first bytes): follow every edge
        # that the rest of the name starts with, each node once
        wanted = name.encode("utf-8", "surrogateescape")
        todo = [(start, 0)]  # (node, how much of the name the edges so far matched)
        seen: set[tuple[int, int]] = set()
        while todo:
            node, pos = todo.pop()
            if (node, pos) in seen:
                continue
            seen.add((node, pos))
            if len(seen) > 4096:
                raise MachOError("export trie lookup does not end")
            terminal, at = _uleb(data, node, end)
            if pos == len(wanted) and terminal:
                found.add(name)
                break
            at += terminal
            if at >= end:
                raise MachOError("truncated export trie node")
            children = data[at]
            at += 1
            budget -= children
            if budget < 0:
                raise MachOError("export trie lookups do not end (a crafted trie)")
            for _c in range(children):
                stop = data.find(b"\0", at, end)
                if stop < 0:
                    raise MachOError("unterminated export trie edge")
                label = bytes(data[at:stop])
                child, at = _uleb(data, stop + 1, end)
                if wanted.startswith(label, pos):
                    if child == 0 or start + child >= end:
                        raise MachOError("export trie edge outside the trie")
                    todo.append((start + child, pos + len(label)))
    return frozenset(found)


_UNDEFINED_EXTERNAL = bytes(
    int(not t & N_STAB and (t & N_TYPE) == N_UNDF and bool(t & N_EXT)) for t in range(256)
)  # translate table over n_type bytes


def _undefined(data, sl: MachOSlice) -> tuple[tuple[str, int, bool], ...]:
    """(name, library ordinal, weak) of every undefined external symbol."""
    if sl.symtab is None:
        return ()
    symoff, nsyms, stroff, strsize = sl.symtab
    if nsyms > MAX_SYMBOLS:
        raise MachOError("too many symbols")
    entry = 16 if sl.bits == 64 else 12
    first, count = (0, nsyms) if sl.dysymtab is None else sl.dysymtab
    if first + count > nsyms:
        raise MachOError("undefined symbols outside the symbol table")
    base = sl.offset + symoff
    strs = sl.offset + stroff
    limit = min(sl.offset + sl.size, len(data))
    if base + nsyms * entry > limit or strs + strsize > limit:
        raise MachOError("symbol table outside the image")
    out = []
    # the undefined external entries are found at C speed (one byte per symbol: its n_type), so a table of
    # millions of zeroed entries over a sparse tail costs a scan, not a Python step per entry
    types = bytes(data[base + first * entry + 4 : base + (first + count) * entry : entry])
    marks = types.translate(_UNDEFINED_EXTERNAL)
    k = -1
    while True:
        k = marks.find(1, k + 1)
        if k < 0:
            break
        i = first + k
        n_strx, n_type, _sect, n_desc = struct.unpack_from("<IBBH", data, base + i * entry)
        if n_strx >= strsize:
            raise MachOError("symbol name outside the string table")
        out.append((_cstr(data, strs + n_strx, strs + strsize), (n_desc >> 8) & 0xFF, bool(n_desc & N_WEAK_REF)))
    return tuple(out)


def exports_from_bytes(sl: MachOSlice, data: bytes) -> frozenset[str] | Unreadable:
    try:
        return _exports(data, sl)
    except (MachOError, struct.error, IndexError, OverflowError, ValueError, MemoryError) as exc:
        return Unreadable(Path("<bytes>"), str(exc), "Mach-O")


def undefined_from_bytes(sl: MachOSlice, data: bytes) -> tuple[tuple[str, int, bool], ...] | Unreadable:
    try:
        return _undefined(data, sl)
    except (MachOError, struct.error, IndexError, OverflowError, ValueError, MemoryError) as exc:
        return Unreadable(Path("<bytes>"), str(exc), "Mach-O")


def _with_map(path: Path, fn, sl: MachOSlice):
    try:
        with open_binary(path) as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            try:
                return fn(mm, sl)
            except (MachOError, struct.error, IndexError, OverflowError, ValueError, MemoryError) as exc:
                return Unreadable(path, str(exc), "Mach-O")
    except (OSError, ValueError) as exc:
        return Unreadable(path, str(exc), "Mach-O")


def read_exports(path: Path | str, sl: MachOSlice) -> frozenset[str] | Unreadable:
    """The names ``sl`` exports (its export trie), e.g. ``___kmpc_fork_call`` for an OpenMP runtime."""
    return _with_map(Path(path), _exports, sl)


def read_exported(path: Path | str, sl: MachOSlice, names) -> frozenset[str] | Unreadable:
    """The subset of ``names`` that ``sl`` exports (a trie lookup per name)."""
    names = tuple(names)
    return _with_map(Path(path), lambda data, s: _lookup(data, s, names), sl)


def exported_from_bytes(sl: MachOSlice, data: bytes, names) -> frozenset[str] | Unreadable:
    try:
        return _lookup(data, sl, tuple(names))
    except (MachOError, struct.error, IndexError, OverflowError, ValueError, MemoryError) as exc:
        return Unreadable(Path("<bytes>"), str(exc), "Mach-O")


def read_undefined(path: Path | str, sl: MachOSlice) -> tuple[tuple[str, int, bool], ...] | Unreadable:
    """Undefined external symbols of ``sl``: (name, library ordinal: 1-based index into its dylibs, weak)."""
    return _with_map(Path(path), _undefined, sl)
