"""Read ``conda-meta/*.json`` as raw JSON.

Never through conda's ``PrefixData(interoperability=True)``: that loader deletes a package's record when pip
has replaced its ``RECORD`` file (for example ``pip install torch`` over a conda ``pytorch``), which would
destroy the very evidence this tool reports.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from conda_torchcheck.inventory import fs
from conda_torchcheck.inventory.model import CondaRecord, LazyPaths, Problem
from conda_torchcheck.inventory.names import canonical_channel

REQUIRED_FIELDS = ("name", "version", "build")


def read_conda_meta(prefix: Path) -> tuple[tuple[CondaRecord, ...], tuple[Problem, ...]]:
    meta = prefix / "conda-meta"
    records: list[CondaRecord] = []
    problems: list[Problem] = []
    if not fs.is_dir(meta):
        return (), ()
    try:
        entries = sorted(meta.iterdir(), key=lambda p: p.name)
    except OSError as exc:
        return (), (Problem("conda-meta-unreadable", meta, exc.strerror or str(exc)),)
    for path in entries:
        if path.suffix != ".json" or path.name.startswith(".") or fs.is_dir(path):
            continue
        record, problem = read_record(path)
        if record is not None:
            records.append(record)
        if problem is not None:
            problems.append(problem)
    return tuple(records), tuple(problems)


def read_record(path: Path) -> tuple[CondaRecord | None, Problem | None]:
    try:
        raw = fs.read_bytes(path)
    except OSError as exc:
        return None, Problem("conda-meta-unreadable", path, exc.strerror or str(exc))
    try:
        data = fs.parse_json(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return None, Problem("conda-meta-json", path, f"not UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})")
    except ValueError as exc:
        from json import JSONDecodeError  # json is imported only where there is JSON to read (not in a venv)

        if isinstance(exc, JSONDecodeError):
            return None, Problem("conda-meta-json", path, f"invalid JSON: {exc.msg} (line {exc.lineno})")
        # past what a real record holds: huge numbers, NaN/Infinity, deep nesting
        return None, Problem("conda-meta-json", path, f"invalid JSON: {exc}")
    if not isinstance(data, dict):
        return None, Problem("conda-meta-json", path, "the file does not hold a JSON object")
    missing = [f for f in REQUIRED_FIELDS if not isinstance(data.get(f), str) or not data.get(f)]
    if missing:
        return None, Problem("conda-meta-fields", path, "missing or invalid field(s): " + ", ".join(missing))
    return _to_record(data, path), None


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Iterable) and not isinstance(value, (bytes, dict)):
        return tuple(v for v in value if isinstance(v, str))
    return ()


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return 0


def _paths(data: dict[str, Any]) -> LazyPaths:
    paths_data = data.get("paths_data")
    entries = paths_data.get("paths") if isinstance(paths_data, dict) else None
    return LazyPaths(entries if isinstance(entries, list) else [])


def _to_record(data: dict[str, Any], path: Path) -> CondaRecord:
    channel_raw = data.get("channel") if isinstance(data.get("channel"), str) else None
    url = data.get("url") if isinstance(data.get("url"), str) else ""
    schannel = data.get("schannel") if isinstance(data.get("schannel"), str) else None
    channel = canonical_channel(channel_raw or schannel, url)
    requested = _strings(data.get("requested_specs")) or _strings(data.get("requested_spec"))
    return CondaRecord(
        name=data["name"],
        version=data["version"],
        build=data["build"],
        build_number=_int(data.get("build_number")),
        channel=channel,
        channel_url=channel_raw or url or "",
        subdir=data.get("subdir") if isinstance(data.get("subdir"), str) else "",
        fn=data.get("fn") if isinstance(data.get("fn"), str) else "",
        depends=_strings(data.get("depends")),
        requested_specs=requested,
        files=_strings(data.get("files")),
        paths=_paths(data),
        source=path,
    )
