"""The symbol check's result kept between runs: a second ``check`` of an env whose libraries did not change does
not read their symbol tables again.

The key is everything :func:`check_symbols` reads: each mapped object's path and file stamp (device, inode, size,
modification and change times), the order of the simulated dlopens and their scopes, the libraries assumed to
come from another machine, whether the interpreter's own symbols could be read, and the stamps of the modules
that compute the result (an upgrade or an edit of this tool is a new key). Anything that cannot be stamped
(a file gone, a path that cannot be stat'ed) means no cache for that run.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from conda_torchcheck import cache
from conda_torchcheck.loader.linux.engine import LinuxLoad, LoadedObject
from conda_torchcheck.loader.linux.symbols import SymbolMiss, check_symbols

FORMAT = 1
#: entries kept; past this the oldest half is removed (an entry is a few hundred bytes)
MAX_ENTRIES = 256


def _code_stamp() -> list:
    from conda_torchcheck import __version__
    from conda_torchcheck.binaries import elf
    from conda_torchcheck.loader.linux import engine, symbols

    return [FORMAT, __version__, *(cache.file_stamp(m.__file__ or "") for m in (elf, engine, symbols))]


def cache_key(load: LinuxLoad) -> list | None:
    """What the result depends on, as JSON-ready data; None when some input cannot be stamped."""
    ldso = load.ldso
    index: dict[int, int] = {}
    objects: list[list] = []

    def ref(obj: LoadedObject) -> int:
        at = index.get(id(obj))
        if at is None:
            stamp = None
            if obj.elf is not None:
                stamp = cache.file_stamp(str(obj.path))
                if stamp is None:
                    raise LookupError(obj.path)
            assumed = sorted(d.name for d in obj.module.dependencies if d.resolution and d.resolution.assumed)
            at = index[id(obj)] = len(objects)
            objects.append([str(obj.path), stamp, assumed])
        return at

    try:
        steps = [
            [
                s.label,
                None if s.root is None else ref(s.root),
                s.failed,
                s.rtld_global,
                [ref(o) for o in s.new_objects],
                [ref(o) for o in s.searchlist],
            ]
            for s in ldso.steps
        ]
    except LookupError:
        return None
    python_unknown = ldso.main is None or ldso.main.elf is None or ldso.main.elf.tables.symtab is None
    return [_code_stamp(), python_unknown, objects, steps]


def cached_check_symbols(load: LinuxLoad) -> list[SymbolMiss]:
    """:func:`check_symbols` of ``load``, from the cache when its inputs are unchanged."""
    folder = cache.cache_folder()
    key = cache_key(load) if folder is not None else None
    if folder is None or key is None:
        return check_symbols(load)
    text = json.dumps(key, separators=(",", ":"))
    path = folder / "linux-symbols" / (hashlib.sha256(text.encode("utf-8")).hexdigest() + ".json")
    rows = _read(path, key)
    hit = _replay(load, rows) if rows is not None else None
    if hit is not None:
        return hit
    misses = check_symbols(load)
    found = [[m.name, m.version, m.version_file, str(m.required_by), m.step, [str(p) for p in m.scope]] for m in misses]
    _prune(path.parent)
    cache.write_atomically(path, json.dumps({"key": key, "misses": found}, separators=(",", ":")))
    return misses


def _read(path: Path, key: list) -> list[tuple] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data["key"] != key:  # a hash collision, or a file written by something else
            return None
        rows = [
            (str(n), v, f, str(by), str(step), [str(p) for p in scope]) for n, v, f, by, step, scope in data["misses"]
        ]
        optional = (str, type(None))
        return rows if all(isinstance(r[1], optional) and isinstance(r[2], optional) for r in rows) else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _replay(load: LinuxLoad, rows: list[tuple]) -> list[SymbolMiss] | None:
    """The misses of ``rows`` with the load's own path objects, and what :func:`check_symbols` notes on each
    module beside its result (the tree shows it); None when a row names an object the load does not have."""
    steps = load.ldso.steps
    paths = {str(o.path): o.path for s in steps for o in (s.root, *s.new_objects, *s.searchlist) if o is not None}
    found: list[tuple[LoadedObject, SymbolMiss]] = []
    for name, version, version_file, by, label, scope in rows:
        obj = next(
            (o for s in steps if s.label == label for o in s.new_objects if str(o.path) == by),
            None,
        )
        if obj is None or any(p not in paths for p in scope):
            return None
        found.append((obj, SymbolMiss(name, version, version_file, obj.path, label, tuple(paths[p] for p in scope))))
    for obj, miss in found:
        obj.module.extra.setdefault("undefined_symbols", []).append(
            {"name": miss.name, "version": miss.version, "from": miss.version_file}
        )
    return [miss for _obj, miss in found]


def _prune(folder: Path) -> None:
    try:
        entries = list(folder.iterdir())
    except OSError:
        return
    if len(entries) < MAX_ENTRIES:
        return
    import os

    def age(p: Path) -> int:
        try:
            return os.stat(p).st_mtime_ns
        except OSError:
            return 0

    for old in sorted(entries, key=age)[: len(entries) // 2]:
        try:
            old.unlink()
        except OSError:
            pass
