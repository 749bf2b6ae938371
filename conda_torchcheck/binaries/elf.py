"""A small, direct ELF reader: exactly what ld.so reads to load a shared object, nothing more.

What it reads, the way ld.so reads it (through the program headers, so stripped files read the same):

* the ELF header (class, byte order, machine, type) and ``PT_INTERP``;
* the dynamic segment: ``DT_NEEDED``, ``DT_SONAME``, ``DT_RPATH``, ``DT_RUNPATH``, ``DT_FLAGS_1``;
* symbol versions: needs (``.gnu.version_r``: ``GLIBCXX_3.4.30`` from ``libstdc++.so.6``) and definitions
  (``.gnu.version_d``);
* on demand (:func:`read_symbols`), the dynamic symbols: undefined references with their version, and
  lookups of the names a library defines the way ld.so looks them up (:meth:`Symbols.defined_among`: the
  name's hash through DT_GNU_HASH, or DT_HASH, then the version of the symbol found), so a library's whole
  string table is never read to answer for the few thousand names its dependents need.

Why not pyelftools: walking libtorch_cpu.so's 75,000 dynamic symbols through its per-symbol objects takes
5+ s, the same tables read with ``memoryview.cast`` take well under 0.1 s; the header, dynamic and version
tables are a few hundred lines of ``struct`` either way. Every offset is bounds-checked and every loop is
bounded by the file size, so a truncated or corrupt file becomes an :class:`Unreadable` value, never an
exception that escapes or a hang (``tests/binaries/test_elf_fuzz.py`` mutates real headers to prove it;
``tests/binaries/test_elf_lookup.py`` holds crafted hash chains).
"""

from __future__ import annotations

import functools
import mmap
import os
import struct
import sys
from array import array
from itertools import accumulate, compress, repeat
from pathlib import Path

from conda_torchcheck.binaries.headers import ELF_MACHINES
from conda_torchcheck.binaries.unreadable import Unreadable
from conda_torchcheck.inventory.fs import open_binary
from conda_torchcheck.records import MutableRecord, Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import BinaryIO

# --- constants (elf.h) ------------------------------------------------------------------------------------
ET_EXEC, ET_DYN = 2, 3
PT_LOAD, PT_DYNAMIC, PT_INTERP = 1, 2, 3
SHT_DYNSYM = 11
DT_NULL, DT_NEEDED, DT_HASH, DT_STRTAB, DT_SYMTAB = 0, 1, 4, 5, 6
DT_STRSZ, DT_SYMENT, DT_SONAME, DT_RPATH, DT_RUNPATH, DT_FLAGS = 10, 11, 14, 15, 29, 30
DT_GNU_HASH = 0x6FFFFEF5
DT_VERSYM = 0x6FFFFFF0
DT_FLAGS_1 = 0x6FFFFFFB
DT_VERDEF, DT_VERDEFNUM = 0x6FFFFFFC, 0x6FFFFFFD
DT_VERNEED, DT_VERNEEDNUM = 0x6FFFFFFE, 0x6FFFFFFF
DF_1_NODEFLIB = 0x800
VER_FLG_BASE, VER_FLG_WEAK = 0x1, 0x2
STB_LOCAL, STB_WEAK = 0, 2
STT_TLS = 6
SHN_UNDEF = 0

# Limits that keep a hostile file from making us loop or allocate for long. Real files are far below them
# (libtorch_cpu.so: 75,415 symbols, 51 version needs, 10 DT_NEEDED).
MAX_PROGRAM_HEADERS = 4096
MAX_DYNAMIC_ENTRIES = 65536
MAX_VERSION_ENTRIES = 65536
MAX_SYMBOLS = 50_000_000


class ElfError(ValueError):
    """Raised inside this module for any malformed input; callers only ever see :class:`Unreadable`."""


def _unreadable(path: Path, reason: str) -> Unreadable:
    return Unreadable(path, reason, "ELF")


class VersionNeed(Record):
    """One entry of ``.gnu.version_r``: ``version`` is needed from the library named ``file`` (a DT_NEEDED)."""

    __slots__ = ("file", "version", "weak", "index")

    def __init__(self, file: str, version: str, weak: bool = False, index: int = 0) -> None:
        self.file = file
        self.version = version
        self.weak = weak
        self.index = index  # the version index symbols use (vna_other)


class _Tables(Record):
    """Where the symbol tables are in the file (file offsets), for :func:`read_symbols`."""

    __slots__ = (
        "symtab", "syment", "nsyms", "strtab", "strsz", "versym", "gnu_hash", "sysv_hash", "gnu_symoffset",
        "version_index",
    )  # fmt: skip

    def __init__(
        self,
        symtab: int | None = None,
        syment: int = 0,
        nsyms: int = 0,
        strtab: int | None = None,
        strsz: int = 0,
        versym: int | None = None,
        gnu_hash: int | None = None,
        sysv_hash: int | None = None,
        gnu_symoffset: int | None = None,
        version_index: tuple[tuple[int, str, str | None], ...] = (),
    ) -> None:
        self.symtab = symtab
        self.syment = syment
        self.nsyms = nsyms
        self.strtab = strtab
        self.strsz = strsz
        self.versym = versym
        self.gnu_hash = gnu_hash
        self.sysv_hash = sysv_hash
        #: first symbol index in the GNU hash table: symbols below it are undefined or local
        self.gnu_symoffset = gnu_symoffset
        #: version index -> (version name, file it comes from; None for a definition)
        self.version_index = version_index


class ElfFile(Record):
    """What ld.so reads of one ELF file: header, interpreter, dynamic section, symbol versions."""

    __slots__ = (
        "path", "size", "bits", "little_endian", "machine", "type", "osabi", "interpreter", "soname", "needed",
        "rpath", "runpath", "flags_1", "has_dynamic", "version_needs", "version_defs", "version_base", "tables",
    )  # fmt: skip
    _fields = __slots__[:-1]  # the table offsets are not part of what the file is

    def __init__(
        self,
        path: Path,
        size: int,
        bits: int,
        little_endian: bool,
        machine: int,
        type: int,
        osabi: int = 0,
        interpreter: str | None = None,
        soname: str | None = None,
        needed: tuple[str, ...] = (),
        rpath: tuple[str, ...] = (),
        runpath: tuple[str, ...] = (),
        flags_1: int = 0,
        has_dynamic: bool = False,
        version_needs: tuple[VersionNeed, ...] = (),
        version_defs: tuple[str, ...] = (),
        version_base: str | None = None,
        tables: _Tables | None = None,
    ) -> None:
        self.path = path
        self.size = size
        self.bits = bits
        self.little_endian = little_endian
        self.machine = machine
        self.type = type
        self.osabi = osabi
        self.interpreter = interpreter
        self.soname = soname
        self.needed = needed
        #: DT_RPATH / DT_RUNPATH entries as written (``$ORIGIN/../lib``), split on ':'
        self.rpath = rpath
        self.runpath = runpath
        self.flags_1 = flags_1
        self.has_dynamic = has_dynamic
        self.version_needs = version_needs
        #: version names this file defines (``GLIBCXX_3.4.30``), the base (file) version excluded
        self.version_defs = version_defs
        self.version_base = version_base
        self.tables = _Tables() if tables is None else tables

    def __bool__(self) -> bool:
        return True

    @property
    def arch(self) -> str:
        return ELF_MACHINES.get(self.machine, f"0x{self.machine:x}")

    @property
    def is_shared_object(self) -> bool:
        return self.type == ET_DYN

    @property
    def nodeflib(self) -> bool:
        return bool(self.flags_1 & DF_1_NODEFLIB)

    def needs_from(self, file: str) -> tuple[VersionNeed, ...]:
        return tuple(n for n in self.version_needs if n.file == file)

    def defines_version(self, version: str) -> bool:
        return version in self.version_defs or version == self.version_base


# --- reading ----------------------------------------------------------------------------------------------


class _Image:
    """The bytes of a file (mmap for big ones) plus bounds-checked readers."""

    def __init__(self, data: bytes | mmap.mmap, size: int) -> None:
        self.data = data
        self.size = size

    def unpack(self, fmt: struct.Struct, offset: int) -> tuple:
        if offset < 0 or offset + fmt.size > self.size:
            raise ElfError(f"truncated: needs {fmt.size} bytes at offset {offset}, file has {self.size}")
        return fmt.unpack_from(self.data, offset)

    def slice(self, offset: int, length: int, what: str) -> bytes:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise ElfError(f"truncated: {what} at offset {offset} (+{length}) is past the end ({self.size} bytes)")
        return self.data[offset : offset + length]


class _FileImage:
    """A file read piece by piece (seek and read), for the tables :func:`read_symbols` copies: each piece comes
    once from the page cache into its copy, where slicing a mapping faults every page of the mapping in before
    copying it; and a file that shrinks under the read gives a short read (an :class:`ElfError`), never a SIGBUS."""

    __slots__ = ("fh", "size")

    def __init__(self, fh: BinaryIO, size: int) -> None:
        self.fh = fh
        self.size = size

    def unpack(self, fmt: struct.Struct, offset: int) -> tuple:
        if offset < 0 or offset + fmt.size > self.size:
            raise ElfError(f"truncated: needs {fmt.size} bytes at offset {offset}, file has {self.size}")
        return fmt.unpack(self._read(offset, fmt.size, "a header"))

    def slice(self, offset: int, length: int, what: str) -> bytes:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise ElfError(f"truncated: {what} at offset {offset} (+{length}) is past the end ({self.size} bytes)")
        return self._read(offset, length, what)

    def _read(self, offset: int, length: int, what: str) -> bytes:
        self.fh.seek(offset)
        data = self.fh.read(length)
        if len(data) != length:
            raise ElfError(f"truncated: {what} at offset {offset} (+{length}) was cut short (the file shrank)")
        return data


def _open(path: Path) -> tuple[_Image, object | None]:
    fh = open_binary(path)
    try:
        size = os.fstat(fh.fileno()).st_size
        if size == 0:
            raise ElfError("empty file")
        if size <= 1 << 20:
            data: bytes | mmap.mmap = fh.read()
            fh.close()
            return _Image(data, len(data)), None
        mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        return _Image(mapped, size), (fh, mapped)
    except BaseException:
        fh.close()
        raise


def _close(handle: object | None) -> None:
    if handle is not None:
        fh, mapped = handle  # type: ignore[misc]
        try:
            mapped.close()
        finally:
            fh.close()


class _Formats:
    """The struct layouts of one ELF class and byte order."""

    __slots__ = ("ehdr", "phdr", "shdr", "dyn", "verneed", "vernaux", "verdef", "verdaux", "word", "sym_size")

    def __init__(self, **layouts: struct.Struct | int) -> None:
        for name in self.__slots__:
            setattr(self, name, layouts[name])


@functools.lru_cache(maxsize=4)
def _formats(bits: int, little: bool) -> _Formats:
    """The layouts of one class and byte order, made once (a file of each kind costs nine ``struct.Struct``)."""
    e = "<" if little else ">"
    if bits == 64:
        return _Formats(
            ehdr=struct.Struct(e + "HHIQQQIHHHHHH"),
            phdr=struct.Struct(e + "IIQQQQQQ"),
            shdr=struct.Struct(e + "IIQQQQIIQQ"),
            dyn=struct.Struct(e + "qQ"),
            verneed=struct.Struct(e + "HHIII"),
            vernaux=struct.Struct(e + "IHHII"),
            verdef=struct.Struct(e + "HHHHIII"),
            verdaux=struct.Struct(e + "II"),
            word=struct.Struct(e + "I"),
            sym_size=24,
        )
    return _Formats(
        ehdr=struct.Struct(e + "HHIIIIIHHHHHH"),
        phdr=struct.Struct(e + "IIIIIIII"),
        shdr=struct.Struct(e + "IIIIIIIIII"),
        dyn=struct.Struct(e + "iI"),
        verneed=struct.Struct(e + "HHIII"),
        vernaux=struct.Struct(e + "IHHII"),
        verdef=struct.Struct(e + "HHHHIII"),
        verdaux=struct.Struct(e + "II"),
        word=struct.Struct(e + "I"),
        sym_size=16,
    )


def read_elf(path: Path | str) -> ElfFile | Unreadable:
    """Header, dynamic section and version tables of ``path``; an :class:`Unreadable` if that fails."""
    path = Path(path)
    try:
        image, handle = _open(path)
    except ElfError as exc:
        return _unreadable(path, str(exc))
    except OSError as exc:
        return _unreadable(path, exc.strerror or str(exc))
    try:
        return _parse(path, image)
    except ElfError as exc:
        return _unreadable(path, str(exc))
    except (struct.error, IndexError, ValueError, OverflowError, UnicodeError, MemoryError) as exc:
        return _unreadable(path, f"corrupt: {type(exc).__name__}: {exc}")
    finally:
        _close(handle)


def parse_bytes(data: bytes, path: Path | str = "<bytes>") -> ElfFile | Unreadable:
    """Like :func:`read_elf` for bytes already in memory (used by the fuzz job)."""
    path = Path(path)
    if not data:
        return _unreadable(path, "empty file")
    try:
        return _parse(path, _Image(data, len(data)))
    except ElfError as exc:
        return _unreadable(path, str(exc))
    except (struct.error, IndexError, ValueError, OverflowError, UnicodeError, MemoryError) as exc:
        return _unreadable(path, f"corrupt: {type(exc).__name__}: {exc}")


def _cstring(image: _Image, start: int, end: int, offset: int) -> str:
    """The NUL-terminated string at ``offset`` inside the string table [start, end)."""
    if offset < 0 or start + offset >= end:
        raise ElfError(f"string offset {offset} is outside the string table")
    pos = start + offset
    stop = image.data.find(b"\0", pos, end)
    if stop < 0:
        raise ElfError("unterminated string in the string table")
    return bytes(image.data[pos:stop]).decode("utf-8", "surrogateescape")


def _parse(path: Path, image: _Image) -> ElfFile:
    ident = image.slice(0, 16, "ELF identification") if image.size >= 16 else b""
    if len(ident) < 16 or ident[:4] != b"\x7fELF":
        if image.size < 4 or image.data[:4] != b"\x7fELF":
            raise ElfError("not an ELF file (bad magic)")
        raise ElfError("truncated ELF header")
    if ident[4] not in (1, 2):
        raise ElfError(f"bad ELF class {ident[4]}")
    if ident[5] not in (1, 2):
        raise ElfError(f"bad ELF byte order {ident[5]}")
    bits = 64 if ident[4] == 2 else 32
    little = ident[5] == 1
    fmt = _formats(bits, little)
    (e_type, e_machine, _ver, _entry, e_phoff, e_shoff, _flags, _ehsize, e_phentsize, e_phnum, e_shentsize, e_shnum,
     _shstrndx) = image.unpack(fmt.ehdr, 16)  # fmt: skip
    if e_phnum and e_phentsize < fmt.phdr.size:
        raise ElfError(f"program header entry size {e_phentsize} is too small")
    if e_phnum > MAX_PROGRAM_HEADERS:
        raise ElfError(f"{e_phnum} program headers")
    loads: list[tuple[int, int, int]] = []  # (vaddr, offset, filesz)
    dynamic: tuple[int, int] | None = None
    interp: tuple[int, int] | None = None
    for i in range(e_phnum):
        ph = image.unpack(fmt.phdr, e_phoff + i * e_phentsize)
        if bits == 64:
            p_type, _pflags, p_offset, p_vaddr, _paddr, p_filesz, _memsz, _align = ph
        else:
            p_type, p_offset, p_vaddr, _paddr, p_filesz, _memsz, _pflags, _align = ph
        if p_type == PT_LOAD:
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == PT_DYNAMIC:
            dynamic = (p_offset, p_filesz)
        elif p_type == PT_INTERP:
            interp = (p_offset, p_filesz)
    interpreter = None
    if interp is not None:
        raw = image.slice(interp[0], min(interp[1], 4096), "PT_INTERP")
        interpreter = bytes(raw).split(b"\0", 1)[0].decode("utf-8", "surrogateescape") or None
    base = ElfFile(path=path, size=image.size, bits=bits, little_endian=little, machine=e_machine, type=e_type,
                   osabi=ident[7], interpreter=interpreter)  # fmt: skip
    if dynamic is None:
        return base

    def to_offset(vaddr: int, what: str) -> int:
        for p_vaddr, p_offset, p_filesz in loads:
            if p_vaddr <= vaddr < p_vaddr + p_filesz:
                return p_offset + (vaddr - p_vaddr)
        raise ElfError(f"{what} address 0x{vaddr:x} is not inside any loaded segment")

    dyn_off, dyn_size = dynamic
    count = min(dyn_size // fmt.dyn.size, MAX_DYNAMIC_ENTRIES)
    tags: dict[int, int] = {}
    needed_offsets: list[int] = []
    rpath_offsets: list[int] = []
    runpath_offsets: list[int] = []
    for i in range(count):
        tag, value = image.unpack(fmt.dyn, dyn_off + i * fmt.dyn.size)
        if tag == DT_NULL:
            break
        if tag == DT_NEEDED:
            needed_offsets.append(value)
        elif tag == DT_RPATH:
            rpath_offsets.append(value)
        elif tag == DT_RUNPATH:
            runpath_offsets.append(value)
        else:
            tags.setdefault(tag, value)
    if DT_STRTAB not in tags:
        if needed_offsets or DT_SONAME in tags:
            raise ElfError("dynamic section has names but no string table (DT_STRTAB)")
        return base.replace(has_dynamic=True)
    str_start = to_offset(tags[DT_STRTAB], "DT_STRTAB")
    strsz = tags.get(DT_STRSZ, 0)
    if strsz <= 0 or str_start + strsz > image.size:
        # a bad DT_STRSZ: use what the file holds (ld.so would read past; we stop at the end of the file)
        if str_start >= image.size:
            raise ElfError("string table is past the end of the file")
        strsz = image.size - str_start
    str_end = str_start + strsz

    def text(offset: int) -> str:
        return _cstring(image, str_start, str_end, offset)

    needed = tuple(text(o) for o in needed_offsets)
    soname = text(tags[DT_SONAME]) if DT_SONAME in tags else None
    rpath = _split_paths(text(o) for o in rpath_offsets)
    runpath = _split_paths(text(o) for o in runpath_offsets)

    version_index: list[tuple[int, str, str | None]] = []
    needs: list[VersionNeed] = []
    if DT_VERNEED in tags:
        pos = to_offset(tags[DT_VERNEED], "DT_VERNEED")
        remaining = min(tags.get(DT_VERNEEDNUM, MAX_VERSION_ENTRIES), MAX_VERSION_ENTRIES)
        budget = MAX_VERSION_ENTRIES
        while remaining > 0:
            remaining -= 1
            _vn_version, vn_cnt, vn_file, vn_aux, vn_next = image.unpack(fmt.verneed, pos)
            file = text(vn_file)
            aux = pos + vn_aux
            for _ in range(min(vn_cnt, MAX_VERSION_ENTRIES)):
                budget -= 1
                if budget < 0:
                    raise ElfError("version needs do not end (a cycle in .gnu.version_r)")
                _hash, vna_flags, vna_other, vna_name, vna_next = image.unpack(fmt.vernaux, aux)
                name = text(vna_name)
                needs.append(VersionNeed(file, name, bool(vna_flags & VER_FLG_WEAK), vna_other))
                version_index.append((vna_other & 0x7FFF, name, file))
                if vna_next == 0:
                    break
                aux += vna_next
            if vn_next == 0:
                break
            pos += vn_next
    defs: list[str] = []
    version_base = None
    if DT_VERDEF in tags:
        pos = to_offset(tags[DT_VERDEF], "DT_VERDEF")
        remaining = min(tags.get(DT_VERDEFNUM, MAX_VERSION_ENTRIES), MAX_VERSION_ENTRIES)
        while remaining > 0:
            remaining -= 1
            _vd_version, vd_flags, vd_ndx, vd_cnt, _hash, vd_aux, vd_next = image.unpack(fmt.verdef, pos)
            if vd_cnt:
                vda_name, _vda_next = image.unpack(fmt.verdaux, pos + vd_aux)
                name = text(vda_name)
                if vd_flags & VER_FLG_BASE:
                    # glibc (dl-version.c): "the name of the base version should not be available for matching
                    # a versioned symbol", so its index stays unnamed, as an unversioned definition's
                    version_base = name
                else:
                    defs.append(name)
                    version_index.append((vd_ndx & 0x7FFF, name, None))
            if vd_next == 0:
                break
            pos += vd_next

    tables = _symbol_tables(image, fmt, tags, to_offset, e_shoff, e_shentsize, e_shnum, str_start, strsz)
    tables = tables.replace(version_index=tuple(version_index))
    return ElfFile(
        path=path,
        size=image.size,
        bits=bits,
        little_endian=little,
        machine=e_machine,
        type=e_type,
        osabi=ident[7],
        interpreter=interpreter,
        soname=soname,
        needed=needed,
        rpath=rpath,
        runpath=runpath,
        flags_1=tags.get(DT_FLAGS_1, 0),
        has_dynamic=True,
        version_needs=tuple(needs),
        version_defs=tuple(defs),
        version_base=version_base,
        tables=tables,
    )


def _split_paths(values: Iterable[str]) -> tuple[str, ...]:
    out: list[str] = []
    for value in values:
        # ld.so treats an empty entry as the current directory only for LD_LIBRARY_PATH; in DT_RUNPATH an
        # empty string is skipped by the linker that wrote it, so keep entries as written but drop blanks
        out.extend(p for p in value.split(":") if p)
    return tuple(out)


def _symbol_tables(image, fmt, tags, to_offset, e_shoff, e_shentsize, e_shnum, str_start, strsz) -> _Tables:
    """Locate .dynsym/.gnu.version/hash tables; failures here only disable symbol-level checks."""
    try:
        if DT_SYMTAB not in tags:
            return _Tables(strtab=str_start, strsz=strsz)
        symtab = to_offset(tags[DT_SYMTAB], "DT_SYMTAB")
        syment = tags.get(DT_SYMENT, fmt.sym_size) or fmt.sym_size
        if syment != fmt.sym_size:
            raise ElfError(f"unexpected symbol entry size {syment}")
        gnu = to_offset(tags[DT_GNU_HASH], "DT_GNU_HASH") if DT_GNU_HASH in tags else None
        sysv = to_offset(tags[DT_HASH], "DT_HASH") if DT_HASH in tags else None
        versym = to_offset(tags[DT_VERSYM], "DT_VERSYM") if DT_VERSYM in tags else None
        nsyms = _count_from_sections(image, fmt, e_shoff, e_shentsize, e_shnum, symtab)
        symoffset = None
        if gnu is not None:
            nbuckets, symoffset = image.unpack(struct.Struct(fmt.word.format[0] + "II"), gnu)
            if nsyms is None:
                nsyms = _count_from_gnu_hash(image, fmt, gnu)
        if nsyms is None and sysv is not None:
            nsyms = image.unpack(struct.Struct(fmt.word.format[0] + "II"), sysv)[1]
        if nsyms is None:
            raise ElfError("no way to count the dynamic symbols")
        nsyms = min(nsyms, (image.size - symtab) // syment, MAX_SYMBOLS)
        return _Tables(
            symtab=symtab,
            syment=syment,
            nsyms=max(nsyms, 0),
            strtab=str_start,
            strsz=strsz,
            versym=versym,
            gnu_hash=gnu,
            sysv_hash=sysv,
            gnu_symoffset=symoffset,
        )
    except (ElfError, struct.error, OverflowError):
        return _Tables(strtab=str_start, strsz=strsz)


def _count_from_sections(image: _Image, fmt: _Formats, e_shoff: int, e_shentsize: int, e_shnum: int, symtab: int):
    """The size of the SHT_DYNSYM section whose file offset is DT_SYMTAB's, when section headers exist."""
    if not e_shoff or not e_shnum or e_shentsize < fmt.shdr.size or e_shnum > 65535:
        return None
    if e_shoff + e_shnum * e_shentsize > image.size:
        return None
    for i in range(e_shnum):
        sh = fmt.shdr.unpack_from(image.data, e_shoff + i * e_shentsize)
        sh_type, sh_offset, sh_size, sh_entsize = sh[1], sh[4], sh[5], sh[9]
        if sh_type == SHT_DYNSYM and sh_offset == symtab and sh_entsize == fmt.sym_size:
            return sh_size // fmt.sym_size
    return None


def _count_from_gnu_hash(image: _Image, fmt: _Formats, gnu: int) -> int:
    """Number of dynamic symbols from DT_GNU_HASH: the end of the longest hash chain (what readelf does).

    A chain without an end bit stops at the end of the file: the search for the end bit runs over the chain's
    bytes at C speed, so a crafted chain costs a scan of the file, not a Python loop per entry."""
    e = fmt.word.format[0]
    nbuckets, symoffset, bloom_size, _shift = image.unpack(struct.Struct(e + "IIII"), gnu)
    word = 8 if fmt.sym_size == 24 else 4
    buckets_at = gnu + 16 + bloom_size * word
    buckets = array("I", image.slice(buckets_at, 4 * nbuckets, "GNU hash buckets"))
    if (e == ">") != (array("I", b"\0\0\0\1")[0] == 1):
        buckets.byteswap()
    last = max(buckets, default=0)
    if last < symoffset:
        return symoffset
    start = buckets_at + 4 * nbuckets + 4 * (last - symoffset)
    entries = min((image.size - start) // 4, MAX_SYMBOLS) if start >= 0 else 0
    if entries <= 0:
        raise ElfError("GNU hash chain starts past the end of the file")
    low_bytes = bytes(image.data[start + (0 if e == "<" else 3) : start + 4 * entries : 4])
    end = low_bytes.translate(_ODD).find(1)
    if end < 0:
        raise ElfError("GNU hash chain does not end before the end of the file")
    return last + end + 1


_ODD = bytes(i & 1 for i in range(256))  # translate table: 1 where the byte's low bit (a chain's end bit) is set


# --- dynamic symbols --------------------------------------------------------------------------------------


class SymbolRef(Record):
    """An undefined dynamic symbol: what this file needs some loaded object to define."""

    __slots__ = ("name", "version", "version_file", "weak")

    def __init__(
        self, name: bytes, version: str | None = None, version_file: str | None = None, weak: bool = False
    ) -> None:
        self.name = name
        self.version = version
        #: the DT_NEEDED the version comes from (``libnvJitLink.so.12``)
        self.version_file = version_file
        self.weak = weak

    @property
    def text(self) -> str:
        return self.name.decode("utf-8", "replace")


_Ref = tuple[bytes, str | None, str | None, bool]  # name, version, version file, weak
Wanted = tuple[bytes, "str | None", int]  # a name looked up: name, version, gnu_hash(name)


class Symbols(MutableRecord):
    """The dynamic symbols of one file: its undefined references, and lookups of the names it defines.

    A lookup goes the way ld.so's ``do_lookup_x`` goes: the name's hash through the file's DT_GNU_HASH (bloom
    filter, bucket, chain; DT_HASH when there is no GNU table), then, for a symbol of that name, its version
    through ``.gnu.version`` and the version definitions. Only the entries a lookup touches are read: a
    library exporting 75,000 names costs a few array reads per name asked, not a pass over its string table.
    """

    __slots__ = ("path", "refs", "count", "_source", "_lookup", "_present", "_refs_by_name")
    _fields = ("path", "refs", "count")

    def __init__(
        self,
        path: Path,
        refs: list[tuple[bytes, str | None, str | None, bool]],
        count: int,
        source: _SymbolSource | None = None,
    ) -> None:
        self.path = path
        #: (name, version, version file, weak) of every undefined global symbol
        self.refs = refs
        self.count = count
        self._source = source
        self._lookup: _Lookup | None = None
        self._present: frozenset[bytes] | None = None
        self._refs_by_name: dict[object, _Ref] | None = None  # by name, and by (name, version)

    @property
    def undefined(self) -> tuple[SymbolRef, ...]:
        return tuple(SymbolRef(*r) for r in self.refs)

    def required_names(self) -> set[bytes]:
        """Names of the non-weak undefined symbols (a weak one may stay undefined)."""
        return {r[0] for r in self.refs if not r[3]}

    def required(self) -> dict[tuple[bytes, str | None], None]:
        """(name, version) of the non-weak undefined symbols, in table order, each once."""
        return dict.fromkeys((r[0], r[1]) for r in self.refs if not r[3])

    def ref_of(self, name: bytes, version: str | None = None, *, any_version: bool = True) -> _Ref | None:
        """The first undefined reference named ``name`` (of ``version`` unless ``any_version``)."""
        if self._refs_by_name is None:
            by_name: dict[object, _Ref] = {}
            for ref in self.refs:
                by_name.setdefault(ref[0], ref)
                by_name.setdefault((ref[0], ref[1]), ref)
            self._refs_by_name = by_name
        return self._refs_by_name.get(name if any_version else (name, version))

    def present_names(self) -> frozenset[bytes]:
        """Every name this file defines and exports (plus, harmlessly, other strings of its string table that
        are not undefined symbol names: its SONAME, paths, version names), built once. A whole-table pass:
        the symbol check asks :meth:`defined_among` instead; this stays for files without a hash table."""
        if self._present is None:
            self._present = frozenset() if self._source is None else self._source.present_names(self.refs)
        return self._present

    def defines_many(self, names: Iterable[bytes]) -> set[bytes]:
        present = self.present_names()
        return {n for n in names if n in present}

    def defined_among(self, wanted: Mapping[int, list[Wanted]]) -> list[Wanted]:
        """Which of ``wanted`` this file defines, as ld.so would bind them: a versioned reference needs that
        version (or an unversioned definition), an unversioned one takes the base or the only non-hidden
        version. ``wanted`` maps ``gnu_hash(name) | 1`` to the (name, version or None, gnu_hash(name)) asked."""
        if self._source is None:
            return []
        if self._lookup is None:
            self._lookup = self._source.lookup()
        if self._lookup is None:  # no hash table (or an unreadable one): the whole-table answer, versions unchecked
            present = self.present_names()
            return [e for entries in wanted.values() for e in entries if e[0] in present]
        return self._lookup.defined_among(wanted)


def gnu_hash(name: bytes) -> int:
    """The DT_GNU_HASH hash of ``name`` (``h = h * 33 + c`` from 5381, modulo 2**32), at C speed: writing each
    byte as ``33 * hi + lo`` makes the sum two base-33 numbers that ``int()`` reads (chunked, so a long name
    stays linear and under Python's digit limit)."""
    if len(name) <= _HASH_CHUNK:
        return (
            5381 * _POW33[len(name)] + int(name.translate(_HI33) + b"0", 33) + int(b"0" + name.translate(_LO33), 33)
        ) & 0xFFFFFFFF
    h = 5381
    for at in range(0, len(name), _HASH_CHUNK):
        chunk = name[at : at + _HASH_CHUNK]
        h = (
            h * _POW33[len(chunk)] + int(chunk.translate(_HI33) + b"0", 33) + int(b"0" + chunk.translate(_LO33), 33)
        ) & (0xFFFFFFFF)
    return h


_HASH_CHUNK = 512
_DIGITS33 = b"0123456789abcdefghijklmnopqrstuvw"
_HI33 = bytes(_DIGITS33[c // 33] for c in range(256))
_LO33 = bytes(_DIGITS33[c % 33] for c in range(256))
_POW33 = list(accumulate(repeat(33, _HASH_CHUNK), lambda p, b: p * b & 0xFFFFFFFF, initial=1))  # 33**n mod 2**32


def sysv_hash(name: bytes) -> int:
    """The DT_HASH (System V) hash of ``name``: only for files without a GNU hash table."""
    h = 0
    for c in name:
        h = (h << 4) + c
        g = h & 0xF0000000
        if g:
            h ^= g >> 24
        h &= ~g & 0xFFFFFFFF
    return h


def _hash_set(chains: array) -> set[int]:
    """The hash values of a GNU hash table's chains with the end bit (bit 0) set in all of them.

    ld.so rejects most names with one probe of the bloom filter; in Python a probe costs more than the rest
    of the lookup, so the same rejection is one C-speed set intersection: only names whose hash some symbol
    has are walked down their bucket's chain."""
    raw = bytearray(chains.tobytes())
    low = 0 if sys.byteorder == "little" else 3
    raw[low::4] = bytes(raw[low::4]).translate(_SET_LOW_BIT)
    return set(array("I", raw))


def _low_bits(words: array) -> bytes:
    """One byte per 32-bit word, 1 where the word's bit 0 is set (at C speed)."""
    raw = words.tobytes()
    return raw[0 if sys.byteorder == "little" else 3 :: 4].translate(_ODD)


_SET_LOW_BIT = bytes(i | 1 for i in range(256))
_NONLOCAL = bytes(int(i >> 4 != STB_LOCAL) for i in range(256))  # translate table over st_info bytes


class _SymbolSource:
    """What lookups need after :func:`read_symbols` returns, copied out of the file (its string table, the
    symbol columns, the hash table): the file is closed then, so one changed or truncated under a long run
    cannot fault a mapping."""

    __slots__ = ("strings", "tables", "bits", "little", "names", "shndx", "info", "versym", "_lookup")

    def __init__(
        self,
        image: _Image | _FileImage,
        tables: _Tables,
        bits: int,
        little: bool,
        columns: tuple[array, array, bytes, array | None],
        strings: bytes,
    ) -> None:
        self.strings = strings
        self.tables = tables
        self.bits = bits
        self.little = little
        #: per symbol: st_name, st_shndx, st_info, the .gnu.version entry (read once by :func:`_read_symbols`)
        self.names, self.shndx, self.info, self.versym = columns
        self._lookup = self._read_lookup(image)

    def present_names(self, refs: list[tuple[bytes, str | None, str | None, bool]]) -> frozenset[bytes]:
        strings = self.strings
        names, shndx, info = self.names, self.shndx, self.info
        defined = {names[i] for i in range(1, len(names)) if shndx[i] != SHN_UNDEF and info[i] >> 4 != STB_LOCAL}
        parts = strings.split(b"\0")
        starts = set(accumulate(map((1).__add__, map(len, parts)), initial=0))
        present = set(parts)
        for off in defined - starts:  # names merged into the tail of a longer string
            end = strings.find(b"\0", off)
            if end > off:
                present.add(strings[off:end])
        present.difference_update(r[0] for r in refs)
        present.discard(b"")
        return frozenset(present)

    def lookup(self) -> _Lookup | None:
        """The file's hash table; None when it has none that holds together."""
        return self._lookup

    def _read_lookup(self, image: _Image | _FileImage) -> _Lookup | None:
        t = self.tables
        try:
            if t.gnu_hash is not None:
                return _Lookup.gnu(self, image, t.gnu_hash)
            if t.sysv_hash is not None:
                return _Lookup.sysv(self, image, t.sysv_hash)
        except (ElfError, OSError, struct.error, ValueError, OverflowError, MemoryError):
            return None
        return None


class _Lookup:
    """One file's symbol hash table as ld.so walks it; every index is checked against the symbol count, so a
    chain without an end bit stops there."""

    __slots__ = ("source", "is_gnu", "bloom", "bloom_mask", "bloom_bits", "shift", "nbuckets", "buckets", "chains",
                 "first", "versym", "versions", "hashes", "ends")  # fmt: skip

    def __init__(self, source: _SymbolSource, gnu: bool, buckets: array, chains: array, first: int) -> None:
        self.source = source
        self.is_gnu = gnu
        self.bloom: array | None = None
        self.bloom_mask = 0
        self.bloom_bits = source.bits
        self.shift = 0
        self.nbuckets = len(buckets)
        self.buckets = buckets
        #: GNU: hash values of symbols ``first``.. (end bit in bit 0); System V: the chain array
        self.chains = chains
        self.first = first
        t = source.tables
        self.versym = source.versym
        self.versions = {ndx: name for ndx, name, _file in t.version_index}
        #: GNU: every hashed symbol's hash with bit 0 set, built on first use (see :func:`_hash_set`)
        self.hashes: set[int] | None = None
        #: GNU: one byte per chain entry, 1 where the entry ends its chain (see :func:`_low_bits`)
        self.ends: bytes | None = None

    @classmethod
    def gnu(cls, source: _SymbolSource, image: _Image | _FileImage, at: int) -> _Lookup:
        t, little = source.tables, source.little
        e = "<" if little else ">"
        nbuckets, symoffset, bloom_size, shift = image.unpack(struct.Struct(e + "IIII"), at)
        if nbuckets == 0 or bloom_size == 0 or bloom_size & (bloom_size - 1):
            raise ElfError("GNU hash table with no buckets or a bloom filter size that is not a power of two")
        word = source.bits // 8
        bloom = _column(bytes(image.slice(at + 16, bloom_size * word, "GNU hash bloom filter")),
                        "Q" if word == 8 else "I", 0, 1, little)  # fmt: skip
        buckets_at = at + 16 + bloom_size * word
        buckets = _column(bytes(image.slice(buckets_at, 4 * nbuckets, "GNU hash buckets")), "I", 0, 1, little)
        chain_count = max(t.nsyms - symoffset, 0)
        chains_at = buckets_at + 4 * nbuckets
        chain_count = min(chain_count, max((image.size - chains_at) // 4, 0))
        chains = _column(bytes(image.slice(chains_at, 4 * chain_count, "GNU hash chains")), "I", 0, 1, little)
        lookup = cls(source, True, buckets, chains, symoffset)
        lookup.bloom = bloom
        lookup.bloom_mask = bloom_size - 1
        lookup.shift = shift
        return lookup

    @classmethod
    def sysv(cls, source: _SymbolSource, image: _Image | _FileImage, at: int) -> _Lookup:
        t, little = source.tables, source.little
        nbucket, nchain = image.unpack(struct.Struct(("<" if little else ">") + "II"), at)
        if nbucket == 0:
            raise ElfError("System V hash table with no buckets")
        nchain = min(nchain, t.nsyms)
        buckets = _column(bytes(image.slice(at + 8, 4 * nbucket, "hash buckets")), "I", 0, 1, little)
        chains = _column(bytes(image.slice(at + 8 + 4 * nbucket, 4 * nchain, "hash chains")), "I", 0, 1, little)
        return cls(source, False, buckets, chains, 0)

    def defined_among(self, wanted: Mapping[int, list[Wanted]]) -> list[Wanted]:
        found: list[Wanted] = []
        if self.is_gnu:
            chains = self.chains
            bloom = None
            if len(wanted) * 8 < len(chains):  # few names asked of a big table: ld.so's bloom filter
                bloom, mask, shift = self.bloom, self.bloom_mask, self.shift
                # the word's bits are 32 or 64: h // bits and h % bits as a shift and a mask
                bits_mask, bits_shift = self.bloom_bits - 1, self.bloom_bits.bit_length() - 1
                assert bloom is not None
                asked: Iterable[Wanted] = (e for entries in wanted.values() for e in entries)
            else:  # the set of the chain's hashes rejects the rest at C speed
                if self.hashes is None:
                    self.hashes = _hash_set(chains)
                asked = [e for key in self.hashes.intersection(wanted) for e in wanted[key]]
                if not asked:
                    return found
            if self.ends is None:
                self.ends = _low_bits(chains)
            buckets, nbuckets, first, ends = self.buckets, self.nbuckets, self.first, self.ends
            last = len(chains) - 1
            binds = self._binds
            source = self.source
            strings, names, shndx, info = source.strings, source.names, source.shndx, source.info
            size, count_names = len(strings), len(names)
            versym, versions = self.versym, self.versions
            count_versym = len(versym) if versym is not None else 0
            for entry in asked:
                h = entry[2]
                if bloom is not None:
                    word = bloom[(h >> bits_shift) & mask]
                    if not (word >> (h & bits_mask)) & (word >> ((h >> shift) & bits_mask)) & 1:
                        continue
                start = buckets[h % nbuckets] - first
                if start < 0:  # an empty bucket (0), or one below the hashed symbols (corrupt)
                    continue
                stop = ends.find(1, start)  # a chain without an end bit stops at the last symbol
                if stop < 0:
                    stop = last
                if stop - start < 64:
                    # the chain's entries of this hash (bit 0 aside): a real chain is a few entries, mostly
                    # none or one of them this hash; walked without copying it
                    odd = h | 1
                    at_k = -1
                    for k in range(start, stop + 1):
                        if chains[k] | 1 == odd:
                            if at_k >= 0:  # a second one: :meth:`_binds` over all of them
                                at_k = -2
                                break
                            at_k = k
                    if at_k == -1:
                        continue
                    if at_k >= 0:  # the common case, :meth:`_binds` for one symbol written out
                        i = first + at_k
                        if i >= count_names or shndx[i] == SHN_UNDEF or info[i] >> 4 == STB_LOCAL:
                            continue
                        name, at = entry[0], names[i]
                        end = at + len(name)
                        if end >= size or strings[end] or not strings.startswith(name, at):
                            continue
                        if versym is not None:
                            ndx = versym[i] if i < count_versym else 0
                            version = entry[1]
                            if version is None:
                                if ndx & 0x7FFF >= 3 and ndx & 0x8000:  # its one version is hidden
                                    continue
                            else:
                                defined = versions.get(ndx & 0x7FFF)
                                if defined != version and (defined is not None or ndx & 0x8000):
                                    continue
                        found.append(entry)
                        continue
                    even = h & ~1
                    chain = chains[start : stop + 1]
                    candidates = [first + start + k for k, c in enumerate(chain) if c == even or c == odd]
                else:
                    candidates = self._long_chain_matches(start, stop, h)
                if candidates and binds(candidates, entry[0], entry[1]):
                    found.append(entry)
        else:
            buckets, nbuckets, chains = self.buckets, self.nbuckets, self.chains
            nchain = len(chains)
            for entries in wanted.values():
                for entry in entries:
                    candidates = []
                    i = buckets[sysv_hash(entry[0]) % nbuckets]
                    steps = 0
                    while 0 < i < nchain and steps < nchain:  # a cycle in the chain stops at the chain's length
                        candidates.append(i)
                        i = chains[i]
                        steps += 1
                    if candidates and self._binds(candidates, entry[0], entry[1]):
                        found.append(entry)
        return found

    def _long_chain_matches(self, start: int, stop: int, h: int) -> list[int]:
        """Symbol indexes of chain entries ``start``..``stop`` whose hash is ``h``'s, searched at C speed: a real
        chain is a few entries (walked by the caller); a crafted one without an end bit runs to the last symbol,
        and must not cost a Python step per symbol of the file."""
        chains, first = self.chains, self.first
        found = []
        for target in (h & ~1, h | 1):
            at = start
            while True:
                try:
                    at = chains.index(target, at, stop + 1)
                except ValueError:
                    break
                found.append(first + at)
                at += 1
        return sorted(found)

    def _binds(self, candidates: list[int], name: bytes, version: str | None) -> bool:
        """ld.so's ``check_match`` over the chain's symbols of matching hash, then its one-version rule."""
        source = self.source
        strings = source.strings
        size = len(strings)
        names, shndx, info, versym, versions = source.names, source.shndx, source.info, self.versym, self.versions
        length = len(name)
        other_versions = 0
        for i in candidates:
            if i >= len(names):
                break
            if shndx[i] == SHN_UNDEF or info[i] >> 4 == STB_LOCAL:
                continue
            at = names[i]
            if at + length >= size or strings[at : at + length] != name or strings[at + length] != 0:
                continue
            if versym is None:
                return True
            ndx = versym[i] if i < len(versym) else 0
            if version is None:
                if ndx & 0x7FFF >= 3:  # a versioned definition: taken only if it is the one non-hidden version
                    other_versions += not ndx & 0x8000
                    continue
                return True
            defined = versions.get(ndx & 0x7FFF)
            if defined == version or (defined is None and not ndx & 0x8000):
                return True
        return version is None and other_versions == 1


def read_symbols(elf: ElfFile) -> Symbols | Unreadable:
    """The undefined references of ``elf`` (with versions), and lookups of what it defines."""
    t = elf.tables
    if t.symtab is None or t.strtab is None:
        return Symbols(elf.path, [], 0)
    try:
        fh = open_binary(elf.path)
    except OSError as exc:
        return _unreadable(elf.path, str(exc))
    with fh:
        try:
            size = os.fstat(fh.fileno()).st_size
        except OSError as exc:
            return _unreadable(elf.path, str(exc))
        if size == 0:
            return _unreadable(elf.path, "empty file")
        return _guarded_symbols(elf, _FileImage(fh, size))


def symbols_from_bytes(elf: ElfFile, data: bytes) -> Symbols | Unreadable:
    """Like :func:`read_symbols` for the bytes ``elf`` was parsed from (used by the fuzz job)."""
    if elf.tables.symtab is None or elf.tables.strtab is None:
        return Symbols(elf.path, [], 0)
    return _guarded_symbols(elf, _Image(data, len(data)))


def _guarded_symbols(elf: ElfFile, image: _Image | _FileImage) -> Symbols | Unreadable:
    try:
        return _read_symbols(elf, image)
    except ElfError as exc:
        return _unreadable(elf.path, str(exc))
    except OSError as exc:
        return _unreadable(elf.path, exc.strerror or str(exc))
    except (struct.error, IndexError, ValueError, OverflowError, UnicodeError, MemoryError) as exc:
        return _unreadable(elf.path, f"corrupt symbol table: {type(exc).__name__}: {exc}")


def _native_order_matches(little: bool) -> bool:
    return (array("H", b"\1\0")[0] == 1) == little


def _column(raw: bytes, typecode: str, start: int, step: int, little: bool) -> array:
    col = array(typecode, memoryview(raw).cast(typecode)[start::step].tobytes())
    if not _native_order_matches(little):
        col.byteswap()
    return col


def _read_symbols(elf: ElfFile, image: _Image | _FileImage) -> Symbols:
    """The undefined references. GNU-hash-sorted tables put every symbol that is not exported (undefined or
    local) below symoffset; when the rest holds no undefined symbol (a C-speed check of one column) only that
    head is searched for them."""
    t = elf.tables
    assert t.symtab is not None and t.strtab is not None
    n = t.nsyms
    raw = bytes(image.slice(t.symtab, n * t.syment, "dynamic symbol table"))
    if t.strtab < 0 or t.strsz < 0 or t.strtab + t.strsz > image.size:
        raise ElfError(f"truncated: the dynamic string table at offset {t.strtab} is past the end ({image.size})")
    # one copy of the string table serves the references' names here and every lookup after
    strings = bytes(image.slice(t.strtab, t.strsz, "dynamic string table"))
    little = elf.little_endian
    if elf.bits == 64:  # Elf64_Sym: name(I) info(B) other(B) shndx(H) value(Q) size(Q)
        names = _column(raw, "I", 0, 6, little)
        shndx = _column(raw, "H", 3, 12, little)
        info = memoryview(raw)[4::24]
    else:  # Elf32_Sym: name(I) value(I) size(I) info(B) other(B) shndx(H)
        names = _column(raw, "I", 0, 4, little)
        shndx = _column(raw, "H", 7, 8, little)
        info = memoryview(raw)[12::16]
    if n and _any_above(names, t.strsz):
        raise ElfError("a symbol name lies outside the string table")
    split = n
    if t.gnu_symoffset is not None and 0 < t.gnu_symoffset <= n and not _has_zero(shndx[t.gnu_symoffset :]):
        split = t.gnu_symoffset
    versym = None
    if t.versym is not None:
        versym = _column(bytes(image.slice(t.versym, 2 * n, "symbol versions")), "H", 0, 1, little)
    info_bytes = info.tobytes()
    refs = _undefined_refs(strings, names, shndx, info_bytes, versym, t.version_index, split)
    columns = (names, shndx, info_bytes, versym)
    return Symbols(elf.path, refs, n, _SymbolSource(image, t, elf.bits, little, columns, strings))


def _any_above(values: array, limit: int) -> bool:
    """``max(values) > limit`` for an array of 32-bit words, at C speed (``max`` makes an int of every word:
    2 ms for libtorch_cpu.so's 75,000 names): byte columns from the most significant down, the words still
    equal to ``limit`` so far kept as a bit mask (one byte per word) in an int."""
    if limit < 0:
        return len(values) > 0
    if limit >= 0xFFFFFFFF:
        return False
    raw = values.tobytes()
    order = (3, 2, 1, 0) if sys.byteorder == "little" else (0, 1, 2, 3)
    equal: int | None = None  # None: every word so far
    for k, byte in zip(order, limit.to_bytes(4, "big")):
        column = raw[k::4]
        above = column.translate(_byte_table(byte, True))
        if equal is None:
            if 1 in above:
                return True
            equal = int.from_bytes(column.translate(_byte_table(byte, False)), "little")
        else:
            if int.from_bytes(above, "little") & equal:
                return True
            equal &= int.from_bytes(column.translate(_byte_table(byte, False)), "little")
        if not equal:
            return False
    return False


@functools.lru_cache(maxsize=64)
def _byte_table(byte: int, above: bool) -> bytes:
    """A translate table: 1 for the bytes above ``byte`` (or equal to it), 0 for the others."""
    return bytes(int(c > byte) if above else int(c == byte) for c in range(256))


def _has_zero(values: array) -> bool:
    """``0 in values`` for an array of 16-bit words, at C speed: a word is 0 where both its bytes are."""
    raw = values.tobytes()
    if not raw:
        return False
    either = int.from_bytes(raw[0::2], "little") | int.from_bytes(raw[1::2], "little")
    return b"\0" in either.to_bytes(len(values), "little")


def _undefined_refs(
    strings: bytes,
    names: array,
    shndx: array,
    info: bytes,
    versym: array | None,
    version_index: tuple[tuple[int, str, str | None], ...],
    split: int,
) -> list[_Ref]:
    """(name, version, version file, weak) of the non-local undefined symbols 1..``split``, in table order,
    those with an empty name left out. Each column is a C-speed pass (``compress``, ``map``): a table of
    thousands of references (libtorch_python.so: 5,700) costs no Python step per field."""
    # only non-local symbols are visited: a table of null or local entries costs no loop
    nonlocal_marks = info[1:split].translate(_NONLOCAL)
    at = [i for i in compress(range(1, split), nonlocal_marks) if shndx[i] == SHN_UNDEF]
    starts = [names[i] for i in at]
    ends = list(map(strings.find, repeat(b"\0"), starts))
    if -1 in ends:
        raise ElfError(f"symbol {at[ends.index(-1)]} has an unterminated name")
    texts = list(map(strings.__getitem__, map(slice, starts, ends)))
    weak = [info[i] >> 4 == STB_WEAK for i in at]
    unversioned = (None, None)
    if versym is None:
        versions: Iterable[tuple[str | None, str | None]] = repeat(unversioned)
    else:
        index = {i: (name, file) for i, name, file in version_index}
        versions = [index.get(v, unversioned) if v > 1 else unversioned for v in [versym[i] & 0x7FFF for i in at]]
    return [(text, v[0], v[1], w) for text, v, w in zip(texts, versions, weak) if text]


def defined_names_exact(elf: ElfFile) -> frozenset[bytes]:
    """Every exported name, decoded one by one (slow on big files; for tests and small libraries)."""
    t = elf.tables
    if t.symtab is None or t.strtab is None:
        return frozenset()
    image, handle = _open(elf.path)
    try:
        raw = bytes(image.slice(t.symtab, t.nsyms * t.syment, "dynamic symbol table"))
        strings = bytes(image.slice(t.strtab, t.strsz, "dynamic string table"))
    finally:
        _close(handle)
    out = set()
    step = t.syment
    e = "<" if elf.little_endian else ">"
    unpack = struct.Struct(e + ("IBBHQQ" if elf.bits == 64 else "IIIBBH")).unpack_from
    for i in range(1, t.nsyms):
        fields = unpack(raw, i * step)
        if elf.bits == 64:
            st_name, st_info, st_shndx = fields[0], fields[1], fields[3]
        else:
            st_name, st_info, st_shndx = fields[0], fields[3], fields[5]
        if st_shndx == SHN_UNDEF or st_info >> 4 == STB_LOCAL:
            continue
        end = strings.find(b"\0", st_name)
        if end > st_name:
            out.add(strings[st_name:end])
    return frozenset(out)


__all__ = [
    "ElfFile",
    "SymbolRef",
    "Symbols",
    "Unreadable",
    "VersionNeed",
    "defined_names_exact",
    "gnu_hash",
    "parse_bytes",
    "read_elf",
    "read_symbols",
    "symbols_from_bytes",
]
