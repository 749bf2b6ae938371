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
import string
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from conda_torchcheck._toml import load_toml_text

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
def catalog() -> dict[str, dict[str, str]]:
    """All messages: key -> {language: template}."""
    out: dict[str, dict[str, str]] = {}
    for entry in sorted(resources.files(__name__).iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".toml"):
            found: dict[str, dict[str, str]] = {}
            _flatten(load_toml_text(entry.read_text(encoding="utf-8")), "", found)
            duplicated = set(found) & set(out)
            if duplicated:
                raise RuntimeError(f"message keys defined twice ({entry.name}): {sorted(duplicated)}")
            out.update(found)
    return out


def placeholders(template: str) -> set[str]:
    return {name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(template) if name}


class _Lenient(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def translate(key: str, lang: str | None = None, /, **params: Any) -> str:
    lang = lang or current_language()
    entry = catalog().get(key)
    if entry is None:
        return key if not params else f"{key} {params}"
    template = entry.get(lang) or entry[DEFAULT_LANGUAGE]
    try:
        return template.format_map(_Lenient(params))
    except (ValueError, IndexError, AttributeError):
        return template


_language_override: str | None = None


def set_language(lang: str | None) -> None:
    global _language_override
    _language_override = normalize_language(lang) if lang else None


def normalize_language(value: str | None) -> str:
    """Map a locale name (zh_CN.UTF-8, zh-Hans, zh, en_US) onto a supported catalog language."""
    if not value:
        return DEFAULT_LANGUAGE
    v = value.replace("-", "_").split(".")[0].split("@")[0].lower()
    if v.startswith("zh"):
        return "zh_CN"
    return DEFAULT_LANGUAGE


def detect_language(environ: dict[str, str] | None = None) -> str:
    """The language from LC_ALL / LC_MESSAGES / LANG (first set wins, as gettext does), else Windows UI."""
    env = os.environ if environ is None else environ
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(var)
        if value:
            return normalize_language(value)
    if os.name == "nt":  # pragma: no cover - Windows only
        try:
            import ctypes

            lang_id = ctypes.windll.kernel32.GetUserDefaultUILanguage()
            if lang_id & 0x3FF == 0x04:  # LANG_CHINESE
                return "zh_CN"
        except Exception:
            pass
    return DEFAULT_LANGUAGE


def current_language() -> str:
    return _language_override or detect_language()
