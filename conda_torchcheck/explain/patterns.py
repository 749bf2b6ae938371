"""The error pattern table (``error_patterns.toml``) read into frozen dataclasses with compiled regexes."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from conda_torchcheck._toml import load_toml_text

_FLAGS = re.IGNORECASE | re.MULTILINE
_REASON_MACRO = re.compile(r"\{reason:(\w+)\}")


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

    @property
    def checkable(self) -> bool:
        return bool(self.confirm)


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


@dataclass(frozen=True)
class PatternTable:
    patterns: tuple[Pattern, ...]
    causes: Mapping[str, Cause]
    reasons: Mapping[str, tuple[str, ...]]
    glibcxx_gcc: Mapping[str, int]

    def pattern(self, pattern_id: str) -> Pattern:
        for p in self.patterns:
            if p.id == pattern_id:
                return p
        raise KeyError(pattern_id)


def reason_regex(texts: tuple[str, ...]) -> str:
    """An alternation of system message texts that tolerates the ways they get mangled in pastes.

    Whitespace may be added, dropped or wrapped; ASCII and full-width parentheses and the final period
    (``.`` / ``。``) are interchangeable or missing.
    """
    alternatives = []
    for text in texts:
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
            else:
                parts.append(re.escape(ch))
        alternatives.append("".join(parts) + r"\s*[.。]?")
    return "(?:" + "|".join(alternatives) + ")"


# Pasted text can hold megabyte-long lines of spaces or path characters. Unbounded whitespace runs inside a
# pattern make each attempt scan the whole run, so every \s* and \s+ is bounded (40 is plenty for a wrapped line).
_UNBOUNDED_SPACE = re.compile(r"(?<!\\)\\s([*+])")


def _bound_whitespace(source: str) -> str:
    return _UNBOUNDED_SPACE.sub(lambda m: r"\s{0,40}" if m.group(1) == "*" else r"\s{1,40}", source)


def _compile(source: str, reasons: Mapping[str, tuple[str, ...]]) -> re.Pattern[str]:
    def expand(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in reasons:
            raise ValueError(f"unknown reason macro {{reason:{name}}}")
        return reason_regex(reasons[name])

    return re.compile(_bound_whitespace(_REASON_MACRO.sub(expand, source)), _FLAGS)


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
    causes = {
        cause_id: Cause(
            id=cause_id,
            confirm=tuple(raw.get("confirm", ())),
            mentions=tuple(raw.get("mentions", ())),
            applies=_applies(raw.get("applies")),
            commands=tuple(raw.get("commands", ())),
            sources=tuple(raw.get("sources", ())),
        )
        for cause_id, raw in data.get("causes", {}).items()
    }
    patterns = []
    for raw in data.get("pattern", []):
        refs = []
        for entry in raw.get("causes", []):
            if entry["id"] not in causes:
                raise ValueError(f"pattern {raw['id']}: unknown cause {entry['id']}")
            refs.append(
                CauseRef(
                    cause=entry["id"],
                    when={k: re.compile(v, re.IGNORECASE) for k, v in entry.get("when", {}).items()},
                    hints=tuple(entry.get("hints", ())),
                    soft=bool(entry.get("soft", False)),
                )
            )
        patterns.append(
            Pattern(
                id=raw["id"],
                platform=raw.get("platform", "any"),
                anchors=tuple(_compile(a, reasons) for a in raw["anchors"]),
                context=tuple(_compile(c, reasons) for c in raw.get("context", ())),
                context_before=tuple(_compile(c, reasons) for c in raw.get("context_before", ())),
                causes=tuple(refs),
                fallback=bool(raw.get("fallback", False)),
                secondary=bool(raw.get("secondary", False)),
                path_before=(
                    (raw["path_before"]["field"], re.compile(raw["path_before"].get("require", ""), re.IGNORECASE))
                    if "path_before" in raw
                    else None
                ),
            )
        )
    ids = [p.id for p in patterns]
    if len(ids) != len(set(ids)):
        raise ValueError("duplicate pattern ids")
    return PatternTable(
        patterns=tuple(patterns),
        causes=causes,
        reasons=reasons,
        glibcxx_gcc={str(k): int(v) for k, v in data.get("glibcxx_gcc", {}).items()},
    )


@functools.cache
def table() -> PatternTable:
    text = resources.files(__package__).joinpath("error_patterns.toml").read_text(encoding="utf-8")
    return parse_table(load_toml_text(text))
