"""File-system helpers that behave like Windows when examining a Windows env from a case-sensitive host."""

from __future__ import annotations

import functools
from pathlib import Path


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
    if exact.exists():
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
