"""Replace a file atomically, keeping a backup of what was there.

The new bytes go to a temporary file in the same folder (same filesystem, so the rename is atomic), are
flushed and fsynced, get the original file's permission bits, and replace the original with ``os.replace``.
The previous content is first saved the same way as ``FILE.bak``. A crash at any point leaves either the old
or the new file in place, never a half-written one. A symlink is followed: the file it points to is replaced
and the link stays.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from conda_torchcheck.errors import TorchCheckError
from conda_torchcheck.inventory.fs import read_bytes

BACKUP_SUFFIX = ".bak"
SPEC_LIMIT = 8 << 20  # as envspec.parse reads it


class WriteError(TorchCheckError):
    """The file could not be replaced; it is unchanged."""


def _fsync_dir(directory: Path) -> None:
    if os.name == "nt":  # directories cannot be opened for fsync on Windows
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def _terminate_cleanly():
    """SIGTERM raises SystemExit while a temporary file exists, so the cleanup below runs (the default action
    would end the process at once and leave ``.FILE.xxxx.tmp`` behind)."""
    import signal
    import threading

    if not hasattr(signal, "SIGTERM") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _write_beside(target: Path, data: bytes, mode: int | None) -> None:
    with _terminate_cleanly():
        _write_temp_then_replace(target, data, mode)


def _write_temp_then_replace(target: Path, data: bytes, mode: int | None) -> None:
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def replace_file(path: Path | str, data: bytes, *, expected: bytes | None = None, backup: bool = True) -> Path | None:
    """Write ``data`` to ``path`` atomically; return the backup's path (None when ``backup`` is False).

    ``expected``: the bytes the caller read; if the file changed since, nothing is written.
    """
    from conda_torchcheck.messages import translate

    target = Path(path).resolve()
    try:
        current = read_bytes(target, SPEC_LIMIT)
        mode = stat.S_IMODE(target.stat().st_mode)
    except OSError as exc:
        raise WriteError(
            translate("envspec.write.unreadable", path=str(path), detail=exc.strerror or str(exc))
        ) from None
    if expected is not None and current != expected:
        raise WriteError(translate("envspec.write.changed", path=str(path)))
    backup_path = target.with_name(target.name + BACKUP_SUFFIX) if backup else None
    try:
        if backup_path is not None:
            _write_beside(backup_path, current, mode)
        _write_beside(target, data, mode)
    except OSError as exc:
        raise WriteError(translate("envspec.write.failed", path=str(path), detail=exc.strerror or str(exc))) from None
    _fsync_dir(target.parent)
    return backup_path
