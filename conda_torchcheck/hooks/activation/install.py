"""Install, remove and report this tool's activation scripts in ``<prefix>/etc/conda/activate.d``.

Only files whose first line carries our marker are ever overwritten or deleted. ``remove`` also deletes the
folders ``install`` created (recorded in the scripts' header), when they are empty: nothing is left behind.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from conda_torchcheck.errors import TargetError
from conda_torchcheck.hooks.activation import render
from conda_torchcheck.hooks.activation.facts import ActivationFacts, facts_for
from conda_torchcheck.inventory import fs

ACTIVATE_D = ("etc", "conda", "activate.d")


def activate_dir(prefix: Path) -> Path:
    return prefix.joinpath(*ACTIVATE_D)


@dataclass(frozen=True)
class FileState:
    name: str
    #: current, outdated, missing, stray (ours but not needed for this env's OS), foreign (same name, not ours)
    state: str


@dataclass(frozen=True)
class HooksStatus:
    directory: Path
    files: tuple[FileState, ...]
    facts: ActivationFacts | None = None

    @property
    def installed_any(self) -> bool:
        return any(f.state in ("current", "outdated", "stray") for f in self.files)

    @property
    def up_to_date(self) -> bool:
        """Installed, and every script this env needs is there and current (no stray ones)."""
        return self.installed_any and all(f.state == "current" for f in self.files if f.state != "foreign")

    @property
    def outdated(self) -> list[str]:
        return [f.name for f in self.files if f.state == "outdated"]

    def to_dict(self) -> dict[str, object]:
        return {
            "directory": str(self.directory),
            "installed": self.installed_any,
            "up_to_date": self.up_to_date,
            "files": {f.name: f.state for f in self.files},
            "fingerprint": self.facts.fingerprint() if self.facts else None,
        }


@dataclass
class InstallResult:
    directory: Path
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


@dataclass
class RemoveResult:
    directory: Path
    removed: list[str] = field(default_factory=list)
    removed_dirs: list[str] = field(default_factory=list)


def _require_conda_env(prefix: Path) -> None:
    from conda_torchcheck.messages import translate

    if not fs.is_dir(prefix):
        raise TargetError(f"{prefix} does not exist")
    if not fs.is_dir(prefix / "conda-meta"):
        raise TargetError(translate("activation_hooks.not_conda_env", prefix=str(prefix)))


def _read(path: Path) -> bytes | None:
    """A script's bytes; None when absent; b"" (never ours, so never overwritten or deleted) for anything
    else of that name: a FIFO, a folder, a device link, an unreadable file."""
    try:
        return fs.read_bytes(path, fs.SMALL_LIMIT)
    except FileNotFoundError:
        return None
    except OSError:
        return b"" if fs.exists(path) or fs.is_symlink(path) else None


def _inside(prefix: Path, directory: Path) -> None:
    """TargetError when ``directory`` (links resolved) is not inside ``prefix``: an ``activate.d`` that is a
    link out of the env must not get scripts written, or deleted, where it points."""
    real_prefix = os.path.realpath(prefix)
    real = os.path.realpath(directory)
    if os.path.commonpath([real_prefix, real]) != real_prefix:
        raise TargetError(f"{directory} leads out of the environment (to {real}); nothing was written there")


def _writing(what: Path, exc: OSError) -> TargetError:
    return TargetError(f"cannot write {what}: {fs.describe(exc)}")


def current_facts(prefix: Path) -> ActivationFacts:
    from conda_torchcheck.inventory import find_torch, load_environment

    env, _ = load_environment(prefix, use_live_host=False)
    return facts_for(env, find_torch(env))


def _existing(directory: Path) -> dict[str, bytes]:
    """Our scripts present in ``directory`` (any extension we may have written), by file name."""
    out = {}
    for ext in render.ALL_EXTENSIONS:
        data = _read(directory / render.filename(ext))
        if data is not None:
            out[render.filename(ext)] = data
    return out


def status(prefix: Path, facts: ActivationFacts | None = None) -> HooksStatus:
    """State of each script; cheap when nothing is installed (no env inventory then)."""
    directory = activate_dir(prefix)
    existing = _existing(directory)
    ours = {name: data for name, data in existing.items() if render.read_header(data) is not None}
    if not ours and facts is None:
        wanted = [render.filename(ext) for ext in render.POSIX_EXTENSIONS]
        files = [FileState(n, "foreign" if n in existing else "missing") for n in wanted]
        return HooksStatus(directory, tuple(files))
    facts = facts or current_facts(prefix)
    created = next((render.created_dirs(d) for d in ours.values()), ())
    files = []
    expected = render.extensions_for(facts.os)
    for ext in render.ALL_EXTENSIONS:
        name = render.filename(ext)
        data = existing.get(name)
        if name in existing and name not in ours:
            files.append(FileState(name, "foreign"))
        elif ext not in expected:
            if data is not None:
                files.append(FileState(name, "stray"))
        elif data is None:
            files.append(FileState(name, "missing"))
        else:
            files.append(FileState(name, "current" if data == render.render(ext, facts, created) else "outdated"))
    return HooksStatus(directory, tuple(files), facts)


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp-torchcheck")
    if fs.is_symlink(tmp) or fs.exists(tmp):
        tmp.unlink()  # a leftover (or a planted link): never written through
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(tmp, flags, 0o644)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise


def install(prefix: Path, *, only_if_changed: bool = False, facts: ActivationFacts | None = None) -> InstallResult:
    """Write (or refresh) the scripts for this env's OS; remove ours that its OS does not need."""
    from conda_torchcheck.messages import translate

    prefix = Path(prefix)
    _require_conda_env(prefix)
    facts = facts or current_facts(prefix)
    directory = activate_dir(prefix)
    existing = _existing(directory)
    for name, data in existing.items():
        if render.read_header(data) is None:
            raise TargetError(translate("activation_hooks.foreign_file", path=str(directory / name)))
    created = next((render.created_dirs(d) for d in existing.values()), None)
    if created is None:
        created = tuple(
            "/".join(ACTIVATE_D[:i])
            for i in range(len(ACTIVATE_D), 0, -1)
            if not fs.exists(prefix.joinpath(*ACTIVATE_D[:i]))
        )
    result = InstallResult(directory)
    _inside(prefix, directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _writing(directory, exc) from None
    _inside(prefix, directory)  # created through a link that appeared meanwhile
    expected = render.extensions_for(facts.os)
    for ext in render.ALL_EXTENSIONS:
        name = render.filename(ext)
        path = directory / name
        if ext not in expected:
            if name in existing:
                try:
                    path.unlink()
                except OSError as exc:
                    raise _writing(path, exc) from None
                result.removed.append(name)
            continue
        data = render.render(ext, facts, created)
        if only_if_changed and existing.get(name) == data:
            result.unchanged.append(name)
            continue
        if existing.get(name) == data:
            result.unchanged.append(name)
            continue
        try:
            _write_atomic(path, data)
        except OSError as exc:
            raise _writing(path, exc) from None
        result.written.append(name)
    return result


def remove(prefix: Path) -> RemoveResult:
    prefix = Path(prefix)
    if not fs.is_dir(prefix):
        raise TargetError(f"{prefix} does not exist")
    directory = activate_dir(prefix)
    result = RemoveResult(directory)
    if not fs.is_dir(directory):
        return result
    _inside(prefix, directory)
    created: set[str] = set()
    try:
        for name, data in _existing(directory).items():
            if render.read_header(data) is None:
                continue  # not ours: never delete
            created.update(render.created_dirs(data))
            (directory / name).unlink()
            result.removed.append(name)
        for leftover in directory.glob(render.STEM + ".*.tmp-torchcheck"):
            leftover.unlink()
            result.removed.append(leftover.name)
    except OSError as exc:
        raise TargetError(f"cannot remove from {directory}: {fs.describe(exc)}") from None
    # deepest first; only folders install created, only when empty
    for rel in sorted(created, key=lambda r: r.count("/"), reverse=True):
        if rel not in ("/".join(ACTIVATE_D[:i]) for i in range(1, len(ACTIVATE_D) + 1)):
            continue
        path = prefix / rel
        try:
            path.rmdir()
            result.removed_dirs.append(rel)
        except OSError:
            pass
    return result
