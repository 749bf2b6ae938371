"""Read only what the Windows loader model needs from a PE file: machine, imports, exports, file version.

torch_cpu.dll is 130-310 MB; a full ``pefile.PE()`` parse of it costs 13 s and 600+ MB, and pefile's default
``MAX_IMPORT_SYMBOLS`` (8192) silently drops most of torch_python.dll's import descriptors. This reader maps the
file and reads the headers, the section table, the import and delay-import tables, the export table and the
fixed version info directly, touching only their pages: ~0.1 ms per DLL against ~1.3 ms for pefile's
``fast_load`` header parse alone (the check reads 20-30 DLLs per run). tests/binaries/test_pe.py cross-checks
every header field and import list against pefile (``parse_data_directories(..., import_dllnames_only=True)``)
on the generated fixtures and real torch / MSVC / Intel DLLs.

Exports are looked up one name at a time, as the Windows loader does (the import's hint, then a binary search of
the sorted name pointer table): a DLL exporting 100,000 names costs a few reads per name asked.

Every table walk is bounded by the file size (thunk arrays shared by several import descriptors are read once;
overlapping ones cannot claim more entries than the file has room for), so a truncated, corrupt or hostile
file yields an :class:`Unreadable` value quickly; no exception escapes :func:`read_pe` / :func:`read_exports`
(tests/binaries/fuzz_pe.py checks 12,000 mutated headers, tests/binaries/test_pe_crafted.py crafted tables).
"""

from __future__ import annotations

import mmap
import os
import struct
import sys
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from conda_torchcheck.binaries.headers import PE_MACHINES
from conda_torchcheck.binaries.unreadable import Unreadable
from conda_torchcheck.inventory.fs import open_binary

DIR_EXPORT = 0
DIR_IMPORT = 1
DIR_RESOURCE = 2
DIR_DELAY_IMPORT = 13

_IMAGE_FILE_DLL = 0x2000
# hard caps well above anything real (torch_python.dll imports ~25k symbols, torch_cpu.dll exports ~120k)
MAX_DESCRIPTORS = 4096
MAX_SYMBOLS_PER_DLL = 1_000_000
MAX_EXPORTS = 4_000_000
MAX_NAME = 4096
MAX_SECTIONS = 0x800  # as pefile; Windows itself loads at most 96
_VERSION_KEY = "VS_VERSION_INFO".encode("utf-16-le")
_FIXED_SIGNATURE = b"\xbd\x04\xef\xfe"


@dataclass(frozen=True)
class ImportedSymbol:
    """One imported function: by ``name`` (with the linker's ``hint``) or by ``ordinal``."""

    name: str | None
    ordinal: int | None = None
    hint: int | None = None

    def __str__(self) -> str:
        return self.name if self.name is not None else f"#{self.ordinal}"


@dataclass(frozen=True)
class ImportedDll:
    name: str  # as written in the import table (case as the linker wrote it)
    delay: bool = False
    #: None when symbols were not asked for
    symbols: tuple[ImportedSymbol, ...] | None = None


@dataclass(frozen=True)
class PEInfo:
    path: Path
    arch: str  # x86_64, x86, arm64, arm64ec, arm, or 0x.... for an unknown machine
    machine: int
    bits: int
    is_dll: bool
    linker_version: tuple[int, int]
    imports: tuple[ImportedDll, ...]  # normal imports first, then delay-load imports
    file_version: str | None
    size: int

    @property
    def normal_imports(self) -> tuple[ImportedDll, ...]:
        return tuple(i for i in self.imports if not i.delay)

    @property
    def delay_imports(self) -> tuple[ImportedDll, ...]:
        return tuple(i for i in self.imports if i.delay)

    def imported(self, dll: str) -> ImportedDll | None:
        wanted = dll.lower()
        for entry in self.imports:
            if entry.name.lower() == wanted:
                return entry
        return None


class Exports:
    """The export table: looked up one name at a time as the Windows loader does (the import's hint, then a
    binary search of the sorted name pointer table), so a DLL exporting 100,000 names costs a few reads per
    name asked; the whole lists (``names``, ``forwarders``, ``ordinals``) are decoded only when asked for.
    Names are read from the file when a lookup needs them (and kept), never through a mapping held for the
    value's life: a file truncated in the meantime is a failed read, not a fault."""

    __slots__ = ("dll_name", "ordinal_base", "count", "_file", "_range", "_name_rvas", "_name_ordinals",
                 "_functions_rva", "_functions", "_names", "_forwarders", "_ordinals", "_names_cache")  # fmt: skip

    def __init__(
        self,
        dll_name: str | None,
        ordinal_base: int = 1,
        count: int = 0,
        file: _FileReads | None = None,
        export_range: tuple[int, int] = (0, 0),
        name_rvas: array | None = None,
        name_ordinals: array | None = None,
        functions_rva: int = 0,
    ) -> None:
        self.dll_name = dll_name
        self.ordinal_base = ordinal_base
        self.count = count  # NumberOfFunctions: ordinals base .. base+count-1
        self._file = file
        self._range = export_range  # RVAs of the export directory: a function RVA inside it is a forwarder
        self._name_rvas = name_rvas if name_rvas is not None else array("I")
        self._name_ordinals = name_ordinals if name_ordinals is not None else array("H")
        self._functions_rva = functions_rva
        self._functions: array | None = None
        self._names: frozenset[str] | None = None
        self._forwarders: dict[str, str] | None = None
        self._ordinals: frozenset[int] | None = None
        self._names_cache: dict[int, bytes] = {}

    def __repr__(self) -> str:
        return f"Exports({self.dll_name!r}, {len(self._name_rvas)} names, {self.count} functions)"

    # ---- one name at a time
    def _name_at(self, k: int) -> bytes:
        rva = self._name_rvas[k]
        name = self._names_cache.get(rva)
        if name is None:
            assert self._file is not None
            name = self._names_cache[rva] = self._file.cstring_bytes(rva)
        return name

    def _index_of(self, name: str, hint: int | None = None) -> int | None:
        """Position of ``name`` in the name pointer table: the hint first, then a binary search."""
        n = len(self._name_rvas)
        if not n:
            return None
        wanted = name.encode("latin-1", "replace")
        try:
            if hint is not None and 0 <= hint < n and self._name_at(hint) == wanted:
                return hint
            lo, hi = 0, n
            while lo < hi:
                mid = (lo + hi) // 2
                if self._name_at(mid) < wanted:
                    lo = mid + 1
                else:
                    hi = mid
            return lo if lo < n and self._name_at(lo) == wanted else None
        except _Corrupt:
            return None

    def _function(self, index: int) -> int:
        functions = self._load_functions()
        return functions[index] if 0 <= index < len(functions) else 0

    def _load_functions(self) -> array:
        if self._functions is None:
            self._functions = array("I")
            if self.count and self._file is not None:
                try:
                    self._functions = _u32_array(self._file.read(self._functions_rva, 4 * self.count))
                except _Corrupt:
                    pass
        return self._functions

    def has(self, symbol: ImportedSymbol) -> bool:
        if symbol.name is not None:
            return self._index_of(symbol.name, symbol.hint) is not None
        if symbol.ordinal is None:
            return False
        return self._function(symbol.ordinal - self.ordinal_base) != 0

    def forwarder(self, symbol: ImportedSymbol) -> str | None:
        if symbol.name is not None:
            k = self._index_of(symbol.name, symbol.hint)
            if k is None:
                return None
            index = self._name_ordinals[k] if k < len(self._name_ordinals) else -1
        elif symbol.ordinal is not None:
            index = symbol.ordinal - self.ordinal_base
        else:
            return None
        target = self._function(index)
        start, end = self._range
        if not start <= target < end or self._file is None:
            return None
        try:
            return self._file.cstring_bytes(target).decode("latin-1")
        except _Corrupt:
            return None

    # ---- the whole lists (tests, reports)
    @property
    def has_forwarders(self) -> bool:
        start, end = self._range
        return any(start <= f < end for f in self._load_functions())

    @property
    def names(self) -> frozenset[str]:
        if self._names is None:
            names = []
            for k in range(len(self._name_rvas)):
                try:
                    names.append(self._name_at(k).decode("latin-1"))
                except _Corrupt:
                    continue
            self._names = frozenset(names)
        return self._names

    @property
    def ordinals(self) -> frozenset[int]:
        """Ordinals whose address-table entry is not empty (only these resolve)."""
        if self._ordinals is None:
            self._ordinals = frozenset(self.ordinal_base + i for i, f in enumerate(self._load_functions()) if f)
        return self._ordinals

    @property
    def forwarders(self) -> dict[str, str]:
        """``name`` or ``#ordinal`` -> ``DLL.symbol`` for every forwarded export."""
        if self._forwarders is None:
            forwarders: dict[str, str] = {}
            start, end = self._range
            functions = self._load_functions()
            forwarded = {i for i, f in enumerate(functions) if start <= f < end}
            if forwarded and self._file is not None:
                named: dict[int, str] = {}
                for k, index in enumerate(self._name_ordinals):
                    if index in forwarded and index not in named:
                        try:
                            named[index] = self._name_at(k).decode("latin-1")
                        except _Corrupt:
                            continue
                for index in sorted(forwarded):
                    try:
                        forwarders[named.get(index, f"#{self.ordinal_base + index}")] = self._file.cstring_bytes(
                            functions[index]
                        ).decode("latin-1")
                    except _Corrupt:
                        continue
            self._forwarders = forwarders
        return self._forwarders


def _u32_array(raw: bytes) -> array:
    out = array("I", raw)
    if sys.byteorder != "little":
        out.byteswap()
    return out


def _u16_array(raw: bytes) -> array:
    out = array("H", raw)
    if sys.byteorder != "little":
        out.byteswap()
    return out


def _unreadable(path: Path, reason: str) -> Unreadable:
    return Unreadable(path, reason, "PE")


class _Corrupt(Exception):
    pass


def is_pe(path: Path) -> bool:
    try:
        with open_binary(path) as fh:
            return fh.read(2) == b"MZ"
    except OSError:
        return False


class _Image:
    """The headers and the section mapping of a memory-mapped PE file, with bounded readers.

    The header layout is the PE/COFF specification's; section addresses are adjusted the way the loader (and
    pefile) do: raw pointers rounded down to 512 bytes, virtual addresses to the section alignment.
    """

    def __init__(self, data, size: int) -> None:
        self.data = data
        self.size = size
        #: import thunks still to read: every real thunk takes its own bytes of the file, so the arrays of all
        #: descriptors together hold at most size/4 entries; overlapping arrays (a crafted file pointing every
        #: descriptor into one huge array) run out of it instead of costing descriptors x entries
        self.thunk_budget = size // 4
        #: imported symbols already read, by thunk-array RVA and by hint/name RVA (arrays and names may be shared)
        self.symbol_tables: dict[tuple[int, bool], tuple[ImportedSymbol, ...]] = {}
        self.named: dict[int, ImportedSymbol] = {}
        (pe,) = struct.unpack_from("<I", data, 0x3C)
        if pe + 24 > size or data[pe : pe + 4] != b"PE\0\0":
            raise _Corrupt(f"no PE header at byte {pe} (a DOS program or a damaged file)")
        (self.machine, n_sections, _stamp, _symbols, _n_symbols, opt_size, self.characteristics) = struct.unpack_from(
            "<HHIIIHH", data, pe + 4
        )
        opt = pe + 24
        if opt + 2 > size:
            raise _Corrupt("truncated: no optional header")
        (magic,) = struct.unpack_from("<H", data, opt)
        if magic == 0x20B:
            self.bits, dirs_at, count_at = 64, opt + 112, opt + 108
        elif magic == 0x10B:
            self.bits, dirs_at, count_at = 32, opt + 96, opt + 92
        else:
            raise _Corrupt(f"unknown optional header magic 0x{magic:x}")
        if count_at + 4 > size or opt_size < count_at + 4 - opt:
            raise _Corrupt("truncated optional header")
        self.linker_version = (data[opt + 2], data[opt + 3])
        if self.bits == 64:
            (self.image_base,) = struct.unpack_from("<Q", data, opt + 24)
        else:
            (self.image_base,) = struct.unpack_from("<I", data, opt + 28)
        section_alignment, file_alignment = struct.unpack_from("<II", data, opt + 32)
        (headers,) = struct.unpack_from("<I", data, opt + 60)
        self.headers_size = min(headers, size)
        (n_dirs,) = struct.unpack_from("<I", data, count_at)
        n_dirs = min(n_dirs, 16, max(0, (opt + opt_size - dirs_at) // 8))
        self.dirs = [
            struct.unpack_from("<II", data, dirs_at + 8 * i) for i in range(n_dirs) if dirs_at + 8 * i + 8 <= size
        ]
        if n_sections > MAX_SECTIONS:
            raise _Corrupt(f"{n_sections} sections: not a loadable image")
        table = opt + opt_size
        if table + 40 * n_sections > size:
            raise _Corrupt("truncated: the section table lies past the end of the file")
        if section_alignment < 0x1000:  # small alignment: the loader maps the file as is
            section_alignment = file_alignment
        self.sections: list[tuple[int, int, int, int]] = []  # (rva start, rva end, file offset, raw size)
        for i in range(n_sections):
            vsize, va, raw_size, raw = struct.unpack_from("<IIII", data, table + 40 * i + 8)
            if file_alignment >= 0x200:
                raw = (raw // 0x200) * 0x200
            if section_alignment and va % section_alignment:
                va = section_alignment * (va // section_alignment)
            self.sections.append((va, va + max(raw_size, vsize), raw, raw_size))

    def check_truncated(self) -> None:
        for _va, _end, raw, raw_size in self.sections:
            if raw_size and raw < self.size < raw + raw_size:
                raise _Corrupt(f"truncated: {self.size} bytes on disk, the section table needs {raw + raw_size}")
            if raw_size and raw >= self.size:
                raise _Corrupt(f"truncated: {self.size} bytes on disk, a section starts at byte {raw}")

    def span(self, rva: int) -> tuple[int, int] | None:
        """(file offset, bytes available in the file from there within the section) for ``rva``."""
        for va, end, raw, raw_size in self.sections:
            if va <= rva < end:
                inside = rva - va
                if inside >= raw_size:
                    return None  # zero-filled virtual tail: nothing in the file
                offset = raw + inside
                return offset, min(raw_size - inside, self.size - offset)
        if 0 <= rva < self.headers_size:
            return rva, self.headers_size - rva
        return None

    def read(self, rva: int, length: int) -> bytes:
        found = self.span(rva)
        if found is None or found[1] < length:
            raise _Corrupt(f"table at RVA 0x{rva:x} lies outside the file")
        offset = found[0]
        return bytes(self.data[offset : offset + length])

    def cstring(self, rva: int) -> str:
        return self.cstring_bytes(rva).decode("latin-1")

    def cstring_bytes(self, rva: int) -> bytes:
        found = self.span(rva)
        if found is None:
            raise _Corrupt(f"name at RVA 0x{rva:x} lies outside the file")
        offset, available = found
        end = self.data.find(b"\0", offset, offset + min(available, MAX_NAME))
        if end < 0:
            raise _Corrupt(f"unterminated name at RVA 0x{rva:x}")
        return bytes(self.data[offset:end])

    def directory(self, index: int) -> tuple[int, int]:
        return self.dirs[index] if index < len(self.dirs) else (0, 0)

    def thunks(self, rva: int) -> list[int]:
        """The zero-terminated array of pointer-sized entries at ``rva``."""
        found = self.span(rva)
        if found is None:
            raise _Corrupt(f"import thunks at RVA 0x{rva:x} lie outside the file")
        offset, available = found
        width = 8 if self.bits == 64 else 4
        fmt = "<Q" if width == 8 else "<I"
        out: list[int] = []
        limit = min(available // width, MAX_SYMBOLS_PER_DLL, self.thunk_budget)
        block = 512  # read in small blocks: a descriptor rarely has more than a few hundred entries
        for start in range(0, limit, block):
            count = min(block, limit - start)
            chunk = bytes(self.data[offset + start * width : offset + (start + count) * width])
            for (value,) in struct.iter_unpack(fmt, chunk):
                if value == 0:
                    self.thunk_budget -= len(out) + 1
                    return out
                out.append(value)
        if limit == self.thunk_budget:
            raise _Corrupt("the import thunk arrays hold more entries than the file has room for (they overlap)")
        raise _Corrupt(f"import thunks at RVA 0x{rva:x} are not terminated")


class _FileReads:
    """Reads of one PE file by RVA with ordinary file reads (the section table taken from its :class:`_Image`),
    for a value that outlives the mapping the headers were read through."""

    __slots__ = ("path", "sections", "headers_size", "size")

    def __init__(self, path: Path, img: _Image) -> None:
        self.path = path
        self.sections = img.sections
        self.headers_size = img.headers_size
        self.size = img.size

    span = _Image.span

    def _pread(self, offset: int, length: int) -> bytes:
        try:
            with open(self.path, "rb") as fh:
                fh.seek(offset)
                return fh.read(length)
        except OSError as exc:
            raise _Corrupt(f"cannot read: {exc.strerror or exc}") from exc

    def read(self, rva: int, length: int) -> bytes:
        found = self.span(rva)
        if found is None or found[1] < length:
            raise _Corrupt(f"table at RVA 0x{rva:x} lies outside the file")
        data = self._pread(found[0], length)
        if len(data) < length:
            raise _Corrupt(f"truncated: table at RVA 0x{rva:x}")
        return data

    def cstring_bytes(self, rva: int) -> bytes:
        found = self.span(rva)
        if found is None:
            raise _Corrupt(f"name at RVA 0x{rva:x} lies outside the file")
        offset, available = found
        data = self._pread(offset, min(available, MAX_NAME))
        end = data.find(b"\0")
        if end < 0:
            raise _Corrupt(f"unterminated name at RVA 0x{rva:x}")
        return data[:end]


def _open(path: Path) -> _Image:
    try:
        size = os.stat(path).st_size
    except OSError as exc:
        raise _Corrupt(f"cannot read: {exc.strerror or exc}") from exc
    if size < 64:
        raise _Corrupt(f"{size} bytes: too small for a PE image")
    try:
        with open_binary(path) as fh:
            head = fh.read(64)
            if head[:2] != b"MZ":
                raise _Corrupt("not a PE file (no MZ header)")
            (pe_offset,) = struct.unpack_from("<I", head, 0x3C)
            if pe_offset + 24 > size:
                raise _Corrupt(f"truncated: the PE header would start at byte {pe_offset} of {size}")
            mapping = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError) as exc:
        raise _Corrupt(f"cannot read: {getattr(exc, 'strerror', None) or exc}") from exc
    try:
        return _Image(mapping, size)
    except BaseException:
        mapping.close()
        raise


def _close(img: _Image) -> None:
    try:
        img.data.close()
    except (BufferError, ValueError):
        pass  # a view is still alive; the mapping goes away with it


def _symbols(img: _Image, table_rva: int, delay_va_based: bool = False) -> tuple[ImportedSymbol, ...]:
    """The symbols of one thunk array, read once per file however many descriptors share it."""
    key = (table_rva, delay_va_based)
    cached = img.symbol_tables.get(key)
    if cached is not None:
        return cached
    ordinal_flag = 1 << (img.bits - 1)
    named = img.named
    out = []
    for value in img.thunks(table_rva):
        if value & ordinal_flag:
            out.append(ImportedSymbol(None, ordinal=value & 0xFFFF))
            continue
        rva = value - img.image_base if delay_va_based else value
        if rva > 0xFFFFFFFF or rva < 0:
            raise _Corrupt(f"import name pointer 0x{value:x} is not an RVA")
        symbol = named.get(rva)
        if symbol is None:
            raw = img.read(rva, 2)
            (hint,) = struct.unpack("<H", raw)
            symbol = named[rva] = ImportedSymbol(img.cstring(rva + 2), hint=hint)
        out.append(symbol)
    img.symbol_tables[key] = result = tuple(out)
    return result


def _imports(img: _Image, want_symbols: Callable[[str], bool]) -> list[ImportedDll]:
    out: list[ImportedDll] = []
    rva, size = img.directory(DIR_IMPORT)
    if rva and size:
        for i in range(MAX_DESCRIPTORS):
            desc = img.read(rva + 20 * i, 20)
            original_first, _stamp, _chain, name_rva, first = struct.unpack("<IIIII", desc)
            if name_rva == 0 and first == 0 and original_first == 0:
                break
            if name_rva == 0:
                break  # the loader stops at a descriptor without a name
            name = img.cstring(name_rva)
            symbols = None
            if want_symbols(name):
                symbols = _symbols(img, original_first or first)
            out.append(ImportedDll(name, False, symbols))
        else:
            raise _Corrupt("import directory has no terminating entry")
    rva, size = img.directory(DIR_DELAY_IMPORT)
    if rva and size:
        for i in range(MAX_DESCRIPTORS):
            desc = img.read(rva + 32 * i, 32)
            attrs, name_rva, _hmod, _iat, int_rva, _bound, _unload, _stamp = struct.unpack("<8I", desc)
            if name_rva == 0:
                break
            va_based = not (attrs & 1)  # Visual C++ 6 style: virtual addresses instead of RVAs
            if va_based:
                name_rva -= img.image_base
                int_rva -= img.image_base
            if name_rva < 0 or name_rva > 0xFFFFFFFF:
                raise _Corrupt("delay-import descriptor points outside the image")
            name = img.cstring(name_rva)
            symbols = None
            if want_symbols(name) and int_rva > 0:
                symbols = _symbols(img, int_rva, va_based)
            out.append(ImportedDll(name, True, symbols))
        else:
            raise _Corrupt("delay-import directory has no terminating entry")
    return out


def _file_version(img: _Image) -> str | None:
    rva, size = img.directory(DIR_RESOURCE)
    if not rva or not size:
        return None
    found = img.span(rva)
    if found is None:
        return None
    offset, available = found
    end = offset + min(available, 64 << 20)
    key = img.data.find(_VERSION_KEY, offset, end)
    if key < 0:
        return None
    sig = img.data.find(_FIXED_SIGNATURE, key, min(end, key + 96))
    if sig < 0 or sig + 24 > img.size:
        return None
    _sig, _struc, ms, ls = struct.unpack_from("<IIII", img.data, sig)
    return f"{ms >> 16}.{ms & 0xFFFF}.{ls >> 16}.{ls & 0xFFFF}"


def _never(_: str) -> bool:
    return False


def _always(_: str) -> bool:
    return True


def read_pe(
    path: Path | str, *, symbols: bool | Callable[[str], bool] = False, version: bool = True
) -> PEInfo | Unreadable:
    """Machine, imports (normal and delay-load) and FileVersion of ``path``.

    ``symbols``: also read the imported function names, for every DLL (True) or for the DLL names a
    predicate accepts (reading torch_python.dll's ~25k names costs tens of milliseconds).
    """
    path = Path(path)
    want = _always if symbols is True else (_never if symbols is False else symbols)
    img = None
    try:
        img = _open(path)
        img.check_truncated()
        machine = img.machine
        imports = _imports(img, want)
        file_version = _file_version(img) if version else None
        return PEInfo(
            path=path,
            arch=PE_MACHINES.get(machine, f"0x{machine:04x}"),
            machine=machine,
            bits=img.bits,
            is_dll=bool(img.characteristics & _IMAGE_FILE_DLL),
            linker_version=img.linker_version,
            imports=tuple(imports),
            file_version=file_version,
            size=img.size,
        )
    except _Corrupt as exc:
        return _unreadable(path, str(exc))
    except (MemoryError, RecursionError):
        return _unreadable(path, "too large or too deeply nested to read")
    except Exception as exc:  # hostile input must not escape as an exception
        return _unreadable(path, f"corrupt PE headers ({type(exc).__name__}: {exc})"[:300])
    finally:
        if img is not None:
            _close(img)


def read_exports(path: Path | str) -> Exports | Unreadable:
    """The export table of ``path`` (an empty table when it has none), for lookups one name at a time."""
    path = Path(path)
    img = None
    try:
        img = _open(path)
        img.check_truncated()
        rva, dir_size = img.directory(DIR_EXPORT)
        if not rva or not dir_size:
            return Exports(None)
        raw = img.read(rva, 40)
        (_c, _t, _maj, _min, name_rva, base, n_functions, n_names, functions_rva, names_rva, ordinals_rva) = (
            struct.unpack("<IIHHIIIIIII", raw)
        )
        if n_functions > MAX_EXPORTS or n_names > MAX_EXPORTS or n_names > n_functions + 1_000_000:
            raise _Corrupt("export table counts are implausible")
        dll_name = img.cstring(name_rva) if name_rva else None
        name_rvas = _u32_array(img.read(names_rva, 4 * n_names)) if n_names else array("I")
        name_ordinals = _u16_array(img.read(ordinals_rva, 2 * n_names)) if n_names else array("H")
        file = _FileReads(path, img)
        return Exports(
            dll_name, base, n_functions, file, (rva, rva + dir_size), name_rvas, name_ordinals, functions_rva
        )
    except _Corrupt as exc:
        return _unreadable(path, str(exc))
    except (MemoryError, RecursionError):
        return _unreadable(path, "too large or too deeply nested to read")
    except Exception as exc:
        return _unreadable(path, f"corrupt PE headers ({type(exc).__name__}: {exc})"[:300])
    finally:
        if img is not None:
            _close(img)
