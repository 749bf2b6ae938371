"""The package's one version parser: every version the checks compare (torch, CUDA, drivers, DLL file
versions, Windows releases, conda builds) is read here.

- ``parse_version``: a PEP 440 ``Version``, lenient with conda's odd spellings (``2024.1.0_1``);
- ``release_key``: the leading dotted numbers, for ordering table keys (``2.6.0.dev20241112`` -> (2, 6, 0));
- ``numbers``: every digit run, for file and OS versions (``14.40.33810.0``, ``10.0.22621``);
- ``minor_of`` / ``base_version`` / ``cuda_tag_version``: the pieces the tables are keyed by.
"""

from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version

_DIGITS = re.compile(r"\d+")


def parse_version(text: str | None) -> Version | None:
    if not text:
        return None
    try:
        return Version(text)
    except InvalidVersion:
        # conda versions like 2.5.1.post0 or 1!2.0 parse; odd ones (2024.1.0_1) get their numeric head
        head = []
        for part in text.replace("_", ".").split("."):
            if part.isdigit():
                head.append(part)
            else:
                break
        try:
            return Version(".".join(head)) if head else None
        except InvalidVersion:
            return None


def pep440(text: str) -> Version | None:
    """``text`` as a PEP 440 version, None if it is not one (no fallback: for what pip itself compares)."""
    try:
        return Version(text)
    except InvalidVersion:
        return None


def release_key(version: str) -> tuple[int, ...]:
    """The leading all-digit dotted parts, the local part dropped: ``2.6.0.dev20241112`` -> (2, 6, 0),
    ``0.1.6.post22`` -> (0, 1, 6), ``2.5.1+cu121`` -> (2, 5, 1), ``1.10`` -> (1, 10)."""
    out = []
    for part in version.split("+", 1)[0].split("."):
        if not part.isdigit():
            break
        out.append(int(part))
    return tuple(out)


def numbers(text: str | None) -> tuple[int, ...]:
    """Every digit run in order: a file version ``14.40.33810.0`` -> (14, 40, 33810, 0); () for none."""
    return tuple(int(p) for p in _DIGITS.findall(text)) if text else ()


def base_version(version: str) -> str:
    """Without the local part: ``2.5.1+cu121`` -> ``2.5.1``."""
    return version.strip().split("+", 1)[0]


def minor_of(version: str | None) -> str | None:
    v = parse_version(version)
    return f"{v.major}.{v.minor}" if v else None


def cuda_tag_version(tag: str) -> str:
    """A download.pytorch.org CUDA tag's version: ``cu118`` -> ``11.8``, ``cu132`` -> ``13.2``."""
    digits = tag[2:]
    return f"{digits[:-1]}.{digits[-1]}"
