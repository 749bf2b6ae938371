"""Data files parsed once: the parsed value kept as marshal where Python keeps the package's bytecode.

The knowledge tables and the message catalogs are TOML files shipped in the package; parsing them (and, for the
tables, importing tomllib) is a measurable part of a short run. :func:`read_parsed` keeps the parsed value beside
the bytecode (``__pycache__``, or under ``sys.pycache_prefix``), written the way bytecode is (not under
``-B``/PYTHONDONTWRITEBYTECODE; a folder that cannot be written is no error), holding the file's size and mtime as
a .pyc holds its source's, and used only while they match. A copy that is stale, damaged, or of a value marshal
cannot hold (a TOML date) is never used.
"""

from __future__ import annotations

import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def read_parsed(path: str | os.PathLike[str], parse: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    """``parse(path)``, through the marshal copy of its last result while ``path`` is unchanged."""
    path = os.fspath(path)
    st = os.stat(path)
    key = (st.st_size, st.st_mtime_ns)
    cache = cache_path(path)
    if cache is not None:
        try:
            with open(cache, "rb") as fh:
                stored, data = marshal.load(fh)
            if stored == key and isinstance(data, dict):
                return data
        except Exception:  # absent, unreadable, cut short or from another layout: parse the file
            pass
    data = parse(path)
    if cache is not None and not sys.dont_write_bytecode:
        _write(cache, key, data)
    return data


def cache_path(path: str | os.PathLike[str]) -> str | None:
    """Where the parsed copy of ``path`` lives: beside the package's bytecode (importlib's rule for a .pyc)."""
    tag = sys.implementation.cache_tag
    if tag is None:
        return None
    folder, name = os.path.split(os.path.abspath(path))
    name = f"{name}.{tag}.marshal"
    if sys.pycache_prefix is not None:
        return os.path.join(sys.pycache_prefix, os.path.splitdrive(folder)[1].lstrip("\\/"), name)
    return os.path.join(folder, "__pycache__", name)


def _write(cache: str, key: tuple[int, int], data: dict[str, Any]) -> None:
    try:
        blob = marshal.dumps((key, data))
    except ValueError:  # a value marshal cannot hold: parsed each time
        return
    tmp = f"{cache}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        with open(tmp, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, cache)
    except OSError:  # a read-only install: parsed each time
        try:
            os.unlink(tmp)
        except OSError:
            pass
