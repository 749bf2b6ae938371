"""The user's cache folder for results this tool can reuse between runs (never inside the env examined).

``CONDA_TORCHCHECK_NO_CACHE=1`` turns every cache off. Each cache keys its entries by what the result was computed
from (size, modification and change times, inode of each file read), so a file that changed is read again.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_folder() -> Path | None:
    """``%LOCALAPPDATA%`` on Windows, ``$XDG_CACHE_HOME`` or ``~/.cache`` elsewhere, under ``conda-torchcheck``;
    None when caching is turned off or no home can be found."""
    if os.environ.get("CONDA_TORCHCHECK_NO_CACHE"):
        return None
    base = os.environ.get("LOCALAPPDATA") if os.name == "nt" else os.environ.get("XDG_CACHE_HOME")
    try:
        root = Path(base) if base else Path.home() / ".cache"
    except (RuntimeError, KeyError):  # no home directory
        return None
    return root / "conda-torchcheck"


def file_stamp(path: str) -> list[int] | None:
    """What a cached result of reading ``path`` is valid for: a rewrite, a copy over it, a touch or a chmod
    changes one of these (the change time cannot be set back by the user). None when it cannot be stat'ed."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def write_atomically(target: Path, text: str) -> None:
    """Write ``text`` to ``target`` through a temporary file in its folder; a read-only or full disk is ignored
    (the result is computed again next time)."""
    import tempfile

    try:
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        pass
