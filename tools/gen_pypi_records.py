"""Generate conda_torchcheck/knowledge/pypi_wheels.toml from PyPI's simple API (run by hand, output committed).

    python tools/gen_pypi_records.py                 # re-uses the cached index pages and metadata
    python tools/gen_pypi_records.py --refresh       # fetches the index pages again (new releases)

For each of torch, torchvision, torchaudio and triton it reads ``https://pypi.org/simple/<project>/`` (PEP 691
JSON, ``Accept: application/vnd.pypi.simple.v1+json``) and writes, per final release (pre-releases, dev releases
and yanked files skipped): the CPython tags and the platforms of its wheels (condensed, and per platform), the
oldest macOS per arch, Requires-Python, whether an sdist exists, and the Requires-Dist lines of one wheel that
name torch, triton, pytorch-triton* or nvidia-*.

A wheel's METADATA is read without downloading the wheel: the PEP 658 ``<url>.metadata`` file when the index
entry announces one (``core-metadata`` / ``data-dist-info-metadata``), else HTTP Range requests on the wheel (the
zip's end-of-central-directory and central directory from its tail, then the METADATA member's local header and
compressed bytes, inflated here). Raw responses are cached under ~/.cache/conda-torchcheck-pypi (wheel bytes are
immutable; the index pages are re-fetched with --refresh), so a re-run is cheap.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime as _dt
import email.parser
import hashlib
import json
import re
import struct
import sys
import time
import urllib.error
import urllib.request
import zlib
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import Version

PROJECTS = ("torch", "torchvision", "torchaudio", "triton")
INDEX = "https://pypi.org/simple/{}/"
ACCEPT = "application/vnd.pypi.simple.v1+json"
OUTPUT = Path(__file__).resolve().parent.parent / "conda_torchcheck" / "knowledge" / "pypi_wheels.toml"
CACHE = Path.home() / ".cache" / "conda-torchcheck-pypi"
TIMEOUT = 60
RETRIES = 5
USER_AGENT = "conda-torchcheck gen_pypi_records (+https://github.com/)"

# ---------------------------------------------------------------------------------------------------------
# HTTP with retries, a timeout and a cache


def _cache_path(key: str) -> Path:
    return CACHE / hashlib.sha256(key.encode()).hexdigest()[:32]


def http_get(url: str, *, byte_range: str | None = None, accept: str | None = None, cache: bool = True) -> bytes:
    """The body of ``url`` (``byte_range``: ``"a-b"`` or ``"-n"``), cached under CACHE unless ``cache`` is False."""
    key = f"{url} {byte_range or ''} {accept or ''}"
    path = _cache_path(key)
    if cache and path.exists():
        return path.read_bytes()
    headers = {"User-Agent": USER_AGENT}
    if accept:
        headers["Accept"] = accept
    if byte_range:
        headers["Range"] = f"bytes={byte_range}"
    delay = 1.0
    for attempt in range(RETRIES):
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=TIMEOUT) as resp:
                if byte_range and resp.status != 206:
                    raise RuntimeError(f"{url}: asked for a range, got HTTP {resp.status}")
                body = resp.read()
            break
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
            if isinstance(exc, urllib.error.HTTPError) and exc.code in (403, 404, 410, 416):
                raise
            if attempt == RETRIES - 1:
                raise
            print(f"  retry {attempt + 1} for {url} ({exc})", file=sys.stderr)
            time.sleep(delay)
            delay *= 2
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(body)
    tmp.replace(path)
    return body


def fetch_index(project: str, *, refresh: bool) -> tuple[dict, str]:
    """The PEP 691 page of ``project`` and when it was fetched (an ISO date)."""
    url = INDEX.format(project)
    stamp = _cache_path(f"{url} fetched")
    body = http_get(url, accept=ACCEPT, cache=not refresh)
    if refresh or not stamp.exists():
        stamp.write_text(_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d"))
    return json.loads(body), stamp.read_text().strip()


# ---------------------------------------------------------------------------------------------------------
# METADATA of a remote wheel


def _eocd(tail: bytes, tail_start: int, url: str) -> tuple[int, int]:
    """(central directory offset, size) from the zip's tail (zip64 included)."""
    pos = tail.rfind(b"PK\x05\x06")
    if pos < 0:
        raise RuntimeError(f"{url}: no end-of-central-directory record in the tail")
    _, _, _, _, entries, cd_size, cd_offset, _ = struct.unpack("<4sHHHHIIH", tail[pos : pos + 22])
    if cd_offset == 0xFFFFFFFF or cd_size == 0xFFFFFFFF or entries == 0xFFFF:
        loc = pos - 20
        if loc < 0 or tail[loc : loc + 4] != b"PK\x06\x07":
            raise RuntimeError(f"{url}: zip64 locator not in the tail")
        (z64_offset,) = struct.unpack("<Q", tail[loc + 8 : loc + 16])
        rel = z64_offset - tail_start
        if rel < 0:
            record = http_get(url, byte_range=f"{z64_offset}-{z64_offset + 56 - 1}")
        else:
            record = tail[rel : rel + 56]
        if record[:4] != b"PK\x06\x06":
            raise RuntimeError(f"{url}: bad zip64 end-of-central-directory record")
        cd_size, cd_offset = struct.unpack("<QQ", record[40:56])
    return cd_offset, cd_size


def _central_entries(data: bytes):
    """(name, method, compressed size, local header offset) of every central-directory entry in ``data``."""
    pos = data.find(b"PK\x01\x02")
    while pos >= 0 and pos + 46 <= len(data):
        (method,) = struct.unpack("<H", data[pos + 10 : pos + 12])
        csize, _usize, nlen, xlen, clen = struct.unpack("<IIHHH", data[pos + 20 : pos + 34])
        (offset,) = struct.unpack("<I", data[pos + 42 : pos + 46])
        name = data[pos + 46 : pos + 46 + nlen]
        extra = data[pos + 46 + nlen : pos + 46 + nlen + xlen]
        if csize == 0xFFFFFFFF or offset == 0xFFFFFFFF:  # zip64 extended information
            fields = []
            x = 0
            while x + 4 <= len(extra):
                tag, size = struct.unpack("<HH", extra[x : x + 4])
                if tag == 1:
                    fields = list(struct.unpack(f"<{size // 8}Q", extra[x + 4 : x + 4 + size - size % 8]))
                x += 4 + size
            if _usize == 0xFFFFFFFF and fields:
                fields.pop(0)
            if csize == 0xFFFFFFFF and fields:
                csize = fields.pop(0)
            if offset == 0xFFFFFFFF and fields:
                offset = fields.pop(0)
        yield name.decode("utf-8", "replace"), method, csize, offset
        pos = data.find(b"PK\x01\x02", pos + 46 + nlen + xlen + clen)


def wheel_metadata_by_range(url: str, size: int) -> str:
    """The ``*.dist-info/METADATA`` of the wheel at ``url`` (``size`` bytes), read with Range requests."""
    tail_len = min(size, 256 * 1024)
    tail_start = size - tail_len
    tail = http_get(url, byte_range=f"{tail_start}-{size - 1}")
    cd_offset, cd_size = _eocd(tail, tail_start, url)
    if cd_offset >= tail_start:
        cd = tail[cd_offset - tail_start : cd_offset - tail_start + cd_size]
    else:
        cd = b""
    found = [e for e in _central_entries(cd) if re.fullmatch(r"[^/]+\.dist-info/METADATA", e[0])]
    if not found and cd_offset < tail_start:
        # wheels write the .dist-info last, so its entries are usually in the tail: scan the part of the
        # central directory there first, the whole of it only when that fails
        part = tail[: max(0, cd_offset + cd_size - tail_start)]
        found = [e for e in _central_entries(part) if re.fullmatch(r"[^/]+\.dist-info/METADATA", e[0])]
        if not found:
            cd = http_get(url, byte_range=f"{cd_offset}-{cd_offset + cd_size - 1}")
            found = [e for e in _central_entries(cd) if re.fullmatch(r"[^/]+\.dist-info/METADATA", e[0])]
    if not found:
        raise RuntimeError(f"{url}: no .dist-info/METADATA in the central directory")
    _name, method, csize, offset = found[0]
    want = 30 + 512 + csize
    chunk = http_get(url, byte_range=f"{offset}-{min(size, offset + want) - 1}")
    if chunk[:4] != b"PK\x03\x04":
        raise RuntimeError(f"{url}: no local header at {offset}")
    nlen, xlen = struct.unpack("<HH", chunk[26:30])
    start = 30 + nlen + xlen
    if len(chunk) < start + csize:
        chunk = http_get(url, byte_range=f"{offset}-{offset + start + csize - 1}")
    raw = chunk[start : start + csize]
    if method == 0:
        data = raw
    elif method == 8:
        data = zlib.decompressobj(-15).decompress(raw)
    else:
        raise RuntimeError(f"{url}: METADATA compressed with method {method}")
    return data.decode("utf-8")


def wheel_metadata(entry: dict) -> str:
    if entry.get("core-metadata") or entry.get("data-dist-info-metadata"):
        return http_get(entry["url"] + ".metadata").decode("utf-8")
    return wheel_metadata_by_range(entry["url"], entry["size"])


# ---------------------------------------------------------------------------------------------------------
# Condensing the files


def _platform(tag: str) -> tuple[list[str], dict[str, str]]:
    """Normalised platform names of one platform tag and the macOS minimum it states per arch."""
    m = re.fullmatch(r"manylinux(?:1|2010|2014|_\d+_\d+)_(\w+)", tag)
    if m:
        return [f"manylinux_{m.group(1)}"], {}
    m = re.fullmatch(r"musllinux_\d+_\d+_(\w+)", tag)
    if m:
        return [f"musllinux_{m.group(1)}"], {}
    m = re.fullmatch(r"macosx_(\d+)_(\d+)_(\w+)", tag)
    if m:
        version = f"{m.group(1)}.{m.group(2)}"
        arches = {"universal2": ["arm64", "x86_64"], "intel": ["x86_64"]}.get(m.group(3), [m.group(3)])
        # an arm64 slice never runs below macOS 11, whatever a universal2 tag says
        mins = {a: ("11.0" if a == "arm64" and _vkey(version) < (11, 0) else version) for a in arches}
        return [f"macosx_{a}" for a in arches], mins
    return [tag], {}


def _vkey(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def _python(interpreter: str, abi: str) -> str:
    """cp311; cp313t for a free-threaded build; cp38-abi3 for the stable ABI; py3 as it is."""
    if abi == "abi3":
        return f"{interpreter}-abi3"
    if abi.endswith("t") and abi.startswith("cp") and abi[2:-1].isdigit():
        return abi
    return interpreter


def _python_key(tag: str) -> tuple:
    m = re.match(r"(?:cp|py)(\d)(\d*)", tag)
    return (int(m.group(1)), int(m.group(2) or 0), tag) if m else (99, 0, tag)


def _release_versions(index: dict) -> dict[Version, list[dict]]:
    by_version: dict[Version, list[dict]] = {}
    for entry in index["files"]:
        if entry.get("yanked"):
            continue
        name = entry["filename"]
        try:
            if name.endswith(".whl"):
                version = parse_wheel_filename(name)[1]
            else:
                version = parse_sdist_filename(name)[1]
        except (InvalidWheelFilename, InvalidSdistFilename):
            print(f"  skipped {name}: not a wheel or sdist name", file=sys.stderr)
            continue
        if version.is_prerelease or version.is_devrelease:
            continue
        by_version.setdefault(version, []).append(entry)
    return dict(sorted(by_version.items()))


def _requires_wheel(wheels: list[tuple[dict, list[str], list[str]]]) -> dict:
    """The wheel whose METADATA is read: manylinux x86_64 CPython (newest non-free-threaded Python), else any."""

    def rank(item):
        entry, pythons, platforms = item
        cpython = [p for p in pythons if p.startswith("cp") and not p.endswith("t")]
        return (
            "manylinux_x86_64" in platforms,
            bool(cpython),
            max((_python_key(p) for p in cpython), default=(0, 0, "")),
            entry["filename"],
        )

    return max(wheels, key=rank)[0]


def _named(line: str) -> bool:
    try:
        name = canonicalize_name(Requirement(line).name)
    except InvalidRequirement:
        name = canonicalize_name(re.split(r"[\s;(<>=!~\[]", line.strip(), maxsplit=1)[0])
    return name in ("torch", "triton") or name.startswith("pytorch-triton") or name.startswith("nvidia-")


def condense(version: Version, files: list[dict]) -> dict:
    wheels = []
    sdist = False
    for entry in files:
        if not entry["filename"].endswith(".whl"):
            sdist = True
            continue
        tags = parse_wheel_filename(entry["filename"])[3]
        pythons = sorted({_python(t.interpreter, t.abi) for t in tags}, key=_python_key)
        platforms: set[str] = set()
        mins: dict[str, str] = {}
        for t in tags:
            names, m = _platform(t.platform)
            platforms.update(names)
            mins.update(m)
        wheels.append((entry, pythons, sorted(platforms), mins))
    row: dict = {}
    per_platform: dict[str, set[str]] = {}
    macos_min: dict[str, str] = {}
    for _entry, pythons, platforms, mins in wheels:
        for p in platforms:
            per_platform.setdefault(p, set()).update(pythons)
        for arch, v in mins.items():
            if arch not in macos_min or _vkey(v) < _vkey(macos_min[arch]):
                macos_min[arch] = v
    row["pythons"] = sorted({p for ps in per_platform.values() for p in ps}, key=_python_key)
    row["platforms"] = sorted(per_platform)
    row["wheels"] = {p: sorted(ps, key=_python_key) for p, ps in sorted(per_platform.items())}
    if macos_min:
        row["macos_min"] = dict(sorted(macos_min.items()))
    newest = max(files, key=lambda e: (e.get("upload-time") or "", e["filename"]))
    if newest.get("requires-python"):
        row["requires_python"] = newest["requires-python"]
    if sdist:
        row["sdist"] = True
    if wheels:
        chosen = _requires_wheel([(e, ps, pl) for e, ps, pl, _ in wheels])
        metadata = email.parser.Parser().parsestr(wheel_metadata(chosen), headersonly=True)
        row["requires"] = [line.strip() for line in metadata.get_all("Requires-Dist") or () if _named(line)]
        row["requires_from"] = chosen["filename"]
    return row


# ---------------------------------------------------------------------------------------------------------
# TOML


def _s(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _list(items) -> str:
    return "[" + ", ".join(_s(i) for i in items) + "]"


def render(tables: dict[str, dict[str, dict]], fetched: dict[str, str]) -> str:
    lines = [
        "# GENERATED by tools/gen_pypi_records.py: do not edit by hand; re-run it",
        "#   python tools/gen_pypi_records.py --refresh",
        "# Source [PYPI-SIMPLE]: PyPI's simple API (PEP 691 JSON), fetched "
        + ", ".join(f"{p} {d}" for p, d in fetched.items())
        + ":",
    ]
    lines += [f"#   {INDEX.format(p)}" for p in tables]
    lines += [
        "# Per project and final release (pre-releases, dev releases and yanked files left out):",
        "#   pythons / platforms: the wheels' Python tags (cp311; cp313t free-threaded; cp38-abi3; py3) and",
        "#     platforms (manylinux1/2010/2014/_2_x -> manylinux_<arch>, macosx_X_Y_<arch> -> macosx_<arch>,",
        "#     universal2 counted for both arches); wheels: the Python tags per platform;",
        "#   macos_min: the oldest macOS per arch a wheel names (an arm64 slice: never below 11.0);",
        "#   requires_python: the newest file's Requires-Python; sdist: an sdist is published;",
        "#   requires: the Requires-Dist lines naming torch, triton, pytorch-triton* or nvidia-* of the one",
        "#     wheel requires_from (a manylinux x86_64 CPython wheel where there is one), markers verbatim,",
        "#     read from its METADATA (PEP 658 file, else HTTP Range requests on the wheel).",
    ]
    for project, versions in tables.items():
        for version, row in versions.items():
            lines.append("")
            lines.append(f"[{project}.{_s(version)}]")
            lines.append(f"pythons = {_list(row['pythons'])}")
            lines.append(f"platforms = {_list(row['platforms'])}")
            if row["wheels"]:
                inner = ", ".join(f"{k} = {_list(v)}" for k, v in row["wheels"].items())
                lines.append(f"wheels = {{ {inner} }}")
            if "macos_min" in row:
                inner = ", ".join(f"{k} = {_s(v)}" for k, v in row["macos_min"].items())
                lines.append(f"macos_min = {{ {inner} }}")
            if "requires_python" in row:
                lines.append(f"requires_python = {_s(row['requires_python'])}")
            if row.get("sdist"):
                lines.append("sdist = true")
            if "requires_from" in row:
                lines.append(f"requires_from = {_s(row['requires_from'])}")
                if row["requires"]:
                    lines.append("requires = [")
                    lines += [f"  {_s(r)}," for r in row["requires"]]
                    lines.append("]")
                else:
                    lines.append("requires = []")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--refresh", action="store_true", help="fetch the index pages again")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--jobs", type=int, default=8)
    args = parser.parse_args(argv)
    started = time.monotonic()
    tables: dict[str, dict[str, dict]] = {}
    fetched: dict[str, str] = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for project in PROJECTS:
            index, fetched[project] = fetch_index(project, refresh=args.refresh)
            by_version = _release_versions(index)
            futures = {str(v): pool.submit(condense, v, files) for v, files in by_version.items()}
            tables[project] = {v: f.result() for v, f in futures.items()}
            print(f"{project}: {len(tables[project])} releases", file=sys.stderr)
    args.output.write_text(render(tables, fetched), encoding="utf-8")
    print(f"wrote {args.output} in {time.monotonic() - started:.1f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
