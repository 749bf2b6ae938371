"""TC308 torch's files against their manifest, TC309 DLLs in torch\\lib that the manifest does not list.

The manifest is pip's RECORD (path, sha256, size) or conda's conda-meta paths_data. Listed files are checked for
presence and size; DLLs, .pyd and .exe files also by sha256 (``--no-hashes`` skips that; unchanged files are not
hashed twice, see :class:`HashCache`). Headers, static libraries and CMake files (torch 2.3 ships 8,400 headers and
780 MB of .lib files) take no part in ``import torch`` and are not checked. Antivirus quarantine removes or empties
DLLs; interrupted installs leave them short; pip leaves behind every file it did not install, which torch's
preload then loads like its own.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from conda_torchcheck.checks import Check
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.win_common import error_line, reinstall_fixes, windows_graph
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory import fs
from conda_torchcheck.inventory.fs import sha256_file
from conda_torchcheck.messages import msg

# hashed by default: what the loader maps (antivirus quarantine targets these). Other files: presence and size.
HASHED = (".dll", ".pyd", ".exe")
IMPORT_RELEVANT = (".dll", ".pyd", ".exe", ".py")
# take no part in `import torch` (torch 2.3's wheel: 8,400 headers, 780 MB of static libraries): not checked
NOT_CHECKED = (".h", ".hpp", ".cuh", ".inl", ".lib", ".a", ".cmake", ".pyi", ".pdb", ".exp", ".def", ".pc")
_SMALL = 1 << 20  # hashed inline; larger files go to the thread pool
SHOWN = 20


class Entry(NamedTuple):
    path: str  # a plain string: a wheel's RECORD has 10,000+ rows and Path() costs add up
    digest: str | None  # sha256, hex (conda) or urlsafe base64 (RECORD)
    size: int | None
    suffix: str = ""  # lower case, with the dot


def _record_entries(dist) -> list[Entry]:
    from conda_torchcheck.loader.windows import read_record

    out = []
    site = str(dist.site)
    for row in read_record(dist.record_path):
        if len(row) < 3 or not row[0] or not row[1]:
            continue  # RECORD itself, INSTALLER, __pycache__ entries carry no hash
        rel = row[0]
        if rel.endswith(NOT_CHECKED):  # most of a torch RECORD (headers, static libraries): skip early
            continue
        algo, _, value = row[1].partition("=")
        if algo != "sha256":
            continue
        suffix = rel[rel.rfind(".") :].lower() if "." in rel[rel.rfind("/") + 1 :] else ""
        if suffix in NOT_CHECKED:
            continue
        size = int(row[2]) if row[2].isdigit() else None
        # the digest is decoded only for files that get hashed (see verify)
        out.append(Entry(os.path.join(site, rel), value, size, suffix))
    return out


def _hex(digest: str) -> str | None:
    if len(digest) == 64 and all(c in "0123456789abcdef" for c in digest):
        return digest  # conda: already hex
    try:
        return base64.urlsafe_b64decode(digest + "=" * (-len(digest) % 4)).hex()
    except (ValueError, TypeError):
        return None


def _conda_entries(ctx: CheckContext) -> list[Entry]:
    out = []
    for rec in (ctx.torch.conda_record, ctx.torch.libtorch_record):
        if rec is None:
            continue
        for item in rec.paths:
            # only binaries: conda's prefix replacement changes text files after the package was built
            if item.path.lower().endswith((".dll", ".pyd")) and item.path_type in (None, "hardlink"):
                suffix = os.path.splitext(item.path)[1].lower()
                out.append(Entry(str(ctx.env.prefix / item.path), item.sha256, item.size, suffix))
    return out


def manifest(ctx: CheckContext) -> tuple[str, list[Entry]] | None:
    t = ctx.torch
    if t.source in ("pip", "pip-over-conda") and t.dist is not None and t.dist.has_record:
        return f"{t.dist.metadata_dir.name}/RECORD", _record_entries(t.dist)
    if t.source == "conda" and t.conda_record is not None:
        names = [t.conda_record.source.name] + ([t.libtorch_record.source.name] if t.libtorch_record else [])
        return "conda-meta/" + ", ".join(names), _conda_entries(ctx)
    return None


class HashCache:
    """sha256 of files this tool already hashed, keyed by (size, mtime, inode): a second run hashes nothing new.

    Kept in the user's cache folder, never in the env; ``CONDA_TORCHCHECK_NO_CACHE=1`` turns it off. A file that
    antivirus or an installer rewrites gets a new modification time, so it is hashed again.
    """

    VERSION = 1

    def __init__(self, location: Path | None) -> None:
        self.location = location
        self.entries: dict[str, list] = {}
        self.dirty = False
        if location is not None:
            try:
                data = fs.parse_json(fs.read_text(location, errors="strict"))
                if data.get("version") == self.VERSION and isinstance(data.get("files"), dict):
                    self.entries = data["files"]
            except (OSError, ValueError, AttributeError):
                self.entries = {}

    @staticmethod
    def default_location() -> Path | None:
        from conda_torchcheck.cache import cache_folder

        folder = cache_folder()
        return None if folder is None else folder / "hashes-v1.json"

    @staticmethod
    def _stamp(st: os.stat_result) -> list:
        return [st.st_size, st.st_mtime_ns, st.st_ino]

    def get(self, path: str, st: os.stat_result) -> str | None:
        hit = self.entries.get(path)
        if hit and hit[:3] == self._stamp(st):
            return hit[3]
        return None

    def put(self, path: str, st: os.stat_result, digest: str) -> None:
        self.entries[path] = [*self._stamp(st), digest]
        self.dirty = True

    def save(self) -> None:
        if not self.dirty or self.location is None:
            return
        from conda_torchcheck.cache import write_atomically

        if len(self.entries) > 20_000:  # keep it small: forget the oldest half
            self.entries = dict(list(self.entries.items())[10_000:])
        # a read-only home is ignored there: hash again next time
        write_atomically(self.location, json.dumps({"version": self.VERSION, "files": self.entries}))


def verify(
    entries: list[Entry], *, hashes: bool, cache: HashCache | None = None
) -> tuple[list[Entry], list[tuple[Entry, int]], list[Entry]]:
    missing: list[Entry] = []
    wrong_size: list[tuple[Entry, int]] = []
    to_hash: list[tuple[Entry, os.stat_result]] = []
    for entry in entries:
        try:
            st = os.stat(entry.path)
        except OSError:
            missing.append(entry)
            continue
        if entry.size is not None and st.st_size != entry.size:
            wrong_size.append((entry, st.st_size))
        elif hashes and entry.digest and entry.suffix in HASHED:
            to_hash.append((entry, st))
    results: list[tuple[Entry, str | None]] = []
    pending: list[tuple[Entry, os.stat_result]] = []
    for entry, st in to_hash:
        known = cache.get(entry.path, st) if cache is not None else None
        if known is not None:
            results.append((entry, known))
        else:
            pending.append((entry, st))
    big = [p for p in pending if p[1].st_size > _SMALL]
    small = [p for p in pending if p[1].st_size <= _SMALL]
    computed = [(e, st, sha256_file(e.path)) for e, st in small]
    if big:
        # hashlib releases the GIL on large buffers: a few threads overlap reading and hashing
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
            computed.extend((e, st, d) for (e, st), d in zip(big, pool.map(lambda p: sha256_file(p[0].path), big)))
    for entry, st, digest in computed:
        results.append((entry, digest))
        if digest is not None and cache is not None:
            cache.put(entry.path, st, digest)
    altered = [e for e, digest in results if digest is not None and digest != _hex(e.digest or "")]
    if cache is not None:
        cache.save()
    return missing, wrong_size, altered


def run(ctx: CheckContext) -> Iterator[Finding]:
    t = ctx.torch
    if not t.installed:
        return
    found = manifest(ctx)
    if found is None:
        return
    name, entries = found
    cache = HashCache(HashCache.default_location()) if ctx.options.verify_hashes else None
    missing, wrong_size, altered = verify(entries, hashes=ctx.options.verify_hashes, cache=cache)
    count = len(missing) + len(wrong_size) + len(altered)
    if count:
        relevant = missing + altered + [w[0] for w in wrong_size]
        severity = Severity.ERROR if any(e.suffix in IMPORT_RELEVANT for e in relevant) else Severity.WARNING
        evidence: dict[str, object] = {"manifest": name, "checked": len(entries)}
        if missing:
            evidence["missing"] = [os.path.normpath(e.path) for e in missing[:SHOWN]] + _more(missing)
        if wrong_size:
            evidence["wrong_size"] = [
                f"{os.path.normpath(e.path)}: {have} bytes, expected {e.size}" for e, have in wrong_size[:SHOWN]
            ]
            evidence["wrong_size"] += _more(wrong_size)  # type: ignore[operator]
        if altered:
            evidence["wrong_content"] = [os.path.normpath(e.path) for e in altered[:SHOWN]] + _more(altered)
        if not ctx.options.verify_hashes:
            evidence["hashes"] = "not checked (--no-hashes)"
        fixes = reinstall_fixes(ctx)
        fixes = [
            Fix(f.kind, msg("TC308.fix.conda" if f.kind == "conda" else "TC308.fix.pip"), commands=f.commands)
            for f in fixes
        ]
        yield finding(
            "TC308",
            severity,
            count=count,
            manifest=name,
            missing=len(missing),
            truncated=len(wrong_size),
            altered=len(altered),
            evidence=evidence,
            fixes=fixes,
        )
    yield from _stale(ctx, name, entries)


def _more(items: list) -> list[str]:
    return [f"… {len(items) - SHOWN} more"] if len(items) > SHOWN else []


def _stale(ctx: CheckContext, name: str, entries: list[Entry]) -> Iterator[Finding]:
    t = ctx.torch
    lib = fs.find_child(t.package_dir, "lib") if t.package_dir is not None else None
    if lib is None:
        return
    listed = {os.path.normcase(os.path.normpath(e.path)) for e in entries if e.suffix == ".dll"}
    if t.source == "conda":
        # a conda torch's torch\lib holds only .lib files: any DLL there that no conda package owns is foreign
        for rec in ctx.env.conda_records:
            listed.update(os.path.normcase(os.path.normpath(str(ctx.env.prefix / f))) for f in rec.files)
    stale = sorted(
        entry
        for key, entry in fs.listing(lib).items()
        if key.endswith(".dll") and os.path.normcase(os.path.normpath(str(entry))) not in listed
    )
    if not stale:
        return
    graph = windows_graph(ctx)
    failing = None
    if graph is not None:
        failing = next((o for o in graph.outcomes if o.error is not None and o.path in stale), None)
    names = ", ".join(p.name for p in stale)
    evidence = {"manifest": name, "not_listed": [f"{p} ({_size(p)} bytes)" for p in stale]}
    delete = Fix("file", msg("TC309.fix.delete"), commands=tuple(f'del "{p}"' for p in stale))
    if failing is not None:
        evidence["error"] = error_line(graph, failing)
        yield finding(
            "TC309",
            Severity.ERROR,
            variant="breaks",
            count=len(stale),
            torch=t.version or "?",
            manifest=name,
            names=names,
            failing=failing.path.name,
            error_line=evidence["error"],
            evidence=evidence,
            fixes=[delete],
        )
    else:
        yield finding(
            "TC309",
            Severity.WARNING,
            count=len(stale),
            torch=t.version or "?",
            manifest=name,
            names=names,
            evidence=evidence,
            fixes=[delete],
        )


def _size(path: Path) -> int | str:
    try:
        return path.stat().st_size
    except OSError:
        return "?"


CHECK = Check.declared(__name__, run)
