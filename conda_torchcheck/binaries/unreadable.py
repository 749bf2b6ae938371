"""The one value every binary reader returns for a file it cannot read (ELF, PE, Mach-O alike)."""

from __future__ import annotations

from conda_torchcheck.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


class Unreadable(Record):
    """A file that is not a readable ``format`` image (``"ELF"``, ``"PE"``, ``"Mach-O"``): ``reason`` is a short
    technical phrase for the report (TC903). Falsy, so that ``if not info:`` reads "could not be read"."""

    __slots__ = ("path", "reason", "format")

    def __init__(self, path: Path, reason: str, format: str) -> None:
        self.path = path
        self.reason = reason
        self.format = format

    def __bool__(self) -> bool:
        return False


__all__ = ["Unreadable"]
