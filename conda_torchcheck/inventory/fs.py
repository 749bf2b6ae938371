"""File-system helpers: the one bounded reader every text file of the target goes through, and lookups that
behave like Windows when examining a Windows env from a case-sensitive host.

The target is not trusted: a FIFO or a link to /dev/zero in place of a metadata file, a 4 GB sparse RECORD, a
folder the user cannot search, a 4,000-character path component. Reads here open regular files only (stat first,
then a non-blocking open, then fstat again, so a FIFO swapped in between cannot block), read at most a bound, and
report every refusal as an ``OSError`` whose ``strerror`` says why, so the callers' existing ``except OSError``
turns it into the same finding as any other unreadable file.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time the fast paths (tree FILE) must not pay
    from typing import BinaryIO

# The largest text file worth reading: torch's RECORD is ~2 MB, a conda-meta record of a big package ~10 MB.
TEXT_LIMIT = 64 << 20
# Small one-line files (INSTALLER, pyvenv.cfg, version.py, a .pth): far more than any real one holds.
SMALL_LIMIT = 4 << 20

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


class NotRegularFile(OSError):
    """The path is a FIFO, a device, a socket or a folder: never opened, since opening one can block."""

    def __init__(self, path: Path | str, mode: int) -> None:
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        super().__init__(errno.EINVAL, f"not a regular file ({kind})", str(path))


class FileTooLarge(OSError):
    """The file is past any sane size for what it should hold: not read at all."""

    def __init__(self, path: Path | str, size: int | None, limit: int) -> None:
        shown = f"{size / (1 << 20):,.0f} MiB" if size is not None else "more"
        super().__init__(errno.EFBIG, f"too large to be real ({shown}; at most {limit >> 20} MiB is read)", str(path))


def describe(exc: BaseException) -> str:
    """One line for an unreadable path: the OS's words (``Permission denied``) without the path repeated."""
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc) or type(exc).__name__


def _open_regular(path: Path | str) -> tuple[int, os.stat_result]:
    st = os.stat(path)  # follows links: a link to /dev/zero is judged by what it points at
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFile(path, st.st_mode)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    st = os.fstat(fd)  # swapped for a FIFO between the two calls: the non-blocking open returned at once
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise NotRegularFile(path, st.st_mode)
    return fd, st


def open_binary(path: Path | str) -> BinaryIO:
    """A regular file opened for reading (binary, seekable), never blocking on a FIFO or a device: for the
    readers that take what they need by offset rather than the whole file."""
    try:
        fd, _ = _open_regular(path)
    except ValueError as exc:  # embedded NUL byte
        raise OSError(errno.EINVAL, "the path holds a NUL byte", str(path)) from exc
    return os.fdopen(fd, "rb")


def read_bytes(path: Path | str, limit: int = TEXT_LIMIT) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; OSError (NotRegularFile, FileTooLarge, the OS's
    own) otherwise. A NUL byte in the path is an OSError too, not the ValueError ``os.stat`` raises."""
    try:
        fd, st = _open_regular(path)
    except ValueError as exc:  # embedded NUL byte
        raise OSError(errno.EINVAL, "the path holds a NUL byte", str(path)) from exc
    if st.st_size > limit:
        os.close(fd)
        raise FileTooLarge(path, st.st_size, limit)
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(limit + 1)  # a file still growing (or lying about its size) stops at the bound
    if len(data) > limit:
        raise FileTooLarge(path, None, limit)
    return data


def read_text(path: Path | str, limit: int = TEXT_LIMIT, *, errors: str = "replace") -> str:
    """``read_bytes`` decoded as UTF-8 with universal newlines, as ``Path.read_text`` gives it."""
    text = read_bytes(path, limit).decode("utf-8", errors=errors)
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def is_regular_file(path: Path | str) -> bool:
    """A regular file (links followed); False for anything else and for anything that cannot be looked at."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def is_dir(path: Path | str) -> bool:
    """``Path.is_dir`` without its exceptions (permission, name too long, NUL byte): False for all of them."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def exists(path: Path | str) -> bool:
    """``Path.exists`` without its exceptions (permission, name too long, NUL byte): False for all of them."""
    try:
        os.stat(path)
    except (OSError, ValueError):
        return False
    return True


@functools.lru_cache(maxsize=4096)
def listing(directory: Path) -> dict[str, Path]:
    """Lower-cased name → real path of the entries in ``directory`` (empty when unreadable)."""
    try:
        return {entry.name.lower(): entry for entry in directory.iterdir()}
    except OSError:
        return {}


def clear_cache() -> None:
    listing.cache_clear()


def find_child(directory: Path, name: str, *, case_insensitive: bool = True) -> Path | None:
    """``directory/name`` if it exists, matching the name case-insensitively when asked to."""
    exact = directory / name
    if exists(exact):
        return exact
    if not case_insensitive:
        return None
    return listing(directory).get(name.lower())


def find_path(base: Path, *parts: str, case_insensitive: bool = True) -> Path | None:
    """Walk ``parts`` below ``base`` case-insensitively; None when any step is missing."""
    current = base
    for part in parts:
        found = find_child(current, part, case_insensitive=case_insensitive)
        if found is None:
            return None
        current = found
    return current


def sha256_file(path: Path | str) -> str | None:
    """Hex sha256 of a file read in 1 MiB chunks (hashlib releases the GIL on them); None when unreadable."""
    import hashlib

    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except OSError:
        return None
    return h.hexdigest()


# Deeper than any real record, and shallow enough that the C scanner never nears Python's recursion limit.
JSON_MAX_DEPTH = 200
_NUMBER_DIGITS = 100  # a build number or a size holds a few digits; 5,000 would hit Python's int-string limit


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def _bounded_int(text: str) -> int:
    if len(text) > _NUMBER_DIGITS:
        raise ValueError(f"a number of {len(text):,} digits")
    return int(text)


def _bounded_float(text: str) -> float:
    if len(text) > _NUMBER_DIGITS:
        raise ValueError(f"a number of {len(text):,} digits")
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text[:20]} is out of range")
    return value


def _depth_exceeds(text: str, limit: int) -> bool:
    """Whether brackets outside strings nest deeper than ``limit`` (one linear pass, before the parser recurses)."""
    if text.count("[") + text.count("{") <= limit:
        return False
    import re

    depth = 0
    for token in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', text):
        char = token.group()
        if char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}":
            depth -= 1
    return False


def parse_json(text: str) -> object:
    """Strict JSON as conda and pip write it: ``ValueError`` (a ``JSONDecodeError`` for syntax) for what
    Python's json would otherwise accept or crash on: NaN/Infinity, numbers of thousands of digits, nesting
    deep enough to raise RecursionError."""
    import json

    if _depth_exceeds(text, JSON_MAX_DEPTH):
        raise ValueError(f"nested more than {JSON_MAX_DEPTH} levels deep")
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_int=_bounded_int, parse_float=_bounded_float)
    except RecursionError as exc:  # pragma: no cover - the depth pass above stops it first
        raise ValueError("nested too deep") from exc


def is_file(path: Path | str) -> bool:
    """``Path.is_file`` (a regular file, links followed) without its exceptions: False for all of them."""
    return is_regular_file(path)


def is_symlink(path: Path | str) -> bool:
    """``Path.is_symlink`` without its exceptions (permission, name too long, NUL byte)."""
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False
