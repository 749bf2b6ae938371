"""Find the known errors in a pasted text: a traceback, a log, a whole bug-report thread."""

from __future__ import annotations

import bisect
import html
import itertools
import re
from dataclasses import dataclass, field, replace

from conda_torchcheck.explain.patterns import Pattern, PatternTable, table
from conda_torchcheck.knowledge import parse_version

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# GitHub/e-mail quote markers and the frame characters of rich/pretty tracebacks at the start of a line
_LINE_PREFIX = re.compile(r"^(?:[ \t]*>[ \t]?)+|^[ \t]*[│┃║|][ \t]?", re.MULTILINE)
_FRAME_CHARS = "│┃║"
# what a log writer puts before each line: journald/syslog ("Aug 12 10:38:34 host unit[123]: "), ISO timestamps
# (GitHub Actions, docker logs -t: "2024-05-01T10:00:00.1234567Z "), docker compose ("web-1  | ")
_LOG_PREFIX = re.compile(
    r"^(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ [\w.@/-]+(?:\[\d+\])?: "
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)? "
    r"|[\w.-]+-\d+\s+\| )",
    re.MULTILINE,
)
_TRACEBACK_START_TEXT = "Traceback (most recent call last)"
# the line of a previous exception ("ImportError: ..."): frames before it belong to another error
_EXCEPTION_LINE = re.compile(r"^[ \t]*[A-Za-z_][\w.]*(?:Error|Exception|Warning)\b[^\n]*:", re.MULTILINE)

#: characters that end a path token when reading backwards from an anchor ("/x/libtorch_cpu.so: undefined ...")
_PATH_STOP = frozenset(" \t\r\n'\"`(:")
PATH_LIMIT = 1000
CONTEXT_AFTER = 1500  # characters searched after an anchor for the DLL name etc. (one traceback message)
CONTEXT_BEFORE = 6000  # characters searched back for the failing frame


@dataclass(frozen=True)
class Match:
    """One recognised error: which pattern, what it names, where in the text."""

    pattern_id: str
    fields: dict[str, str] = field(hash=False)
    excerpt: str = ""
    start: int = 0
    end: int = 0
    #: how many times the same error (same fields) appears in the text
    count: int = 1
    #: on the last error of a pattern explained in full: how many more distinct ones of it the text holds
    #: (DISTINCT_PER_PATTERN), said rather than dropped
    more_distinct: int = 0

    def to_dict(self) -> dict[str, object]:
        doc: dict[str, object] = {
            "pattern": self.pattern_id,
            "fields": dict(self.fields),
            "excerpt": self.excerpt,
            "count": self.count,
        }
        if self.more_distinct:
            doc["more_distinct"] = self.more_distinct
        return doc


def normalize_text(text: str) -> str:
    """Undo what pasting does to an error: CRLF, colour codes, HTML entities, quote markers, log line prefixes,
    escaped backticks, box frames."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    text = _ANSI.sub("", text)
    if "&" in text:
        text = html.unescape(text)
    text = _LINE_PREFIX.sub("", text)
    text = _LOG_PREFIX.sub("", text)
    if "\\`" in text:  # GitHub's Markdown escaping of backticks, kept when a reply is copied from its source
        text = text.replace("\\`", "`")
    if any(ch in text for ch in _FRAME_CHARS):  # a rich/pretty traceback frame: drop the right border
        lines = []
        for line in text.split("\n"):
            stripped = line.rstrip(" \t")
            lines.append(stripped[:-1].rstrip(" \t") if stripped.endswith(tuple(_FRAME_CHARS)) else line)
        text = "\n".join(lines)
    return text


def _base_name(path: str) -> str:
    # "...fbgemm.dll" / ",,,\shm.dll": an elided or mistyped prefix is not part of the name
    name = re.split(r"[\\/]+", path.strip().strip("'\"`“”"))[-1].strip("'\"`“”")
    return name.lstrip(".,…") or name


_VERSION = re.compile(r"\d+(?:\.\d+)+")


_COMPANION_FOLDER = re.compile(
    r"(?:^|[\\/])(torchvision|torchaudio|torchtext|torchdata)[\\/][^\\/]*(?:[\\/][^\\/]*)?\.so"
)
#: a companion's library named without its folder: libtorchaudio.so, _torchaudio.so, libtorchvision.so, and
#: torchaudio's old SoX extension _torch_sox (its own top-level module, beside the torchaudio package)
_COMPANION_LIBRARY = re.compile(r"(?:lib|_)(torchaudio|torchvision|torchtext)\w*\.(?:so|dylib|pyd)|_torch_sox\b")
_SITE_PACKAGE = re.compile(r"[\\/](?:site|dist)-packages[\\/]+([A-Za-z0-9_.-]+?)[\\/]", re.IGNORECASE)
_SONAME_MAJOR = re.compile(r"\.so\.(\d+)")


def library_role(name: str, path: str | None, tbl: PatternTable) -> str | None:
    """Whose library ``name`` (at ``path``, when the text gives one) is: [[library_role]], first match wins."""
    full = (path or "").replace("\\", "/")
    for entry in tbl.library_roles:
        if entry.path is not None and not (full and entry.path.search(full)):
            continue
        if entry.name is not None and not entry.name.search(name):
            continue
        return entry.role
    return None


def cuda_major_of(name: str, tbl: PatternTable) -> str | None:
    """The CUDA major a versioned NVIDIA library name belongs to (``libcudart.so.10.1`` -> 10), from
    [[cuda_soname]]; None when its soname major does not tell (libcurand.so.10 ships with CUDA 10 to 12)."""
    m = _SONAME_MAJOR.search(name)
    if not m:
        return None
    for regex, majors in tbl.cuda_sonames:
        if regex.search(name):
            return majors.get(m.group(1))
    return None


_CUDATOOLKIT_SPEC = re.compile(r"^cudatoolkit\s*=?=?\s*(\d+\.\d+)")
#: Windows' MAX_PATH (260, the terminating NUL included): a longer path fails unless LongPathsEnabled is set
_MAX_PATH = 260


def _derive(fields: dict[str, str], tbl: PatternTable) -> dict[str, str]:
    out = {k: v.strip().rstrip(".,;") if k != "reason" else v.strip() for k, v in fields.items() if v}
    for key in list(out):
        if key.endswith("_path"):
            out[key] = out[key].strip().strip("'\"`“”„").rstrip("\\")
            out.setdefault(key[: -len("_path")], _base_name(out[key]))
    missing = out.get("missing_path")
    if missing:
        # pip prints the path as a Python repr ('C:\\Users\\...'): one backslash per separator on disk
        length = len(missing.replace("\\\\", "\\"))
        out["length"] = str(length)
        out["path_too_long"] = "yes" if length >= _MAX_PATH else "no"
    toolkit = _CUDATOOLKIT_SPEC.match(out.get("requirement", ""))
    if toolkit:
        from conda_torchcheck.knowledge import releases

        channels = releases.cudatoolkit_channels(toolkit.group(1))
        if channels:
            out["cudatoolkit_from"] = ", ".join(channels)
    required_by = out.get("required_by")
    if required_by:
        role = library_role(required_by, out.get("required_by_path"), tbl)
        if role:
            out["required_by_role"] = role
    library = out.get("library")
    if library:
        role = library_role(library, out.get("library_path"), tbl)
        if role:
            out["library_role"] = role
        cuda = cuda_major_of(library, tbl)
        if cuda:
            out["library_cuda"] = cuda
        # the package of the library, else of the binary that needed it
        site = _SITE_PACKAGE.search(out.get("library_path", "")) or _SITE_PACKAGE.search(
            out.get("required_by_path", "")
        )
        if site:
            out.setdefault("package", site.group(1))
        else:
            # a path cut before site-packages still names a companion by its folder (torchvision/_C.so)
            companion = _COMPANION_FOLDER.search(out.get("library_path", "")) or _COMPANION_LIBRARY.match(library)
            if companion:
                out.setdefault("package", companion.group(1) or "torchaudio")
    dll = out.get("dll")
    if dll and out.get("dll_path"):
        # whose DLL Windows failed to load: torch's own, a companion's or another package's (dgl\dgl.dll,
        # xformers, torch_scatter): the same [[library_role]] table as the Linux paths
        role = library_role(dll, out["dll_path"], tbl)
        if role:
            out["dll_role"] = role
        site = _SITE_PACKAGE.search(out["dll_path"])
        if site:
            out.setdefault("package", site.group(1))
    if "frame_package" in out:
        out.setdefault("package", out["frame_package"])
    versions = out.get("versions")
    if versions is not None:
        # pip's "(from versions: 2.0.0, ..., 2.2.2)": the newest version the index offers this interpreter
        found = [v for v in (parse_version(x) for x in _VERSION.findall(versions)) if v is not None]
        out["available"] = "some" if found else "none"
        if found:
            out["newest"] = str(max(found))
    provider = out.get("symbol_version")
    if provider and provider.startswith("lib"):
        # `undefined symbol: X, version libcusparse.so.11`: the library the symbol was linked against, and so the
        # CUDA major it came with
        out["provider"] = provider
        cuda = cuda_major_of(provider, tbl)
        if cuda:
            out["provider_cuda"] = cuda
    found = out.get("found")
    if found and found.isdigit() and len(found) >= 4:
        # the driver's CUDA API version as torch prints it: 1000 * major + 10 * minor (11040 = CUDA 11.4)
        value = int(found)
        out["found_cuda"] = f"{value // 1000}.{(value % 1000) // 10}"
    version = out.get("version", "")
    if version.upper().startswith("GLIBCXX_"):
        gcc = tbl.glibcxx_gcc.get(version.split("_", 1)[1])
        if gcc:
            out["needed_gcc"] = str(gcc)
    return out


def _excerpt(text: str, start: int, end: int, limit: int = 300) -> str:
    """The line(s) holding the error, cut around it when the paste has no line breaks."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    if line_end == -1:
        line_end = len(text)
    if line_end - line_start <= limit:
        return text[line_start:line_end].strip()
    begin = max(line_start, start - 60)
    stop = min(line_end, max(end, begin + limit))
    return ("…" if begin > line_start else "") + text[begin:stop].strip() + ("…" if stop < line_end else "")


def path_token_before(text: str, end: int) -> tuple[str, int]:
    """The run of path characters that ends at ``end`` (bounded), and where it starts."""
    start = end
    floor = max(0, end - PATH_LIMIT)
    while start > floor and text[start - 1] not in _PATH_STOP:
        start -= 1
    return text[start:end], start


#: an import statement typed at a prompt (normalize_text has taken the ">>> " off)
_PROMPT = re.compile(r"[ \t]*(?:(?:>>>|In \[\d+\]:)[ \t]+)?(?:from[ \t]+[\w.]+[ \t]+import[ \t]|import[ \t]+\w)")


def _context(text: str, pattern: Pattern, start: int, next_start: int) -> tuple[dict[str, str], int]:
    fields: dict[str, str] = {}
    end = start
    window_end = min(len(text), start + CONTEXT_AFTER, next_start)
    window = text[start:window_end]
    for regex in pattern.context:
        m = regex.search(window)
        if m:
            for key, value in m.groupdict().items():
                if value and key not in fields:
                    fields[key] = value
            end = max(end, start + m.end())
    if pattern.context_before:
        begin = max(0, start - CONTEXT_BEFORE)
        tb = text.rfind(_TRACEBACK_START_TEXT, begin, start)
        if tb != -1:
            begin = tb
            # the import typed at the prompt just above the traceback (">>> from pytorch3d import _C")
            prompt_line = text.rfind("\n", 0, max(0, text.rfind("\n", 0, begin))) + 1
            if _PROMPT.match(text, prompt_line) and prompt_line < begin:
                begin = prompt_line
        # bounded by the window: on a 4 MB single-line paste an unbounded rfind per hit would be quadratic
        newline = text.rfind("\n", begin, start)
        line_start = newline + 1 if newline != -1 else begin
        previous = _last_exception_line(text, begin, line_start)
        if previous is not None:
            begin = text.find("\n", previous, line_start) + 1 or line_start
        before = text[begin:start]
        for regex in pattern.context_before:
            hits = list(regex.finditer(before))
            if hits:
                for key, value in hits[-1].groupdict().items():
                    if value and key not in fields:
                        fields[key] = value
    return fields, end


def _last_exception_line(text: str, begin: int, line_start: int) -> int | None:
    """Where the last ``_EXCEPTION_LINE`` match between ``begin`` and ``line_start`` ends: the lines are tried
    from the nearest one back, so a log of 40,000 identical error lines costs one try per error, not a scan
    of the whole window each time."""
    end = line_start - 1  # the newline that ends the line before
    while end >= begin:
        newline = text.rfind("\n", begin, end)
        if newline != -1:
            ls = newline + 1
        elif begin == 0 or text[begin - 1] == "\n":
            ls = begin
        else:
            return None  # the line starts before the window
        m = _EXCEPTION_LINE.match(text, ls, line_start)
        if m:
            return m.end()
        end = ls - 1
    return None


@dataclass(frozen=True)
class PasteClues:
    """What the paste says about the setup besides its errors (see [[clue]] in error_patterns.toml)."""

    ids: frozenset[str] = frozenset()
    #: fact -> value (source, layout, os, torch, variant, cuda, python, bits); facts the paste contradicts itself
    #: about (two torch versions, a conda path and a python.org path) are left out
    facts: dict[str, str] = field(default_factory=dict)
    #: fact -> the clue that set it
    fact_clues: dict[str, str] = field(default_factory=dict)


#: above this size a paste is a log: clues are read from its head, its tail and around each recognised error
#: (a 10 MB CI log's setup lines that matter sit there; reading all of it would cost more than recognising)
CLUE_FULL_TEXT = 1_000_000
CLUE_EDGE = 200_000
CLUE_AROUND = 20_000


#: above this size the clue text keeps each distinct line once (its first time): a log repeating the same
#: frames or lines tells nothing more the second time, and every clue regex would scan each copy
CLUE_DEDUP_FROM = 256_000


def _distinct_lines(text: str) -> str:
    seen: set[str] = set()
    kept = []
    for line in text.split("\n"):
        if line not in seen:
            seen.add(line)
            kept.append(line)
    return "\n".join(kept)


def clue_text(text: str, matches: list[Match]) -> str:
    """The part of a (normalized) paste that clues are read from: all of it, or for a log the parts that matter
    (each distinct line once)."""
    if len(text) <= CLUE_DEDUP_FROM:
        return text
    if len(text) <= CLUE_FULL_TEXT:
        return _distinct_lines(text)
    spans = [(0, CLUE_EDGE), (len(text) - CLUE_EDGE, len(text))]
    spans += [(max(0, m.start - CLUE_AROUND), m.end + CLUE_AROUND) for m in matches]
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return _distinct_lines("\n".join(text[a:b] for a, b in merged))


def find_clues(text: str, tbl: PatternTable | None = None, *, normalized: bool = False) -> PasteClues:
    """The clues in ``text``: each [[clue]] regex is searched once through the whole text (linear)."""
    tbl = tbl or table()
    if not normalized:
        text = normalize_text(text)
    lowered = text.lower()
    ids: set[str] = set()
    hits: list[tuple[str, dict[str, str]]] = []
    for clue in tbl.clues:
        if clue.needles and not any(n in lowered for n in clue.needles):
            continue
        for regex in clue.regexes:
            for m in regex.finditer(text):
                ids.add(clue.id)
                found = {k: v for k, v in m.groupdict().items() if v}
                found.update({k: v for k, v in clue.facts.items() if k not in found})
                hits.append((clue.id, found))
                if not m.groupdict():
                    break  # a clue without named groups: one hit is enough
    # a clue's facts do not hold beside one of its `unless` clues (a conda env named Python311)
    silenced = {c.id for c in tbl.clues if set(c.unless) & ids}
    values: dict[str, set[str]] = {}
    origin: dict[str, str] = {}
    for clue_id, found in hits:
        if clue_id in silenced:
            continue
        for key, value in found.items():
            values.setdefault(key, set()).add(_fact_value(key, value))
            origin.setdefault(key, clue_id)
    facts = {}
    differing: set[str] = set()
    for key, found in values.items():
        longest = max(found, key=len)
        # "3.8" and "3.8.10" agree; "2.3.0" and "2.5.1" do not
        if all(longest == v or longest.startswith(v + ".") for v in found):
            facts[key] = longest
        else:
            differing.add(key)
    ids.update(c.id for c in tbl.clues if c.differing in differing)
    tag = facts.pop("build_cuda_tag", None)
    if tag and tag.isdigit():
        # +cu102 -> 10.2, +cu92 -> 9.2; a stated build_cuda that disagrees leaves neither
        from conda_torchcheck.knowledge.version import cuda_tag_version

        from_tag = cuda_tag_version(f"cu{tag}")
        if facts.get("build_cuda", from_tag) == from_tag and "build_cuda" not in differing:
            facts["build_cuda"] = from_tag
            origin.setdefault("build_cuda", origin.get("build_cuda_tag", "build-cuda"))
        else:
            facts.pop("build_cuda", None)
    ids.update(driver_clues(facts))
    return PasteClues(frozenset(ids), facts, {k: origin[k] for k in facts})


#: derived clue ids: the paste's own numbers prove the driver cannot run the build, or that it can
DRIVER_TOO_OLD = "driver-too-old-for-build"
DRIVER_RUNS_BUILD = "driver-runs-build"
#: the clue ids computed from facts rather than read by a [[clue]] regex (the table's checks accept them)
DERIVED_CLUES = (DRIVER_TOO_OLD, DRIVER_RUNS_BUILD)
#: a derived clue that proves a cause from the paste's own numbers (decide.py calls such a first cause decided)
PROVES = {DRIVER_TOO_OLD: "driver-older-than-build"}


def driver_clues(facts: dict[str, str]) -> set[str]:
    """What the paste's driver and build numbers decide (knowledge/cuda_driver.toml): collect_env's "Nvidia driver
    version: 410.104" under "CUDA used to build PyTorch: 10.2" is a driver too old for the build (10.2 needs
    440.33); nvidia-smi's "CUDA Version: 11.4" is the newest CUDA its driver runs. Nothing when they do not decide
    (minor-version compatibility between the family minimum and the toolkit's own driver, an OS not stated where
    the Linux and Windows numbers differ)."""
    build = facts.get("build_cuda")
    if not build:
        return set()
    from conda_torchcheck.knowledge.cuda import driver_runs_cuda

    os_name = facts.get("os")
    verdict = None
    if facts.get("driver"):
        verdict = driver_runs_cuda(facts["driver"], build, os_name)
    if verdict is None and facts.get("driver_cuda"):
        have, want = parse_version(facts["driver_cuda"]), parse_version(build)
        if have is not None and want is not None:
            if have >= want:
                verdict = True
            elif want.release[0] < 11 or have.release[0] < want.release[0]:
                verdict = False  # no minor-version compatibility before 11, none across majors
    if verdict is None:
        return set()
    return {DRIVER_RUNS_BUILD if verdict else DRIVER_TOO_OLD}


def _fact_value(key: str, value: str) -> str:
    value = value.strip()
    if key == "python" and value.lower().startswith("py"):
        value = value[2:]  # a folder named py312
    if key == "python" and value.isdigit() and len(value) >= 2:
        return f"{value[0]}.{value[1:]}"  # Python311 / cp311 -> 3.11
    if key == "variant":
        value = value.lower()
        return "cuda" if value.startswith("cu") else ("rocm" if value.startswith("rocm") else value)
    if key == "torch":
        v = parse_version(value.split("+", 1)[0])
        return str(v) if v is not None else value
    return value.lower()


def recognise(text: str, tbl: PatternTable | None = None, *, normalized: bool = False) -> list[Match]:
    """Every known error in ``text``, in order of first appearance; repeats of the same error are counted once."""
    tbl = tbl or table()
    if not normalized:
        text = normalize_text(text)
    raw: list[tuple[Pattern, int, int, dict[str, str]]] = []
    lowered = text.lower()
    for pattern in tbl.patterns:
        if pattern.needles and not any(n in lowered for n in pattern.needles):
            continue
        hits = sorted(
            (m for regex in pattern.anchors for m in regex.finditer(text)),
            key=lambda m: m.start(),
        )
        starts = [m.start() for m in hits]
        for m in hits:
            # the first later hit that starts after this one (a bisection: a log repeats one line 40,000 times)
            after = bisect.bisect_right(starts, m.start())
            next_start = starts[after] if after < len(starts) else len(text)
            fields = {k: v for k, v in m.groupdict().items() if v}
            begin = m.start()
            if pattern.path_before is not None:
                name, required = pattern.path_before
                token, begin = path_token_before(text, m.start())
                if not token or not required.search(token.rsplit("/", 1)[-1]):
                    continue
                fields[name] = token
            extra, end = _context(text, pattern, m.start(), next_start)
            for key, value in extra.items():
                fields.setdefault(key, value)
            raw.append((pattern, begin, max(m.end(), end), _derive(fields, tbl)))
    # a fallback hit overlapping any specific one is dropped: the specific spans sorted by start, with the
    # furthest end reached so far, answer "does one start before `end` and end after `start`" by bisection
    specific_spans = sorted((s, e) for p, s, e, _ in raw if not p.fallback)
    span_starts = [s for s, _ in specific_spans]
    furthest_end = list(itertools.accumulate((e for _, e in specific_spans), max))
    merged: dict[tuple, Match] = {}
    for pattern, start, end, fields in sorted(raw, key=lambda r: r[1]):
        if pattern.fallback:
            before_end = bisect.bisect_left(span_starts, end)
            if before_end and furthest_end[before_end - 1] > start:
                continue
        key = (pattern.id, tuple(sorted((k, v.lower()) for k, v in fields.items() if not k.endswith("_path"))))
        if key in merged:
            prev = merged[key]
            merged[key] = Match(prev.pattern_id, prev.fields, prev.excerpt, prev.start, prev.end, prev.count + 1)
            continue
        merged[key] = Match(pattern.id, fields, _excerpt(text, start, end), start, end)
    return _first_of_each_pattern(_fold_partial(sorted(merged.values(), key=lambda m: m.start)))


#: distinct errors of one pattern explained in full; a paste naming more (a log of 25,000 distinct DLL failures)
#: is one problem seen many ways, and explaining each would make the output, not the matching, the cost
DISTINCT_PER_PATTERN = 100


def _first_of_each_pattern(matches: list[Match]) -> list[Match]:
    seen: dict[str, int] = {}
    last: dict[str, int] = {}
    out: list[Match] = []
    for m in matches:
        seen[m.pattern_id] = seen.get(m.pattern_id, 0) + 1
        if seen[m.pattern_id] <= DISTINCT_PER_PATTERN:
            last[m.pattern_id] = len(out)
            out.append(m)
    for pattern_id, index in last.items():
        extra = seen[pattern_id] - DISTINCT_PER_PATTERN
        if extra > 0:
            out[index] = replace(out[index], more_distinct=extra)
    return out


#: fields that tell the form of the text (the bare first line of a message), not which error it is
_FORM_FIELDS = frozenset({"bare"})


def _fold_partial(matches: list[Match]) -> list[Match]:
    """An issue title that repeats the error without the DLL name is the same error as the full one below.

    Linear in the matches for real pastes: a candidate is looked up through the rarest (field, value) it must
    share instead of comparing every pair (10,000 distinct DLL lines made that a hundred million comparisons).
    """
    named_of = [{k: v.lower() for k, v in m.fields.items() if k not in _FORM_FIELDS} for m in matches]
    lowered = [{k: v.lower() for k, v in m.fields.items()} for m in matches]
    by_pattern: dict[str, list[int]] = {}
    by_pair: dict[tuple[str, str, str], list[int]] = {}
    for i, m in enumerate(matches):
        by_pattern.setdefault(m.pattern_id, []).append(i)
        for key, value in lowered[i].items():
            by_pair.setdefault((m.pattern_id, key, value), []).append(i)

    def holding(pattern_id: str, wanted: dict[str, str]) -> list[int]:
        """Indexes of the matches of ``pattern_id`` whose fields hold every (key, value) of ``wanted``."""
        if not wanted:
            return by_pattern[pattern_id]
        pools = [by_pair.get((pattern_id, k, v), []) for k, v in wanted.items() if v]
        pool = min(pools, key=len) if pools else by_pattern[pattern_id]
        return [j for j in pool if all(lowered[j].get(k, "") == v for k, v in wanted.items())]

    kept: list[int] = []
    for i, m in enumerate(matches):
        named = named_of[i]
        if not any(j != i and len(matches[j].fields) > len(named) for j in holding(m.pattern_id, named)):
            kept.append(i)
    kept_set = set(kept)
    extra = dict.fromkeys(kept, 0)
    for d in range(len(matches)):
        if d in kept_set:
            continue
        for j in holding(matches[d].pattern_id, named_of[d]):
            if j in kept_set:
                extra[j] += matches[d].count
    counted = []
    for i in kept:
        m = matches[i]
        counted.append(Match(m.pattern_id, m.fields, m.excerpt, m.start, m.end, m.count + extra[i]) if extra[i] else m)
    return counted
