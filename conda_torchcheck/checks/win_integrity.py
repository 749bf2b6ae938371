"""TC308 torch's files against their manifest, TC309 DLLs in torch\\lib that the manifest does not list.

The manifest is pip's RECORD (path, sha256, size) or conda's conda-meta paths_data. Every listed file is checked
for presence and size; binaries and Python files are also hashed (``--no-hashes`` skips that). Static libraries
and headers (torch 2.3 ships 780 MB of .lib files) take no part in ``import torch`` and are checked by size only.
Antivirus quarantine removes or empties DLLs; interrupted installs leave them short; pip leaves behind every file
it did not install, which torch's preload then loads like its own.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from conda_torchcheck.checks import Check
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.win_common import error_line, reinstall_fixes, windows_graph
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory import fs
from conda_torchcheck.messages import msg

HASHED = (".dll", ".pyd", ".exe", ".py")
IMPORT_RELEVANT = (".dll", ".pyd", ".exe", ".py")
SHOWN = 20


@dataclass(frozen=True)
class Entry:
    path: Path
    digest: str | None  # hex sha256
    size: int | None


def _record_entries(dist) -> list[Entry]:
    out = []
    try:
        with open(dist.record_path, encoding="utf-8", newline="", errors="replace") as fh:
            rows = list(csv.reader(fh))
    except OSError:
        return []
    for row in rows:
        if len(row) < 3 or not row[0] or not row[1]:
            continue  # RECORD itself, INSTALLER, __pycache__ entries carry no hash
        algo, _, value = row[1].partition("=")
        if algo != "sha256":
            continue
        try:
            digest = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).hex()
        except (ValueError, TypeError):
            continue
        size = int(row[2]) if row[2].isdigit() else None
        out.append(Entry(Path(os.path.normpath(os.path.join(str(dist.site), row[0]))), digest, size))
    return out


def _conda_entries(ctx: CheckContext) -> list[Entry]:
    out = []
    for rec in (ctx.torch.conda_record, ctx.torch.libtorch_record):
        if rec is None:
            continue
        for item in rec.paths:
            # only binaries: conda's prefix replacement changes text files after the package was built
            if item.path.lower().endswith((".dll", ".pyd")) and item.path_type in (None, "hardlink"):
                out.append(Entry(ctx.env.prefix / item.path, item.sha256, item.size))
    return out


def manifest(ctx: CheckContext) -> tuple[str, list[Entry]] | None:
    t = ctx.torch
    if t.source in ("pip", "pip-over-conda") and t.dist is not None and t.dist.has_record:
        return f"{t.dist.metadata_dir.name}/RECORD", _record_entries(t.dist)
    if t.source == "conda" and t.conda_record is not None:
        names = [t.conda_record.source.name] + ([t.libtorch_record.source.name] if t.libtorch_record else [])
        return "conda-meta/" + ", ".join(names), _conda_entries(ctx)
    return None


def _sha256(path: Path) -> str | None:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except OSError:
        return None
    return h.hexdigest()


def verify(entries: list[Entry], *, hashes: bool) -> tuple[list[Entry], list[tuple[Entry, int]], list[Entry]]:
    missing: list[Entry] = []
    wrong_size: list[tuple[Entry, int]] = []
    to_hash: list[Entry] = []
    for entry in entries:
        try:
            size = os.stat(entry.path).st_size
        except OSError:
            missing.append(entry)
            continue
        if entry.size is not None and size != entry.size:
            wrong_size.append((entry, size))
        elif hashes and entry.digest and entry.path.suffix.lower() in HASHED:
            to_hash.append(entry)
    altered: list[Entry] = []
    if to_hash:
        # hashlib releases the GIL on large buffers: a few threads overlap reading and hashing
        with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
            for entry, digest in zip(to_hash, pool.map(lambda e: _sha256(e.path), to_hash)):
                if digest is not None and digest != entry.digest:
                    altered.append(entry)
    return missing, wrong_size, altered


def run(ctx: CheckContext) -> Iterator[Finding]:
    t = ctx.torch
    if not t.installed:
        return
    found = manifest(ctx)
    if found is None:
        return
    name, entries = found
    missing, wrong_size, altered = verify(entries, hashes=ctx.options.verify_hashes)
    count = len(missing) + len(wrong_size) + len(altered)
    if count:
        relevant = [e.path for e in missing + altered + [w[0] for w in wrong_size]]
        severity = Severity.ERROR if any(p.suffix.lower() in IMPORT_RELEVANT for p in relevant) else Severity.WARNING
        evidence: dict[str, object] = {"manifest": name, "checked": len(entries)}
        if missing:
            evidence["missing"] = [str(e.path) for e in missing[:SHOWN]] + _more(missing)
        if wrong_size:
            evidence["wrong_size"] = [f"{e.path}: {have} bytes, expected {e.size}" for e, have in wrong_size[:SHOWN]]
            evidence["wrong_size"] += _more(wrong_size)  # type: ignore[operator]
        if altered:
            evidence["wrong_content"] = [str(e.path) for e in altered[:SHOWN]] + _more(altered)
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
    listed = {os.path.normcase(os.path.normpath(str(e.path))) for e in entries}
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


CHECK = Check(
    name="win_integrity",
    ids=("TC308", "TC309"),
    summary="torch's files against pip RECORD / conda-meta (missing, truncated, altered) and stale DLLs",
    run=run,
    platforms=("windows",),
)
