"""Templates (``templates/activate.<ext>``) + facts + message catalog → the text of each activation script.

Template markers:

- ``@@HEADER@@`` — comment lines identifying the file as ours (marker, format, fingerprint, created folders)
- ``@@MSG <key> [name=expr ...]@@`` — code printing catalog message ``<key>`` on stderr; each ``{placeholder}``
  becomes the shell expression the template maps it to (defaults per shell below, overridable in the marker)
- ``@@DLL_NAMES@@``, ``@@DLL_NAMES_PS@@``, ``@@SONAMES@@``, ``@@OWN_DIRS_CASE@@``, ``@@OWN_DIRS_FISH@@``,
  ``@@PYTHON_MODE@@`` — the facts, as literal words (validated names: no quoting needed)
- ``#@@BEGIN name@@`` … ``#@@END name@@`` — a block kept only when ``name`` applies to the env

Literal message text is quoted for each shell here, so a translation can hold any character except, for cmd
(English only), a double quote.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from importlib import resources

from conda_torchcheck import __version__
from conda_torchcheck.hooks.activation.facts import ActivationFacts

FORMAT = 1
MARKER = "conda-torchcheck activation check"
STEM = "zz_conda_torchcheck"  # sorts after other activate.d scripts: runs once PATH & co. are final

_MSG = re.compile(r"@@MSG ([A-Za-z0-9_.]+)((?: [a-z]+=[^ @]+)*)@@")
_BLOCK = re.compile(r"^#@@BEGIN (\w+)@@\n(.*?)^#@@END \1@@\n", re.M | re.S)


@dataclass(frozen=True)
class Shell:
    extension: str
    comment: str
    variables: dict[str, str] = field(default_factory=dict)
    languages: tuple[str, ...] = ("en", "zh_CN")
    newline: str = "\n"
    bom: bool = False


SHELLS: dict[str, Shell] = {
    ".sh": Shell(".sh", "#", {"dir": "$_ctc_d", "libs": "$_ctc_libs", "var": "$_ctc_var"}),
    ".fish": Shell(".fish", "#", {"dir": "$_ctc_d", "libs": "$_ctc_libs", "var": "$_ctc_var"}),
    # PowerShell 5.1 reads a BOM-less script in the ANSI code page: the BOM keeps 中文 messages intact
    ".ps1": Shell(".ps1", "#", {"dir": "$ctcD", "libs": "$ctcLibs", "var": "$ctcVar"}, newline="\r\n", bom=True),
    # cmd reads batch files in the console code page: English only, and CRLF (labels and blocks need it)
    ".bat": Shell(".bat", "@rem", {}, languages=("en",), newline="\r\n"),
}

EXTENSIONS_BY_OS = {"windows": (".bat", ".ps1", ".sh", ".fish")}
POSIX_EXTENSIONS = (".sh", ".fish")
ALL_EXTENSIONS = (".bat", ".ps1", ".sh", ".fish")


def extensions_for(os_name: str) -> tuple[str, ...]:
    return EXTENSIONS_BY_OS.get(os_name, POSIX_EXTENSIONS)


def template(extension: str) -> str:
    return resources.files(__package__).joinpath("templates", f"activate{extension}").read_text(encoding="utf-8")


# --- quoting -------------------------------------------------------------------------------------------------


def sh_literal(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def fish_literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


_PS_SINGLE_QUOTES = "'\u2018\u2019\u201a\u201b"


def ps_literal(text: str) -> str:
    # PowerShell ends a single-quoted string at any of the four single-quote characters; doubling escapes them
    return "'" + "".join(c + c if c in _PS_SINGLE_QUOTES else c for c in text) + "'"


_CMD_SPECIAL = {"^": "^^", "&": "^&", "|": "^|", "<": "^<", ">": "^>", "(": "^(", ")": "^)", "%": "%%"}


def cmd_literal(text: str) -> str:
    if '"' in text or "\n" in text or "\r" in text:
        raise ValueError(f"cmd message text cannot hold double quotes or newlines: {text!r}")
    return "".join(_CMD_SPECIAL.get(c, c) for c in text)


# --- messages ------------------------------------------------------------------------------------------------


def _parts(template_text: str) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    for literal, name, _, _ in string.Formatter().parse(template_text):
        if literal:
            out.append((literal, None))
        if name is not None:
            out.append(("", name))
    return out


def message_expression(shell: Shell, key: str, lang: str, variables: dict[str, str], constants: dict[str, str]) -> str:
    """The shell expression (one argument / one echo text) for catalog message ``key`` in ``lang``."""
    from conda_torchcheck.messages import catalog

    entry = catalog().get(key)
    if entry is None:
        raise KeyError(f"no catalog message {key!r}")
    finding_id = key.split(".", 1)[0]
    text = entry.get(lang) or entry["en"]
    parts = [(f"conda-torchcheck {finding_id}: ", None), *_parts(text)]
    # constants become literal text; adjacent literals merge
    pieces: list[tuple[bool, str]] = []  # (is_literal, text or shell expression)
    for literal, name in parts:
        if name is not None and name not in constants:
            if name not in variables:
                raise KeyError(f"message {key!r}: no {shell.extension} expression for placeholder {{{name}}}")
            pieces.append((False, variables[name]))
            continue
        text_piece = constants[name] if name is not None else literal
        if pieces and pieces[-1][0]:
            pieces[-1] = (True, pieces[-1][1] + text_piece)
        else:
            pieces.append((True, text_piece))
    ext = shell.extension
    if ext == ".bat":
        return "".join(cmd_literal(p) if lit else p for lit, p in pieces)
    if ext == ".ps1":
        return " + ".join(ps_literal(p) if lit else p for lit, p in pieces)
    quote = sh_literal if ext == ".sh" else fish_literal
    return "".join(quote(p) if lit else f'"{p}"' for lit, p in pieces)


def message_code(shell: Shell, key: str, variables: dict[str, str], constants: dict[str, str]) -> str:
    """Code printing message ``key`` on stderr, in the reader's language where the shell allows it."""
    exprs = {lang: message_expression(shell, key, lang, variables, constants) for lang in shell.languages}
    en = exprs["en"]
    zh = exprs.get("zh_CN", en)
    ext = shell.extension
    if ext == ".sh":
        return f"if [ -n \"$_ctc_zh\" ]; then printf '%s\\n' {zh} >&2; else printf '%s\\n' {en} >&2; fi"
    if ext == ".fish":
        return f"if test -n \"$_ctc_zh\"; printf '%s\\n' {zh} >&2; else; printf '%s\\n' {en} >&2; end"
    if ext == ".ps1":
        return f"if ($ctcZh) {{ [Console]::Error.WriteLine({zh}) }} else {{ [Console]::Error.WriteLine({en}) }}"
    return f">&2 echo {en}"


# --- whole scripts -------------------------------------------------------------------------------------------


def header(shell: Shell, facts: ActivationFacts, created: tuple[str, ...]) -> str:
    c = shell.comment
    lines = [
        f"{c} {MARKER}, format {FORMAT}, generated by conda-torchcheck {__version__}.",
        f"{c} fingerprint: {facts.fingerprint()}; torch: {facts.torch}; python: {facts.python_version}",
        f"{c} created: {','.join(created) if created else '-'}",
        f"{c} Do not edit: `conda torchcheck hooks install` rewrites it, `conda torchcheck hooks remove` deletes it.",
    ]
    return "\n".join(lines)


def _blocks_enabled(facts: ActivationFacts) -> dict[str, bool]:
    return {
        "posix_path": facts.os != "windows",
        "ld_library_path": facts.os == "linux" and bool(facts.sonames),
        "windows": facts.os == "windows",
    }


def render(extension: str, facts: ActivationFacts, created: tuple[str, ...] = ()) -> bytes:
    shell = SHELLS[extension]
    text = template(extension)
    enabled = _blocks_enabled(facts)

    def keep_block(m: re.Match[str]) -> str:
        return m.group(2) if enabled.get(m.group(1), False) else ""

    text = _BLOCK.sub(keep_block, text)
    own_case = "|".join(f'"$_ctc_p/{d}"' for d in facts.own_lib_dirs) or "''"
    own_fish = " ".join(f'"$_ctc_p/{d}"' for d in facts.own_lib_dirs)
    replacements = {
        "@@HEADER@@": header(shell, facts, created),
        "@@DLL_NAMES@@": " ".join(facts.dll_names),
        "@@DLL_NAMES_PS@@": ", ".join(ps_literal(n) for n in facts.dll_names),
        "@@SONAMES@@": " ".join(facts.sonames),
        "@@OWN_DIRS_CASE@@": own_case,
        "@@OWN_DIRS_FISH@@": own_fish,
        "@@PYTHON_MODE@@": facts.dll_search_mode,
    }
    for marker, value in replacements.items():
        text = text.replace(marker, value)
    constants = {"python": facts.python_version}
    if extension != ".bat":
        constants["var"] = "CONDA_DLL_SEARCH_MODIFICATION_ENABLE"

    def message(m: re.Match[str]) -> str:
        variables = dict(shell.variables)
        local_constants = dict(constants)
        for item in m.group(2).split():
            name, expr = item.split("=", 1)
            if extension == ".bat" and not expr.startswith("%"):
                local_constants[name] = expr
            else:
                variables[name] = expr
        return message_code(shell, m.group(1), variables, local_constants)

    text = _MSG.sub(message, text)
    if "@@" in text:
        raise ValueError(f"unreplaced marker in activate{extension}: {text[text.index('@@') :][:40]!r}")
    data = text.replace("\r\n", "\n").replace("\n", shell.newline).encode("utf-8")
    return (b"\xef\xbb\xbf" + data) if shell.bom else data


def filename(extension: str) -> str:
    return STEM + extension


def read_header(data: bytes) -> dict[str, str] | None:
    """The fields of our header, or None when the file was not written by this tool."""
    text = data[:2048].decode("utf-8", errors="replace").lstrip("\ufeff")
    lines = text.splitlines()[:6]
    if not lines or MARKER not in lines[0]:
        return None
    out: dict[str, str] = {}
    for line in lines[1:]:
        body = line.split(" ", 1)[1] if " " in line else ""
        for item in body.split("; "):
            if ": " in item:
                key, value = item.split(": ", 1)
                out[key.strip()] = value.strip()
    return out


def created_dirs(data: bytes) -> tuple[str, ...]:
    fields = read_header(data) or {}
    value = fields.get("created", "-")
    return () if value in ("", "-") else tuple(v for v in value.split(",") if v)
