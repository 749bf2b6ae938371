"""What ld.so on the machine knows before it looks at any library: ``/etc/ld.so.cache`` and the default dirs.

``/etc/ld.so.cache`` is written by ``ldconfig`` from ``/etc/ld.so.conf(.d)`` (for example
``/usr/local/cuda/lib64`` or ``/usr/lib/x86_64-linux-gnu/nvidia``); ld.so consults it after
LD_LIBRARY_PATH and RUNPATH, then tries the default system directories. Only the machine the env runs on
has the right cache, so it is read only for a live host; ``ldconfig -p`` is the fallback when the file's
format is not one we read.
"""

from __future__ import annotations

import os
import re
import struct
from itertools import repeat
from pathlib import Path

from conda_torchcheck.inventory import fs
from conda_torchcheck.records import Record

CACHE_FILE = Path("/etc/ld.so.cache")
_NEW_MAGIC = b"glibc-ld.so.cache1.1"
_OLD_MAGIC = b"ld.so-1.7.0"
_HWCAP_EXTENSION = 1 << 62

# ``_DL_CACHE_DEFAULT_ID`` per architecture (sysdeps/*/dl-cache.h): the flags value a cache entry must have
# for ld.so of that architecture to use it. x86_64: FLAG_X8664_LIB64 | FLAG_ELF_LIBC6.
CACHE_FLAGS = {
    "x86_64": 0x0303,
    "aarch64": 0x0A03,
    "ppc64": 0x0503,
    "s390x": 0x0403,
    "x86": 0x0003,
    "arm": 0x0903,  # hard-float (FLAG_ARM_LIBHF); soft-float entries are 0x0003
    "riscv": 0x1103,
}
# ldconfig -p spells the same flags in words
_LDCONFIG_WORDS = {
    "x86_64": "libc6,x86-64",
    "aarch64": "libc6,AArch64",
    "ppc64": "libc6,64bit",
    "s390x": "libc6,64bit",
    "x86": "libc6",
}
MULTIARCH = {
    "x86_64": "x86_64-linux-gnu",
    "aarch64": "aarch64-linux-gnu",
    "ppc64": "powerpc64le-linux-gnu",
    "s390x": "s390x-linux-gnu",
    "x86": "i386-linux-gnu",
    "arm": "arm-linux-gnueabihf",
    "riscv": "riscv64-linux-gnu",
}


class LdCache(Record):
    """soname -> path, for one architecture, in the order ld.so would pick."""

    __slots__ = ("source", "entries", "hwcaps_entries", "problem")

    def __init__(
        self,
        source: str,
        entries: dict[str, str] | None = None,
        hwcaps_entries: dict[str, tuple[tuple[str, str], ...]] | None = None,
        problem: str | None = None,
    ) -> None:
        self.source = source  # the file, or "ldconfig -p"
        self.entries: dict[str, str] = {} if entries is None else entries
        #: entries that live in a glibc-hwcaps subdirectory (preferred by ld.so when the CPU supports it)
        self.hwcaps_entries: dict[str, tuple[tuple[str, str], ...]] = {} if hwcaps_entries is None else hwcaps_entries
        self.problem = problem

    def lookup(self, name: str) -> str | None:
        return self.entries.get(name)

    def __len__(self) -> int:
        return len(self.entries)


def parse_cache(data: bytes, arch: str, source: str = str(CACHE_FILE)) -> LdCache:
    """Parse the bytes of an ld.so.cache file (new format, or old + new as glibc < 2.32 wrote it)."""
    wanted = CACHE_FLAGS.get(arch)
    start = 0
    if data.startswith(_OLD_MAGIC):
        (nlibs,) = struct.unpack_from("<I", data, len(_OLD_MAGIC) + 1)
        old_header = len(_OLD_MAGIC) + 1 + 4  # magic, padding to 4 bytes then nlibs (struct cache_file)
        old_header = (old_header + 3) & ~3
        start = old_header + nlibs * 12
        start = (start + 7) & ~7  # the new table is aligned after the old one
        if not data.startswith(_NEW_MAGIC, start):
            return LdCache(source, problem="old-format ld.so.cache without a new-format table")
    if not data.startswith(_NEW_MAGIC, start):
        return LdCache(source, problem="not an ld.so.cache file (unknown magic)")
    nlibs, _len_strings, _flags, ext_offset = struct.unpack_from("<IIB3xI12x", data, start + len(_NEW_MAGIC))
    base = start
    first = start + 48
    if first + nlibs * 24 > len(data):
        return LdCache(source, problem="truncated ld.so.cache")
    hwcap_names = _hwcap_names(data, base, ext_offset) if ext_offset else []

    rows = [
        (key, value, hwcap)
        for flags, key, value, _osversion, hwcap in struct.iter_unpack("<iIIIQ", data[first : first + nlibs * 24])
        if (wanted is None or flags == wanted) and (not hwcap or hwcap & _HWCAP_EXTENSION)
    ]  # legacy hwcap entries (tls, haswell, ...): ld.so >= 2.37 ignores them; the plain ones are preferred
    names = _strings(data, [base + key for key, _value, _hwcap in rows])
    paths = _strings(data, [base + value for _key, value, _hwcap in rows])
    entries: dict[str, str] = {}
    hwcaps: dict[str, list[tuple[str, str]]] = {}
    for name, path, (_key, _value, hwcap) in zip(names, paths, rows):
        if not name or not path:
            continue
        if hwcap:  # an entry of a glibc-hwcaps subdirectory
            index = hwcap & 0xFFFFFFFF
            sub = hwcap_names[index] if index < len(hwcap_names) else "?"
            hwcaps.setdefault(name, []).append((sub, path))
            continue
        entries.setdefault(name, path)
    return LdCache(source, entries, {k: tuple(v) for k, v in hwcaps.items()})


def _strings(data: bytes, positions: list[int]) -> list[str]:
    """The NUL-terminated strings at ``positions`` ("" for one outside ``data`` or without its NUL), each end
    found at C speed."""
    size = len(data)
    ends = list(map(data.find, repeat(b"\0"), positions))
    return [
        data[pos:end].decode("utf-8", "surrogateescape") if 0 <= pos < size and end >= 0 else ""
        for pos, end in zip(positions, ends)
    ]


def _hwcap_names(data: bytes, base: int, ext_offset: int) -> list[str]:
    """The glibc-hwcaps subdirectory names from the cache extension section (tag 1)."""
    pos = base + ext_offset
    try:
        magic, count = struct.unpack_from("<II", data, pos)
        if magic != 0xEAA42174:
            return []
        for i in range(min(count, 64)):
            tag, _flags, offset, size = struct.unpack_from("<IIII", data, pos + 8 + 16 * i)
            if tag == 1:  # cache_extension_tag_glibc_hwcaps: array of uint32 string offsets
                offsets = struct.unpack_from(f"<{size // 4}I", data, base + offset)
                names = []
                for o in offsets:
                    end = data.find(b"\0", base + o)
                    names.append(data[base + o : end].decode("utf-8", "replace"))
                return names
    except struct.error:
        return []
    return []


def parse_ldconfig_p(text: str, arch: str) -> LdCache:
    """``ldconfig -p`` output → cache (used when the cache file has a format we do not read)."""
    word = _LDCONFIG_WORDS.get(arch)
    entries: dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r"\s+(\S+)\s+\(([^)]*)\)\s+=>\s+(\S.*)$", line)
        if not m:
            continue
        flags = m.group(2).split(",")
        if word and ",".join(flags[:2]) != word and m.group(2) != word:
            continue
        if any(f.startswith("hwcap:") for f in flags):
            continue
        entries.setdefault(m.group(1), m.group(3).strip())
    return LdCache("ldconfig -p", entries)


def read_host_cache(arch: str, path: Path = CACHE_FILE) -> LdCache:
    try:
        data = fs.read_bytes(path)
    except OSError as exc:
        return _ldconfig_fallback(arch, f"{path}: {exc.strerror or exc}")
    try:
        cache = parse_cache(data, arch, str(path))
    except (struct.error, IndexError) as exc:
        return _ldconfig_fallback(arch, f"{path}: {exc}")
    if cache.problem:
        return _ldconfig_fallback(arch, cache.problem)
    return cache


def _ldconfig_fallback(arch: str, problem: str) -> LdCache:
    import subprocess  # only on this rare path: keeps the CLI's start-up lean

    for exe in ("/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"):
        try:
            out = subprocess.run([exe, "-p"], capture_output=True, text=True, timeout=10, check=False)
        except (OSError, subprocess.SubprocessError):
            continue
        if out.returncode == 0:
            return parse_ldconfig_p(out.stdout, arch)
    return LdCache(str(CACHE_FILE), problem=problem)


# --- default directories and dynamic string tokens --------------------------------------------------------


class SystemLayout(Record):
    """The directories ld.so searches last, and what ``$LIB`` / ``$PLATFORM`` expand to."""

    __slots__ = ("default_dirs", "lib_token", "platform_token", "hwcaps", "multiarch")

    def __init__(
        self,
        default_dirs: tuple[str, ...],
        lib_token: str,
        platform_token: str,
        hwcaps: tuple[str, ...] = (),
        multiarch: bool = False,
    ) -> None:
        self.default_dirs = default_dirs
        self.lib_token = lib_token
        self.platform_token = platform_token
        #: glibc-hwcaps subdirectories this CPU can use, best first (x86-64-v4 ... v2)
        self.hwcaps = hwcaps
        self.multiarch = multiarch


def system_layout(
    arch: str, bits: int, root: Path = Path("/"), cpu_flags: frozenset[str] | None = None
) -> SystemLayout:
    """Debian/Ubuntu (multiarch) vs the glibc default (RHEL, Fedora, SUSE, Arch): ``ld.so --help`` lists
    ``/lib/<triplet>, /usr/lib/<triplet>, /lib, /usr/lib`` on the first and ``/lib64, /usr/lib64`` on the
    second (64-bit)."""
    triplet = MULTIARCH.get(arch)
    platform = {"x86": "i686", "ppc64": "powerpc64le"}.get(arch, arch)
    if triplet and (fs.is_dir(root / "lib" / triplet) or fs.is_dir(root / "usr" / "lib" / triplet)):
        dirs = (f"/lib/{triplet}", f"/usr/lib/{triplet}", "/lib", "/usr/lib")
        lib = f"lib/{triplet}"
        multiarch = True
    elif bits == 64:
        dirs, lib, multiarch = ("/lib64", "/usr/lib64"), "lib64", False
    else:
        dirs, lib, multiarch = ("/lib", "/usr/lib"), "lib", False
    return SystemLayout(dirs, lib, platform, x86_hwcaps(cpu_flags) if arch == "x86_64" else (), multiarch)


_V2 = {"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"}
_V3 = _V2 | {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}
_V4 = _V3 | {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}


def x86_hwcaps(flags: frozenset[str] | None) -> tuple[str, ...]:
    """The glibc-hwcaps subdirectories searched on this CPU, best first."""
    if flags is None:
        flags = read_cpu_flags()
    out = []
    for name, needed in (("x86-64-v4", _V4), ("x86-64-v3", _V3), ("x86-64-v2", _V2)):
        if needed <= flags:
            out.append(name)
    return tuple(out)


def read_cpu_flags() -> frozenset[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def read_preload_file(path: Path = Path("/etc/ld.so.preload")) -> tuple[str, ...]:
    """``/etc/ld.so.preload``: libraries ld.so loads into every process (whitespace-separated)."""
    try:
        text = fs.read_text(path, fs.SMALL_LIMIT)
    except OSError:
        return ()
    return tuple(w for line in text.splitlines() for w in line.split("#", 1)[0].split())


def is_system_dir(directory: str, layout: SystemLayout) -> bool:
    norm = os.path.normpath(directory)
    return any(norm == os.path.normpath(d) for d in layout.default_dirs)
