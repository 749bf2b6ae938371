"""Python distributions (dist-info / egg-info) on the env's import path, read from files only."""

from __future__ import annotations

import functools
import os
from pathlib import Path

from conda_torchcheck.inventory import fs
from conda_torchcheck.inventory.model import Distribution, Problem, SiteDir
from conda_torchcheck.inventory.names import normalize


def read_distributions(
    sites: tuple[SiteDir, ...],
) -> tuple[tuple[Distribution, ...], tuple[Path, ...], tuple[Problem, ...]]:
    """Distributions in ``sys.path`` order, ``~``-prefixed leftovers, and unreadable metadata."""
    dists: list[Distribution] = []
    leftovers: list[Path] = []
    problems: list[Problem] = []
    seen_sites: set[str] = set()
    for site in sites:
        if not site.active:
            continue
        key = str(site.path)
        if key in seen_sites:
            continue
        seen_sites.add(key)
        try:
            entries = sorted(site.path.iterdir(), key=lambda p: p.name.lower())
        except FileNotFoundError:
            continue
        except OSError as exc:  # the whole folder is hidden from pip and from import
            problems.append(Problem("unreadable", site.path, exc.strerror or str(exc)))
            continue
        for entry in entries:
            name = entry.name
            if name.startswith("~"):
                leftovers.append(entry)
                continue
            if name.endswith(".dist-info") or name.endswith(".egg-info"):
                dist, problem = read_distribution(entry, site)
                if dist is not None:
                    dists.append(dist)
                if problem is not None:
                    problems.append(problem)
    return tuple(dists), tuple(leftovers), tuple(problems)


def _read_text(path: Path, refused: list[Problem] | None = None) -> str | None:
    """A metadata file's text; None when absent or unreadable, the reason kept in ``refused`` (a FIFO, a link
    to a device, a file past any sane size or permissions) since the rest of the folder is still read."""
    try:
        return fs.read_text(path, fs.SMALL_LIMIT)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if refused is not None:
            refused.append(Problem("dist-metadata", path, f"cannot be read: {fs.describe(exc)}"))
        return None


def _read_metadata(path: Path) -> tuple[str | None, str | None]:
    """(text, problem): importlib.metadata reads METADATA as strict UTF-8 (the whole file, description
    included), so a bad byte anywhere is a problem pip will hit too."""
    try:
        raw = fs.read_bytes(path)
    except FileNotFoundError:
        return None, "the metadata file is missing"
    except OSError as exc:
        return None, f"cannot be read: {exc.strerror or exc}"
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return raw.decode("utf-8", errors="replace"), f"not UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})"


def parse_metadata_headers(text: str) -> dict[str, list[str]]:
    """The RFC 822 header block of METADATA/PKG-INFO (lower-cased names → values, continuation lines joined).

    email.parser would do the same but costs ~20 ms of imports on every run for three headers.
    """
    headers: dict[str, list[str]] = {}
    last: list[str] | None = None
    for line in text.splitlines():
        if not line.strip():
            break  # the body (long description) starts after the first blank line
        if line[0] in " \t" and last is not None:
            last[-1] += " " + line.strip()
            continue
        key, sep, value = line.partition(":")
        if not sep:
            continue
        last = headers.setdefault(key.strip().lower(), [])
        last.append(value.strip())
    return headers


def _first(values: list[str] | None) -> str | None:
    return values[0] if values else None


def read_distribution(meta_dir: Path, site: SiteDir) -> tuple[Distribution | None, Problem | None]:
    kind = "dist-info" if meta_dir.name.endswith(".dist-info") else "egg-info"
    if fs.is_dir(meta_dir):
        metadata_file = meta_dir / ("METADATA" if kind == "dist-info" else "PKG-INFO")
    else:  # a flat .egg-info file (distutils)
        metadata_file = meta_dir
    text, problem_detail = _read_metadata(metadata_file)
    name = version = None
    requires: tuple[str, ...] = ()
    if text:
        headers = parse_metadata_headers(text)
        name = _first(headers.get("name"))
        version = _first(headers.get("version"))
        requires = tuple(headers.get("requires-dist", ()))
    if not name or not version:
        # fall back on the directory name: torch-2.3.0+cpu.dist-info
        stem = meta_dir.name.rsplit(".", 1)[0]
        if "-" in stem:
            guess_name, guess_version = stem.split("-", 1)
            name = name or guess_name
            version = version or guess_version.split("-py")[0]
        if not name or not version:
            return None, Problem("dist-metadata", metadata_file, problem_detail or "no Name/Version in the metadata")
    installer = None
    direct_url = None
    has_record = False
    tags: tuple[str, ...] = ()
    refused: list[Problem] = []
    if fs.is_dir(meta_dir):
        # one listing instead of an open() per optional file: most folders lack direct_url.json, WHEEL …
        try:
            present = set(os.listdir(meta_dir))
        except OSError:
            present = {"INSTALLER", "direct_url.json", "RECORD", "requires.txt", "WHEEL"}
        inst = _read_text(meta_dir / "INSTALLER", refused) if "INSTALLER" in present else None
        installer = inst.strip() or None if inst is not None else None
        raw_direct = _read_text(meta_dir / "direct_url.json", refused) if "direct_url.json" in present else None
        if raw_direct:
            try:
                loaded = fs.parse_json(raw_direct)
                direct_url = loaded if isinstance(loaded, dict) else None
            except ValueError as exc:
                direct_url = None
                refused.append(Problem("dist-metadata", meta_dir / "direct_url.json", f"invalid JSON: {exc}"))
        has_record = "RECORD" in present and fs.is_regular_file(meta_dir / "RECORD")
        if "RECORD" in present and not has_record and fs.exists(meta_dir / "RECORD"):
            refused.append(Problem("dist-metadata", meta_dir / "RECORD", "cannot be read: not a regular file"))
        if kind == "egg-info" and not requires and "requires.txt" in present:
            req_text = _read_text(meta_dir / "requires.txt", refused)
            if req_text:
                requires = tuple(
                    line.strip() for line in req_text.splitlines() if line.strip() and not line.startswith("[")
                )
        wheel = _read_text(meta_dir / "WHEEL", refused) if "WHEEL" in present else None
        if wheel:
            tags = tuple(line.split(":", 1)[1].strip() for line in wheel.splitlines() if line.startswith("Tag:"))
    problem = Problem("dist-metadata", metadata_file, problem_detail) if problem_detail else None
    if problem is None and refused:
        problem = refused[0]
    return (
        Distribution(
            name=normalize(name),
            raw_name=name,
            version=version.strip(),
            metadata_dir=meta_dir,
            kind=kind,
            site=site.path,
            site_kind=site.kind,
            installer=installer,
            requires=requires,
            direct_url=direct_url,
            has_record=has_record,
            wheel_tags=tags,
        ),
        problem,
    )


def record_rows(record_path: Path) -> tuple[tuple[str, str, str], ...]:
    """The (path, hash, size) fields of a RECORD file, parsed once per file version.

    torch's RECORD has 10,000+ rows and several checks read it; the csv module is used only for the rare
    quoted rows (a path holding a comma), the rest is split from the right, since only the path can hold commas.
    """
    try:
        st = os.stat(record_path)
    except OSError:
        return ()
    return _record_rows(str(record_path), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=16)
def _record_rows(path: str, _mtime: int, _size: int) -> tuple[tuple[str, str, str], ...]:
    try:
        text = fs.read_bytes(path).decode("utf-8", errors="replace")
    except OSError:
        return ()
    rows: list[tuple[str, str, str]] = []
    quoted: list[str] = []
    for line in text.splitlines():
        if not line:
            continue
        if '"' in line:
            quoted.append(line)
            continue
        fields = line.rsplit(",", 2)
        rows.append((fields[0], fields[1] if len(fields) > 1 else "", fields[2] if len(fields) > 2 else ""))
    if quoted:
        import csv

        for row in csv.reader(quoted):
            if row:
                row += [""] * (3 - len(row))
                rows.append((row[0], row[1], row[2]))
    return tuple(rows)


#: what sends a RECORD to the row parser: a quoted field (csv), or a line break other than "\n" and "\r\n"
#: (splitlines knows more); each looked for with ``in``, many times faster on a 1.5 MB RECORD than a character class
_NOT_PLAIN = ('"', "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def record_sizes(record_path: Path, suffix: str) -> tuple[tuple[str, str], ...]:
    """(path, size) of the rows of :func:`record_rows` whose path ends with ``suffix`` (``.py``) and whose size
    field is not empty, in the same order, found without decoding or splitting the other rows: torch's RECORD
    has 15,000 rows, 2,400 of them ``.py`` files."""
    try:
        st = os.stat(record_path)
    except OSError:
        return ()
    return _record_sizes(str(record_path), st.st_mtime_ns, st.st_size, suffix)


#: what sends a RECORD to the row parser, as UTF-8 bytes: _NOT_PLAIN but "\r" (a "\r" not before "\n" does),
#: each with its first byte (searched for first: one byte is found at memchr's speed, a sequence is not)
_NOT_PLAIN_BYTES = tuple((c.encode("utf-8")[:1], c.encode("utf-8")) for c in _NOT_PLAIN if c != "\r")


@functools.lru_cache(maxsize=16)
def _record_sizes(path: str, mtime: int, size: int, suffix: str) -> tuple[tuple[str, str], ...]:
    try:
        raw = fs.read_bytes(path)
    except OSError:
        return ()
    needle = suffix.encode("utf-8") + b","
    if needle not in raw:  # a row with a size has two commas after its path, so the line holds the needle
        return ()
    if (
        not suffix
        or any(lead in raw and c in raw for lead, c in _NOT_PLAIN_BYTES)
        or (b"\r" in raw and raw.count(b"\r") != raw.count(b"\r\n"))
    ):  # quoted rows or other line breaks: the row parser
        rows = _record_rows(path, mtime, size)
        return tuple((row[0], row[2]) for row in rows if row[0].endswith(suffix) and row[2])
    out = []
    # each line holding the needle, found and decoded alone (UTF-8 decodes line by line as it decodes the whole:
    # "\n" and "," are never inside a character), split from the right as record_rows splits every line
    find, rfind = raw.find, raw.rfind
    at = find(needle)
    while at >= 0:
        start = rfind(b"\n", 0, at) + 1
        end = find(b"\n", at)
        if end < 0:
            end = len(raw)
        line = raw[start : end - 1 if raw[end - 1 : end] == b"\r" else end]
        fields = line.rsplit(b",", 2)
        if len(fields) == 3 and fields[2] and fields[0].endswith(needle[:-1]):
            out.append((fields[0].decode("utf-8", errors="replace"), fields[2].decode("utf-8", errors="replace")))
        at = find(needle, end)
    return tuple(out)


def record_paths(dist: Distribution, *, mentioning: str = "", under: str = "") -> tuple[str, ...]:
    """The path field of each RECORD row, as :func:`record_rows` gives it, without parsing hashes or sizes.

    The loading checks only ask which files a package has; hashes are read only by what verifies them. With
    ``mentioning`` (``.so``), a RECORD whose text does not hold it anywhere gives no rows without being split
    (the checks that look for extension modules ask this of every package, most of them pure Python). With
    ``under`` (``torch/lib``), only the paths inside that folder ('/' or '\\' between its parts), found without
    splitting the other rows (torch's RECORD has 15,000).
    """
    try:
        st = os.stat(dist.record_path)
    except OSError:
        return ()
    return _record_paths(str(dist.record_path), st.st_mtime_ns, st.st_size, mentioning, under)


@functools.lru_cache(maxsize=16)
def _record_paths(path: str, mtime: int, size: int, mentioning: str = "", under: str = "") -> tuple[str, ...]:
    try:
        # the bounded reader, as every file of the target (a FIFO or a sparse 4 GB RECORD is refused, not read)
        text = fs.read_bytes(path).decode("utf-8", errors="replace")
    except OSError:
        return ()
    if mentioning not in text:  # a path holding it holds it in the file's text too (csv only doubles quotes)
        return ()
    if "\r" in text:  # pip writes its RECORD through csv, "\r\n" after every row
        text = text.replace("\r\n", "\n")
    if any(c in text for c in _NOT_PLAIN):
        paths = tuple(row[0] for row in _record_rows(path, mtime, size))
        if under:
            inside = under.replace("\\", "/").strip("/") + "/"
            paths = tuple(p for p in paths if p.replace("\\", "/").startswith(inside))
        return paths
    if under:  # the lines that start with the folder: a C-speed search, then a look at the character before
        import re

        parts = under.replace("\\", "/").strip("/").split("/")
        folder = re.compile(r"[/\\]".join(map(re.escape, parts)) + r"[/\\][^\n]*")
        lines = [m.group() for m in folder.finditer(text) if m.start() == 0 or text[m.start() - 1] == "\n"]
        return tuple(line.rsplit(",", 2)[0] for line in lines)
    # only the path can hold commas: it is what is left of the line once the last two fields are cut off
    return tuple(line.rsplit(",", 2)[0] for line in text.split("\n") if line)


def read_record_file(dist: Distribution) -> list[tuple[str, str | None, int | None]]:
    """RECORD rows as (path relative to the site dir, sha256 in urlsafe-base64 or None, size or None)."""
    out = []
    for path, digest, size in record_rows(dist.record_path):
        out.append(
            (
                path,
                digest[len("sha256=") :] if digest.startswith("sha256=") else None,
                int(size) if size.strip().isdigit() else None,
            )
        )
    return out
