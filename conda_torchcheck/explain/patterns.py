"""The error pattern table (``error_patterns/*.toml``) read into frozen dataclasses with compiled regexes."""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from conda_torchcheck._toml import load_toml_text
from conda_torchcheck.lazy_re import LazyPattern

_FLAGS = re.IGNORECASE | re.MULTILINE
_REASON_MACRO = re.compile(r"\{reason:(\w+)\}")
_MODULES_MACRO = re.compile(r"\{modules:(\w+)\}")


@dataclass(frozen=True)
class CauseRef:
    """One entry in a pattern's ranked cause list."""

    cause: str
    #: field -> regex; the entry counts only when every field is present and matches
    when: Mapping[str, re.Pattern[str]] = field(default_factory=dict)
    #: other pattern ids that, seen in the same text, move this cause to the front
    hints: tuple[str, ...] = ()
    #: a ``when`` that only promotes: when it does not hold, the cause is not ruled out for later entries
    soft: bool = False
    #: field -> regex; when the text names the field and it matches, the cause is contradicted (an absent
    #: field says nothing, unlike ``when``)
    unless: Mapping[str, re.Pattern[str]] = field(default_factory=dict)
    #: the entry counts only when one of its ``hints`` was seen (a clue-only ranking: python-32bit for a
    #: Python37-32 path)
    hint_only: bool = False


@dataclass(frozen=True)
class Applies:
    """Env facts a cause needs; on an env that lacks them the cause is ruled out."""

    os: tuple[str, ...] = ()
    source: tuple[str, ...] = ()
    variant: tuple[str, ...] = ()
    torch: str | None = None  # PEP 440 specifier on torch's public version
    cuda: str | None = None
    python: str | None = None


@dataclass(frozen=True)
class Cause:
    id: str
    confirm: tuple[str, ...]
    mentions: tuple[str, ...]
    applies: Applies
    commands: tuple[str, ...]
    sources: tuple[str, ...]
    #: clue ids whose presence in the paste contradicts the cause's premise (demoted, with the reason) ...
    contradicted_by: tuple[str, ...] = ()
    #: ... unless one of these clues is there too
    supported_by: tuple[str, ...] = ()
    #: other ids the same cause is known by (reports filed under another name)
    aliases: tuple[str, ...] = ()
    #: fixing it only lets the import get further (import torch first): when the paste shows other errors
    #: too, their causes are ranked before it
    defer: bool = False
    #: an env fact that confirms the cause when the error and the env are read together (diagnose.ENV_FACTS):
    #: "torch-installed" for "No module named 'torch'" from an env that has torch
    confirm_env: str | None = None
    #: info findings of ``confirm`` confirm it too (TC502 "no NVIDIA driver" is only info to ``check``, where a
    #: CUDA build without a GPU is fine, but it is the answer to "Found no NVIDIA driver on your system")
    confirm_info: bool = False

    @property
    def checkable(self) -> bool:
        return bool(self.confirm) or self.confirm_env is not None


@dataclass(frozen=True)
class Pattern:
    id: str
    platform: str  # windows, linux, any
    anchors: tuple[re.Pattern[str], ...]
    context: tuple[re.Pattern[str], ...]
    context_before: tuple[re.Pattern[str], ...]
    causes: tuple[CauseRef, ...]
    fallback: bool = False
    #: a warning or notice that accompanies the real error (ranked after the main errors of a paste)
    secondary: bool = False
    #: (field, required regex): the path token right before the anchor, read backwards
    path_before: tuple[str, re.Pattern[str]] | None = None
    #: lower-case literals one of which every anchor hit contains (see Clue.needles)
    needles: tuple[str, ...] = ()


@dataclass(frozen=True)
class Clue:
    """Something in the paste that is not an error but tells about the setup: a conda env path, a python.org
    Python, a 32-bit Python, a torch version. Clues promote causes (``hints``) and contradict premises."""

    id: str
    regexes: tuple[re.Pattern[str], ...]
    #: paste facts the clue sets (source, layout, os, bits ...); named groups of the regex are facts too
    facts: Mapping[str, str] = field(default_factory=dict)
    #: lower-case literals one of which every hit contains: the regexes run only when the text has one (a
    #: regex without a literal prefix scans a 10 MB log slowly; `in` does not)
    needles: tuple[str, ...] = ()
    #: clue ids beside which this clue's facts do not hold (its id still counts for hints)
    unless: tuple[str, ...] = ()
    #: a fact this clue stands for when the paste states two values of it that disagree (a folder named py312
    #: beside "Python: 3.13"): the clue has no regexes of its own
    differing: str | None = None


@dataclass(frozen=True)
class LibraryRole:
    """Whose shared library a path names: torch's own, an extension's, NVIDIA's, the system's."""

    role: str
    name: re.Pattern[str] | None
    path: re.Pattern[str] | None


@dataclass(frozen=True)
class PatternTable:
    patterns: tuple[Pattern, ...]
    causes: Mapping[str, Cause]
    reasons: Mapping[str, tuple[str, ...]]
    glibcxx_gcc: Mapping[str, int]
    clues: tuple[Clue, ...] = ()
    library_roles: tuple[LibraryRole, ...] = ()
    #: (library base-name regex, {soname major: CUDA major}) from [[cuda_soname]]
    cuda_sonames: tuple[tuple[re.Pattern[str], Mapping[str, str]], ...] = ()

    def pattern(self, pattern_id: str) -> Pattern:
        for p in self.patterns:
            if p.id == pattern_id:
                return p
        raise KeyError(pattern_id)


#: code pages a localized Windows message is written in (UTF-8 for Python's own text; GBK, Big5, Shift-JIS, UHC
#: and cp1251 for a console in China, Taiwan, Japan, Korea, Russia)
_SOURCE_CODE_PAGES = ("utf-8", "gbk", "big5", "cp932", "cp949", "cp1251")


def _as_cp1252(raw: bytes) -> str:
    # bytes cp1252 leaves undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D) show as their Latin-1 control characters
    return "".join(bytes([b]).decode("cp1252", errors="ignore") or chr(b) for b in raw)


def mojibake_forms(text: str) -> list[str]:
    """``text`` as it looks after its bytes were decoded with the wrong code page.

    Two ways are common in pastes: a console's bytes read as UTF-8 with replacement (``找不到指定的模块`` in GBK
    becomes ``�Ҳ���ָ����ģ��``), and bytes shown as cp1252 (GBK ``ÕÒ²»µ½Ö¸¶¨µÄÄ£¿é``, UTF-8 ``NÃ£o``).
    Broken-UTF-8 forms that kept fewer than two real characters are left out: they would match any broken text.
    """
    out: list[str] = []
    for cp in _SOURCE_CODE_PAGES:
        try:
            raw = text.encode(cp)
        except UnicodeEncodeError:
            continue
        if raw.isascii():
            continue
        forms = [_as_cp1252(raw)]
        if cp != "utf-8":
            broken = raw.decode("utf-8", errors="replace")
            if sum(ch != "\ufffd" and not ch.isspace() for ch in broken) >= 2:
                forms.append(broken)
        out.extend(f for f in forms if f != text and f not in out)
    return out


def _literal_regex(form: str) -> str:
    # decoders differ in how many U+FFFD they write per bad byte run: any run of them stands for another
    parts: list[str] = []
    for ch in form.strip():
        if ch == "\ufffd":
            if not parts or parts[-1] != "\ufffd{1,8}":
                parts.append("\ufffd{1,8}")
        elif ch.isspace():
            if not parts or parts[-1] != r"\s*":
                parts.append(r"\s*")
        else:
            parts.append(re.escape(ch))
    return "".join(parts)


def reason_regex(texts: tuple[str, ...]) -> str:
    """An alternation of system message texts that tolerates the ways they get mangled in pastes.

    Whitespace may be added, dropped or wrapped; ASCII and full-width parentheses, straight and typographic
    apostrophes, and the final period (``.`` / ``。``) are interchangeable or missing. Each text also matches
    its mojibake forms (``mojibake_forms``): GBK console output read as UTF-8 or shown as cp1252.
    """
    alternatives = []
    for text in texts:
        for form in mojibake_forms(text.strip().rstrip(".。")):
            alternatives.append(_literal_regex(form))
        core = text.strip().rstrip(".。")
        parts = []
        for ch in core:
            if ch.isspace():
                if not parts or parts[-1] != r"\s*":
                    parts.append(r"\s*")
            elif ch in "(（":
                parts.append(r"\s*[(（]\s*")
            elif ch in ")）":
                parts.append(r"\s*[)）]\s*")
            elif ch in "'’":
                # typographic and straight apostrophes both appear in pastes of the same French/Italian text
                parts.append("['’]")
            else:
                parts.append(re.escape(ch))
        alternatives.append("".join(parts) + r"\s*[.。]?")
    return "(?:" + "|".join(alternatives) + ")"


# Pasted text can hold megabyte-long lines of spaces or path characters. Unbounded whitespace runs inside a
# pattern make each attempt scan the whole run, so every \s* and \s+ is bounded (40 is plenty for a wrapped line).
_UNBOUNDED_SPACE = re.compile(r"(?<!\\)\\s([*+])")


def _bound_whitespace(source: str) -> str:
    return _UNBOUNDED_SPACE.sub(lambda m: r"\s{0,40}" if m.group(1) == "*" else r"\s{1,40}", source)


def stdlib_module_names(removed: Iterable[str] = ()) -> tuple[str, ...]:
    """Top-level standard-library module names a user's file can shadow: this Python's own list
    (``sys.stdlib_module_names``, 3.10+) and the ``removed`` ones older Pythons still have (PEP 594, PEP 632);
    private ``_x`` names are left out (nobody names a script ``_abc.py``)."""
    names = {n for n in sys.stdlib_module_names if not n.startswith("_")} | set(removed)
    return tuple(sorted(names, key=lambda n: (-len(n), n)))


def _compile(
    source: str,
    reasons: Mapping[str, tuple[str, ...]],
    module_lists: Mapping[str, tuple[str, ...]] | None = None,
) -> re.Pattern[str]:
    def expand(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in reasons:
            raise ValueError(f"unknown reason macro {{reason:{name}}}")
        return reason_regex(reasons[name])

    def expand_modules(m: re.Match[str]) -> str:
        name = m.group(1)
        if not module_lists or name not in module_lists:
            raise ValueError(f"unknown module list {{modules:{name}}}")
        return "(?:" + "|".join(re.escape(n) for n in module_lists[name]) + ")"

    source = _MODULES_MACRO.sub(expand_modules, _REASON_MACRO.sub(expand, source))
    return LazyRegex(_bound_whitespace(source))  # type: ignore[return-value]


class LazyRegex:
    """A regex compiled on first use: most patterns' needles never occur in a paste, and compiling every
    anchor (the localized reason alternations above all) cost a third of the command's start-up."""

    __slots__ = ("pattern", "_compiled")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, _FLAGS)
        return self._compiled

    def __getattr__(self, name: str) -> Any:
        return getattr(self.compiled, name)

    def __repr__(self) -> str:
        return f"LazyRegex({self.pattern!r})"


def _applies(raw: Mapping[str, Any] | None) -> Applies:
    raw = raw or {}
    return Applies(
        os=tuple(raw.get("os", ())),
        source=tuple(raw.get("source", ())),
        variant=tuple(raw.get("variant", ())),
        torch=raw.get("torch"),
        cuda=raw.get("cuda"),
        python=raw.get("python"),
    )


def parse_table(data: Mapping[str, Any]) -> PatternTable:
    reasons = {name: tuple(texts) for name, texts in data.get("reasons", {}).items()}
    lists = data.get("module_lists", {})
    module_lists = {"stdlib": stdlib_module_names(lists.get("stdlib_removed", ()))}
    module_lists.update({k: tuple(v) for k, v in lists.items() if k != "stdlib_removed"})
    causes = {
        cause_id: Cause(
            id=cause_id,
            confirm=tuple(raw.get("confirm", ())),
            mentions=tuple(raw.get("mentions", ())),
            applies=_applies(raw.get("applies")),
            commands=tuple(raw.get("commands", ())),
            sources=tuple(raw.get("sources", ())),
            contradicted_by=tuple(raw.get("contradicted_by", ())),
            supported_by=tuple(raw.get("supported_by", ())),
            aliases=tuple(raw.get("aliases", ())),
            defer=bool(raw.get("defer", False)),
            confirm_env=raw.get("confirm_env"),
            confirm_info=bool(raw.get("confirm_info", False)),
        )
        for cause_id, raw in data.get("causes", {}).items()
    }
    by_id = {raw["id"]: raw for raw in data.get("pattern", [])}
    patterns = []
    for raw in data.get("pattern", []):
        refs = []
        # `causes_from`: the same ranked list as another pattern (the same failure in another wording)
        entries = raw.get("causes") or by_id.get(raw.get("causes_from", ""), {}).get("causes", [])
        for entry in entries:
            if entry["id"] not in causes:
                raise ValueError(f"pattern {raw['id']}: unknown cause {entry['id']}")
            refs.append(
                CauseRef(
                    cause=entry["id"],
                    when={k: LazyPattern(v, re.IGNORECASE) for k, v in entry.get("when", {}).items()},
                    hints=tuple(entry.get("hints", ())),
                    soft=bool(entry.get("soft", False)),
                    unless={k: LazyPattern(v, re.IGNORECASE) for k, v in entry.get("unless", {}).items()},
                    hint_only=bool(entry.get("hint_only", False)),
                )
            )
        patterns.append(
            Pattern(
                id=raw["id"],
                platform=raw.get("platform", "any"),
                anchors=tuple(_compile(a, reasons, module_lists) for a in raw["anchors"]),
                context=tuple(_compile(c, reasons, module_lists) for c in raw.get("context", ())),
                context_before=tuple(_compile(c, reasons, module_lists) for c in raw.get("context_before", ())),
                causes=tuple(refs),
                fallback=bool(raw.get("fallback", False)),
                secondary=bool(raw.get("secondary", False)),
                path_before=(
                    (raw["path_before"]["field"], re.compile(raw["path_before"].get("require", ""), re.IGNORECASE))
                    if "path_before" in raw
                    else None
                ),
                needles=tuple(str(n).lower() for n in raw.get("needles", ())),
            )
        )
    ids = [p.id for p in patterns]
    if len(ids) != len(set(ids)):
        raise ValueError("duplicate pattern ids")
    clues = tuple(
        Clue(
            id=raw["id"],
            regexes=tuple(_compile(r, reasons, module_lists) for r in raw.get("regexes", ())),
            facts={str(k): str(v) for k, v in raw.get("facts", {}).items()},
            needles=tuple(str(n).lower() for n in raw.get("needles", ())),
            unless=tuple(raw.get("unless", ())),
            differing=raw.get("differing"),
        )
        for raw in data.get("clue", [])
    )
    roles = tuple(
        LibraryRole(
            role=raw["role"],
            name=re.compile(raw["name"], re.IGNORECASE) if "name" in raw else None,
            path=re.compile(raw["path"], re.IGNORECASE) if "path" in raw else None,
        )
        for raw in data.get("library_role", [])
    )
    sonames = tuple(
        (re.compile(raw["library"], re.IGNORECASE), {str(k): str(v) for k, v in raw["cuda"].items()})
        for raw in data.get("cuda_soname", [])
    )
    from conda_torchcheck.explain.recognise import DERIVED_CLUES

    known = {c.id for c in clues} | set(ids) | set(DERIVED_CLUES)
    for p in patterns:
        for ref in p.causes:
            unknown = set(ref.hints) - known
            if unknown:
                raise ValueError(f"pattern {p.id}: unknown hint {sorted(unknown)}")
    for clue in clues:
        if set(clue.unless) - known:
            raise ValueError(f"clue {clue.id}: unknown clue {sorted(set(clue.unless) - known)}")
    for c in causes.values():
        unknown = set(c.contradicted_by + c.supported_by) - known
        if unknown:
            raise ValueError(f"cause {c.id}: unknown clue {sorted(unknown)}")
    return PatternTable(
        patterns=tuple(patterns),
        causes=causes,
        reasons=reasons,
        glibcxx_gcc={str(k): int(v) for k, v in data.get("glibcxx_gcc", {}).items()},
        clues=clues,
        library_roles=roles,
        cuda_sonames=sonames,
    )


#: the table's files, ``error_patterns/<area>.toml``, in the order their patterns are tried (the order breaks
#: ties between hits at the same offset); the language is docs/explain.md's, its schema error_patterns.schema.json
AREAS = ("base", "windows", "linux", "cuda", "generic", "macos", "extensions", "raised", "pip", "causes", "clues")


def merge_areas(parts: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """One table from its per-area files: arrays of tables are joined in file order, tables merged key by key
    (a key stated twice is an error, so no file silently overrides another)."""
    merged: dict[str, Any] = {}
    for part in parts:
        for key, value in part.items():
            if key not in merged:
                merged[key] = (
                    list(value) if isinstance(value, list) else dict(value) if isinstance(value, dict) else value
                )
            elif isinstance(value, list) and isinstance(merged[key], list):
                merged[key].extend(value)
            elif isinstance(value, dict) and isinstance(merged[key], dict):
                twice = sorted(set(value) & set(merged[key]))
                if twice:
                    raise ValueError(f"[{key}] states {twice} in two files")
                merged[key].update(value)
            elif merged[key] != value:
                raise ValueError(f"{key} differs between two files")
    return merged


def area_texts() -> dict[str, str]:
    folder = resources.files(__package__).joinpath("error_patterns")
    return {area: folder.joinpath(f"{area}.toml").read_text(encoding="utf-8") for area in AREAS}


def _parsed_areas() -> list[dict[str, Any]]:
    """Each area file parsed, through its marshal copy beside the bytecode (parsed_copy) where the package is a
    folder of files; read and parsed otherwise (a zip)."""
    from conda_torchcheck.parsed_copy import read_parsed

    folder = resources.files(__package__).joinpath("error_patterns")
    out = []
    for area in AREAS:
        entry = folder.joinpath(f"{area}.toml")
        if isinstance(entry, os.PathLike):
            out.append(read_parsed(entry, lambda path: load_toml_text(open(path, encoding="utf-8").read())))
        else:
            out.append(load_toml_text(entry.read_text(encoding="utf-8")))
    return out


@functools.cache
def table() -> PatternTable:
    return parse_table(merge_areas(_parsed_areas()))
