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
from pathlib import Path

from conda_torchcheck.lazy_re import LazyPattern

# This module is on the start-up path of every command (``tree`` must start in well under 100 ms): it imports
# neither typing, dataclasses, string nor tomllib. Annotations are strings; the TOML parser is loaded only for a
# catalog file the fast reader below does not understand.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

# catalogs are plain files beside this module (importlib.resources would add ~5 ms of imports per run)
_HERE = Path(__file__).resolve().parent

LANGUAGES = ("en", "zh_CN")
DEFAULT_LANGUAGE = "en"


class Text:
    """A message key plus its parameters; turned into words only when rendered, in the reader's language.

    Equal (and hashed) by key alone: the parameters are not compared.
    """

    # not a dataclass: importing dataclasses and building one costs ~15-20 ms of the ``tree`` command's start-up
    __slots__ = ("key", "params")

    def __init__(self, key: str, params: dict[str, Any] | None = None) -> None:
        self.key = key
        self.params = {} if params is None else params

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.key == other.key  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return f"{self.__class__.__qualname__}(key={self.key!r}, params={self.params!r})"

    def render(self, lang: str | None = None) -> str:
        return translate(self.key, lang, **self.params)

    def __str__(self) -> str:  # English, for logs and debugging
        return self.render(DEFAULT_LANGUAGE)


def msg(key: str, **params: Any) -> Text:
    return Text(key, params)


class Absent(Text):
    """A parameter the input did not name: a template's parenthesised aside that holds only it (`` ({symbol})``,
    ``（{symbol}）``) is left out; elsewhere it reads as its own words ("not named in the text")."""

    __slots__ = ()


def _drop_absent_asides(template: str, params: dict[str, Any]) -> str:
    for name, value in params.items():
        if isinstance(value, Absent):
            template = template.replace(f" ({{{name}}})", "").replace(f"（{{{name}}}）", "")
    return template


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


def _read_text(name: str) -> str:
    """A catalog file's text as ``Path.read_text`` gives it (universal newlines), in half the time."""
    text = (_HERE / name).read_bytes().decode("utf-8")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


# a top-level table header ``[TC301]`` / ``[report]`` or a top-level dotted key ``cli.x.en = ...`` at the start
# of a line; scanned in "\n" + text, since a pattern that starts with "\n" is searched many times faster than "^"
_TOP_LEVEL = LazyPattern(r"\n\s*(?:\[\s*\"?([A-Za-z0-9_-]+)|([A-Za-z0-9_-]+)\s*[.=])")


@functools.cache
def _file_index() -> dict[str, tuple[str, ...]]:
    """First key segment -> catalog files defining it, from a cheap text scan (no TOML parsing).

    Parsing every catalog costs tens of milliseconds per command; a report usually needs two or three files.
    """
    index: dict[str, list[str]] = {}
    for name in _catalog_files():
        for match in _TOP_LEVEL.finditer("\n" + _read_text(name)):
            head = match.group(1) or match.group(2)
            files = index.setdefault(head, [])
            if name not in files:
                files.append(name)
    return {k: tuple(v) for k, v in index.items()}


# --- a reader for the TOML subset the catalogs are written in ---------------------------------------------------
#
# tomllib costs ~15-25 ms to import and ~13 ms per catalog file on a slow machine. The catalogs use only comments,
# blank lines, ``[dotted.table]`` headers and ``dotted.key = "basic string"`` lines (a key part may be quoted,
# ``"type.list".en``, without escapes); this reads exactly that and gives up (None) on anything else, which then
# goes to the real parser (and its error messages).

_KEY_PART = r'(?:[A-Za-z0-9_-]+|"[^"\\\x00-\x08\x0a-\x1f\x7f]*")'
_DOTTED_KEY = rf"{_KEY_PART}(?:[ \t]*\.[ \t]*{_KEY_PART})*"
# a basic string holds any character but ", \ and the control characters other than tab (a comment may hold " and \)
_STRING_CHARS = r'[^"\\\x00-\x08\x0a-\x1f\x7f]*'
_ESCAPE = r'\\(?:[btnfr"\\]|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})'
_COMMENT = r"(?:#[^\x00-\x08\x0a-\x1f\x7f]*)?"
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}


@functools.cache
def _subset_patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    line = re.compile(
        rf'[ \t]*(?:({_DOTTED_KEY})[ \t]*=[ \t]*"({_STRING_CHARS}(?:{_ESCAPE}{_STRING_CHARS})*)"'
        rf"|\[[ \t]*({_DOTTED_KEY})[ \t]*\])?[ \t]*{_COMMENT}"
    )
    return line, re.compile(_ESCAPE), re.compile(r'([A-Za-z0-9_-]+)|"([^"]*)"')


def _split_key(key: str, key_parts: re.Pattern[str]) -> tuple[str, ...]:
    """The parts of a dotted key the line pattern accepted."""
    if '"' in key:
        return tuple(bare or quoted for bare, quoted in key_parts.findall(key))
    if " " in key or "\t" in key:
        return tuple(part.strip(" \t") for part in key.split("."))
    return tuple(key.split("."))


def _unescape(raw: str, escape: re.Pattern[str]) -> str | None:
    """A basic string's body (escapes already checked by the line pattern), or None for a \\u that is no character."""
    out = []
    pos = 0
    for match in escape.finditer(raw):
        out.append(raw[pos : match.start()])
        seq = match.group()
        if len(seq) == 2:
            out.append(_ESCAPES[seq[1]])
        else:
            code = int(seq[2:], 16)
            if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:  # TOML: must be a Unicode scalar value
                return None
            out.append(chr(code))
        pos = match.end()
    out.append(raw[pos:])
    return "".join(out)


def _nest(table: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any] | None:
    for part in path:
        child = table.get(part)
        if child is None:
            child = table[part] = {}
        elif not isinstance(child, dict):
            return None  # a string where a table is needed
        table = child
    return table


def _read_catalog_subset(text: str) -> dict[str, Any] | None:
    """``text`` parsed as tomllib would, if it is written in the catalogs' TOML subset; otherwise None.

    Tables that TOML forbids to reopen follow tomllib's rules: a header names a table once, and a table made by
    dotted keys can be neither declared with a header nor extended by dotted keys from another section.
    """
    line_pattern, escape, key_parts = _subset_patterns()
    if "\r" in text:
        text = text.replace("\r\n", "\n")  # as tomllib does; a lone CR then fails the line pattern
    root: dict[str, Any] = {}
    header: tuple[str, ...] = ()
    table = root
    closed: set[tuple[str, ...]] = set()  # declared by a header, or made by dotted keys in an earlier section
    pending: set[tuple[str, ...]] = set()  # made by dotted keys in this section
    for line in text.split("\n"):
        match = line_pattern.fullmatch(line)
        if match is None:
            return None
        key, raw, head = match.groups()
        if head is not None:
            closed |= pending
            pending.clear()
            header = _split_key(head, key_parts)
            if header in closed:
                return None
            closed.add(header)
            found = _nest(root, header)
            if found is None:
                return None
            table = found
        elif key is not None:
            path = _split_key(key, key_parts)
            for i in range(1, len(path)):
                inner = header + path[:i]
                if inner in closed:
                    return None
                pending.add(inner)
            nest = _nest(table, path[:-1])
            if nest is None or path[-1] in nest:
                return None
            value = raw if "\\" not in raw else _unescape(raw, escape)
            if value is None:
                return None
            nest[path[-1]] = value
    return root


@functools.cache
def _load_file(name: str) -> dict[str, dict[str, str]]:
    """The messages of catalog file ``name``, flat (key -> {language: template}), through its parsed copy."""
    from conda_torchcheck.parsed_copy import read_parsed

    return read_parsed(_HERE / name, lambda _path: _parse_file(name))


def _parse_file(name: str) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    text = _read_text(name)
    data = _read_catalog_subset(text)
    if data is None:  # something outside the subset: the real parser (slower to import and to run)
        from conda_torchcheck._toml import load_toml_text

        data = load_toml_text(text)
    _flatten(data, "", found)
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


# Which file holds a top-level key, known without reading any: ``TC<n>xx`` ids live in ``tc<n>_*.toml``, the other
# heads are listed here (a test checks every catalog against this); an unlisted head falls back to the text scan.
_HEAD_FILES = {
    "cli": "core.toml",
    "markdown": "core.toml",
    "report": "core.toml",
    "plan": "core.toml",
    "severity": "core.toml",
    "fleet": "core.toml",
    "tree": "tree.toml",
    "win": "tc3_windows.toml",
    "envspec": "tc6_envspec.toml",
    "explain": "tc7_explain.toml",
    "import_test": "tc7_explain.toml",
    "activation_hooks": "tc8_conda.toml",
    "plugin": "tc8_conda.toml",
}


def _files_for(head: str) -> tuple[str, ...]:
    """The catalog files that can define top-level key ``head``."""
    name = _HEAD_FILES.get(head)
    if name is not None:
        return (name,)
    if head[:2] == "TC" and head[2:3].isdigit():
        prefix = f"tc{head[2]}_"
        return tuple(n for n in _catalog_files() if n.startswith(prefix))
    return _file_index().get(head, ())


def lookup(key: str) -> dict[str, str] | None:
    """The entry for ``key``, parsing only the catalog files that can hold it."""
    for name in _files_for(key.split(".", 1)[0]):
        entry = _load_file(name).get(key)
        if entry is not None:
            return entry
    # the index names every file that defines a top-level key (a test keeps it so): a miss is final, and
    # must stay cheap, since renderers probe optional keys (tree step labels, variants)
    return None


def placeholders(template: str) -> set[str]:
    # what string.Formatter().parse calls: importing string compiles Template's pattern (start-up time)
    from _string import formatter_parser

    return {name.split(".")[0].split("[")[0] for _, name, _, _ in formatter_parser(template) if name}


def _articles(template: str, rendered: dict[str, Any]) -> str:
    """English "a {x}" becomes "an {x}" when the value is said with a vowel first: an ELF, an x86_64 DLL, an
    ARM64 file, an old one (but a UCS2 build, a 64-bit one)."""
    import re  # not at module level: start-up time

    def fix(m: re.Match[str]) -> str:
        value = str(rendered.get(m.group(2), ""))
        return (("An" if m.group(1) == "A" else "an") if _vowel_sound(value) else m.group(1)) + " {" + m.group(2)

    return re.sub(r"\b([aA]) \{(\w+)", fix, template)


def _vowel_sound(word: str) -> bool:
    if not word:
        return False
    first = word[0]
    if first.isupper() and (len(word) == 1 or word[1].isupper() or word[1].isdigit()):
        return first in "AEFHILMNORSX"  # letters of an abbreviation said with a vowel first: "ef", "em", "ex" ...
    if first in "xX" and len(word) > 1 and word[1].isdigit():
        return True  # x86
    if first in "uU":
        return not word.lower().startswith(("uni", "use", "usu", "ucs", "utf", "ubu"))
    return first.lower() in "aeio"


class _Lenient(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def translate(key: str, lang: str | None = None, /, **params: Any) -> str:
    lang = lang or current_language()
    entry = lookup(key)
    if entry is None:
        return key if not params else f"{key} {params}"
    template = entry.get(lang) or entry[DEFAULT_LANGUAGE]
    if params:
        template = _drop_absent_asides(template, params)
    # a parameter that is itself a message (a recognised error's title inside a finding) follows the language
    rendered = {k: v.render(lang) if isinstance(v, Text) else v for k, v in params.items()}
    if "a {" in template or "A {" in template:
        template = _articles(template, rendered)
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
