"""Cheap header sniffing (a few hundred bytes): file format, CPU architecture and word size.

Used by the inventory to learn the interpreter's architecture without running it, and by both loaders to
reject candidates of the wrong architecture before doing any real parsing.
"""

from __future__ import annotations

import struct

from conda_torchcheck.inventory import fs
from conda_torchcheck.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

# PE IMAGE_FILE_MACHINE_* values
PE_MACHINES = {
    0x014C: "x86",
    0x8664: "x86_64",
    0xAA64: "arm64",
    0x01C4: "arm",
    0xA641: "arm64ec",
}
# ELF e_machine values
ELF_MACHINES = {
    0x03: "x86",
    0x3E: "x86_64",
    0xB7: "aarch64",
    0x28: "arm",
    0x15: "ppc64",
    0xF3: "riscv",
    0x16: "s390x",
}


class BinaryHeader(Record):
    """What the first bytes of a file say: format, CPU architecture, word size."""

    __slots__ = ("format", "arch", "bits")

    def __init__(self, format: str, arch: str, bits: int) -> None:
        self.format = format  # "pe", "elf", "macho"
        self.arch = arch  # x86_64, x86, arm64 (PE) / aarch64 (ELF), ...
        self.bits = bits


def sniff(path: Path) -> BinaryHeader | None:
    """Return format and architecture, or None when the file is unreadable or not a known binary."""
    try:
        with fs.open_binary(path) as fh:
            head = fh.read(64)
            if head[:2] == b"MZ" and len(head) >= 64:
                (pe_offset,) = struct.unpack_from("<I", head, 0x3C)
                if pe_offset > 16 * 1024 * 1024:
                    return None
                fh.seek(pe_offset)
                pe = fh.read(26)
                if len(pe) < 26 or pe[:4] != b"PE\0\0":
                    return None
                (machine,) = struct.unpack_from("<H", pe, 4)
                (magic,) = struct.unpack_from("<H", pe, 24)
                bits = 64 if magic == 0x20B else 32
                return BinaryHeader("pe", PE_MACHINES.get(machine, f"0x{machine:04x}"), bits)
            if head[:4] == b"\x7fELF" and len(head) >= 20:
                bits = 64 if head[4] == 2 else 32
                endian = "<" if head[5] == 1 else ">"
                (machine,) = struct.unpack_from(endian + "H", head, 18)
                return BinaryHeader("elf", ELF_MACHINES.get(machine, f"0x{machine:x}"), bits)
            if head[:4] in (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe"):
                (cputype,) = struct.unpack_from("<I", head, 4)
                arch = {0x01000007: "x86_64", 0x0100000C: "arm64", 7: "x86"}.get(cputype, hex(cputype))
                return BinaryHeader("macho", arch, 64 if head[0] == 0xCF else 32)
            if head[:4] == b"\xca\xfe\xba\xbe":
                return BinaryHeader("macho", "universal", 64)
    except OSError:
        return None
    return None
