"""Message catalogs: every user-visible sentence, in English and Simplified Chinese.

Catalogs are TOML files beside this module, one per area (``tc1_env.toml``, ``tc3_windows.toml`` ...).
A message is a table whose keys are language codes::

    [TC301]
    title.en = "A DLL that torch needs cannot be found: {dll}"
    title.zh_CN = "找不到 torch 需要的 DLL：{dll}"

Its key is the dotted path to that table (``TC301.title``). Placeholders use ``str.format`` syntax and must
be the same in every language (a test checks this).
"""

from __future__ import annotations

import functools
import os
import re
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conda_torchcheck._toml import load_toml_text

# catalogs are plain files beside this module (importlib.resources would add ~5 ms of imports per run)
_HERE = Path(__file__).resolve().parent

LANGUAGES = ("en", "zh_CN")
DEFAULT_LANGUAGE = "en"


@dataclass(frozen=True)
class Text:
    """A message key plus its parameters; turned into words only when rendered, in the reader's language."""

    key: str
    params: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    def render(self, lang: str | None = None) -> str:
        return translate(self.key, lang, **self.params)

    def __str__(self) -> str:  # English, for logs and debugging
        return self.render(DEFAULT_LANGUAGE)


def msg(key: str, **params: Any) -> Text:
    return Text(key, params)


def _flatten(table: dict[str, Any], prefix: str, out: dict[str, dict[str, str]]) -> None:
    if "en" in table and isinstance(table["en"], str):
        out[prefix] = {k: v for k, v in table.items() if isinstance(v, str)}
        return
    for key, value in table.items():
        if isinstance(value, dict):
            _flatten(value, f"{prefix}.{key}" if prefix else key, out)


@functools.cache
def _catalog_files() -> tuple[str, ...]:
    return tuple(sorted(e.name for e in _HERE.iterdir() if e.name.endswith(".toml")))


# a top-level table header ``[TC301]`` / ``[report]`` or a top-level dotted key ``cli.x.en = ...``
_TOP_LEVEL = re.compile(r"^\s*(?:\[\s*\"?([A-Za-z0-9_-]+)|([A-Za-z0-9_-]+)\s*[.=])", re.M)


@functools.cache
def _file_index() -> dict[str, tuple[str, ...]]:
    """First key segment -> catalog files defining it, from a cheap text scan (no TOML parsing).

    Parsing every catalog costs tens of milliseconds per command; a report usually needs two or three files.
    """
    index: dict[str, list[str]] = {}
    for name in _catalog_files():
        text = (_HERE / name).read_text(encoding="utf-8")
        for match in _TOP_LEVEL.finditer(text):
            head = match.group(1) or match.group(2)
            files = index.setdefault(head, [])
            if name not in files:
                files.append(name)
    return {k: tuple(v) for k, v in index.items()}


@functools.cache
def _load_file(name: str) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    text = (_HERE / name).read_text(encoding="utf-8")
    _flatten(load_toml_text(text), "", found)
    return found


@functools.cache
def catalog() -> dict[str, dict[str, str]]:
    """All messages: key -> {language: template}."""
    out: dict[str, dict[str, str]] = {}
    for name in _catalog_files():
        found = _load_file(name)
        duplicated = set(found) & set(out)
        if duplicated:
            raise RuntimeError(f"message keys defined twice ({name}): {sorted(duplicated)}")
        out.update(found)
    return out


def lookup(key: str) -> dict[str, str] | None:
    """The entry for ``key``, parsing only the catalog files that can hold it."""
    for name in _file_index().get(key.split(".", 1)[0], ()):
        entry = _load_file(name).get(key)
        if entry is not None:
            return entry
    # the index names every file that defines a top-level key (a test keeps it so): a miss is final, and
    # must stay cheap, since renderers probe optional keys (tree step labels, variants)
    return None


def placeholders(template: str) -> set[str]:
    return {name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(template) if name}


class _Lenient(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def translate(key: str, lang: str | None = None, /, **params: Any) -> str:
    lang = lang or current_language()
    entry = lookup(key)
    if entry is None:
        return key if not params else f"{key} {params}"
    template = entry.get(lang) or entry[DEFAULT_LANGUAGE]
    # a parameter that is itself a message (a recognised error's title inside a finding) follows the language
    rendered = {k: v.render(lang) if isinstance(v, Text) else v for k, v in params.items()}
    try:
        return template.format_map(_Lenient(rendered))
    except (ValueError, IndexError, AttributeError):
        return template


_language_override: str | None = None

#: the tool's own override, for people whose system locale is not the language they want to read
LANGUAGE_VARIABLE = "CONDA_TORCHCHECK_LANG"


def language_override() -> str | None:
    """The language fixed by :func:`set_language`, if any."""
    return _language_override


def set_language(lang: str | None) -> None:
    """Fix the language for this process (``--lang``); ``None`` returns to detection."""
    global _language_override
    _language_override = normalize_language(lang) if lang else None


def supported_language(value: str | None) -> str | None:
    """The catalog language for a locale name (zh_CN.UTF-8, zh-Hans, zh_TW, en_US, C), or None if unsupported.

    Every Chinese locale maps to Simplified Chinese: for zh_TW/zh_HK readers it is far closer than English.
    ``C`` and ``POSIX`` mean English.
    """
    if not value:
        return None
    v = value.strip().replace("-", "_").split(".")[0].split("@")[0].lower()
    if not v:
        return None
    if v in ("c", "posix") or v == "en" or v.startswith("en_"):
        return "en"
    if v == "zh" or v.startswith("zh_"):
        return "zh_CN"
    return None


def normalize_language(value: str | None) -> str:
    """Map a locale name (zh_CN.UTF-8, zh-Hans, zh, en_US) onto a supported catalog language (default English)."""
    return supported_language(value) or DEFAULT_LANGUAGE


# Windows LANGID primary language of Chinese (zh-CN 0x0804, zh-TW 0x0404, zh-HK 0x0C04, zh-SG 0x1004 ...)
_LANG_CHINESE = 0x04


def _windows_ui_language_id() -> int | None:  # pragma: no cover - Windows only
    try:
        import ctypes

        return int(ctypes.windll.kernel32.GetUserDefaultUILanguage())  # type: ignore[attr-defined]
    except Exception:
        return None


def language_from_windows_langid(lang_id: int | None) -> str | None:
    if lang_id is None:
        return None
    return "zh_CN" if lang_id & 0x3FF == _LANG_CHINESE else DEFAULT_LANGUAGE


def detect_language(
    environ: Mapping[str, str] | None = None,
    *,
    windows_ui: Callable[[], int | None] | None = None,
    is_windows: bool | None = None,
) -> str:
    """The reader's language, without ``--lang``:

    1. ``CONDA_TORCHCHECK_LANG`` (the tool's own setting);
    2. the POSIX locale as gettext reads it: the first set of ``LC_ALL``, ``LC_MESSAGES``, ``LANG`` decides the
       locale; when that locale is not ``C``/``POSIX``, GNU ``LANGUAGE`` (a ``:``-separated priority list) is
       consulted first and its first supported entry wins;
    3. on Windows, when none of those is set, the user's UI language (``GetUserDefaultUILanguage``);
    4. English.
    """
    env = os.environ if environ is None else environ
    own = supported_language(env.get(LANGUAGE_VARIABLE))
    if own:
        return own
    locale_name = next((env[var] for var in ("LC_ALL", "LC_MESSAGES", "LANG") if env.get(var)), None)
    if locale_name is not None:
        is_c = supported_language(locale_name) == "en" and locale_name.split(".")[0].upper() in ("C", "POSIX")
        if not is_c:
            for entry in (env.get("LANGUAGE") or "").split(":"):
                found = supported_language(entry)
                if found:
                    return found
        return normalize_language(locale_name)
    if is_windows if is_windows is not None else os.name == "nt":
        found = language_from_windows_langid((windows_ui or _windows_ui_language_id)())
        if found:
            return found
    return DEFAULT_LANGUAGE


def current_language() -> str:
    return _language_override or detect_language()
