"""Read an environment.yml into located facts, or refuse it with one clear sentence.

The file is composed (not constructed) with ruamel.yaml: the node tree keeps the exact position of every
scalar, which gives the line numbers of findings and lets the rewriter edit the text in place instead of
re-serialising it (so comments, key order, quoting, indentation and line endings survive byte for byte).

What conda accepts decides what is valid (``conda/env/env.py``): UTF-8 text (UTF-16 with a BOM is decoded as
well), a mapping with ``dependencies`` (a list of strings and ``{pip: [...]}`` mappings), ``channels`` (a list
of strings), ``name``/``prefix`` (strings) and ``variables`` (a mapping). Duplicate keys, tabs used for
indentation and mistyped values are refused here with the line they are on, because conda's own message for
them is either a traceback or a silent surprise (a duplicate ``dependencies`` key drops the first list).
"""

from __future__ import annotations

import codecs
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conda_torchcheck.envspec.matchspec import (
    CondaSpec,
    PipLine,
    SpecSyntaxError,
    channel_name,
    parse_conda_spec,
    parse_pip_line,
)
from conda_torchcheck.errors import TorchCheckError
from conda_torchcheck.inventory import fs

STR_TAG = "tag:yaml.org,2002:str"
#: the keys conda knows; others are ignored by conda (with a warning) and kept untouched here
KNOWN_KEYS = ("name", "prefix", "channels", "dependencies", "variables")


class SpecFileError(TorchCheckError):
    """The file cannot be read as an environment file. The message names the line and what to do."""

    def __init__(
        self, path: str, reason: str, /, *, line: int | None = None, column: int | None = None, **params: Any
    ) -> None:
        from conda_torchcheck.messages import translate

        self.path = path
        self.key = reason
        self.line = line
        self.column = column
        self.params = params
        where = path if line is None else f"{path}:{line}" + (f":{column}" if column else "")
        detail = translate(f"envspec.error.{reason}", **params)
        super().__init__(translate("envspec.error.where", where=where, detail=detail))


@dataclass(frozen=True)
class Where:
    """A position in the decoded text: 1-based line and column, 0-based character offsets."""

    line: int
    column: int
    start: int
    end: int

    @classmethod
    def of(cls, node: Any) -> Where:
        return cls(node.start_mark.line + 1, node.start_mark.column + 1, node.start_mark.index, node.end_mark.index)


@dataclass(frozen=True)
class ChannelItem:
    text: str
    name: str  # the channel it stands for (mirrors and labels reduced)
    where: Where


@dataclass(frozen=True)
class CondaDep:
    text: str
    spec: CondaSpec | None  # None when the string is beyond this reader (left alone)
    index: int  # position in the dependencies list
    where: Where

    @property
    def name(self) -> str | None:
        if self.spec is not None:
            return self.spec.name
        # a string beyond the reader (a template's `pytorch-gpu @PYTORCH_VERSION@`) still names its package:
        # the checks see which package it is, the rewriter leaves it alone (spec is None)
        import re

        m = re.match(r"\s*(?:[^\s:]+::)?([A-Za-z0-9_][A-Za-z0-9_.\-]*)(?=$|[\s=<>!~\[@])", self.text)
        return m.group(1).lower() if m else None


@dataclass(frozen=True)
class PipItem:
    text: str
    line: PipLine
    index: int
    where: Where


@dataclass(frozen=True)
class EnvFile:
    path: str
    text: str  # decoded, BOM removed
    encoding: str  # utf-8, utf-16-le, utf-16-be
    bom: bool
    newline: str  # the dominant line ending
    name: str | None
    channels: tuple[ChannelItem, ...] | None  # None: no channels key (or an empty value)
    deps: tuple[CondaDep, ...]
    pip: tuple[PipItem, ...] | None  # None: no pip section
    has_dependencies: bool
    #: the dependencies list holds mappings other than pip, or other odd items (kept, never touched)
    other_dep_items: tuple[int, ...] = ()
    #: lines of empty dependency items (`- ` or `- # comment`): conda env create fails on them (TC618 says so)
    empty_dep_lines: tuple[int, ...] = ()
    #: lines of empty items in the pip list: conda writes them into pip's requirements file and fails (TypeError)
    empty_pip_lines: tuple[int, ...] = ()
    #: lines of earlier `- pip:` items that a later one replaces (conda installs only the last pip list)
    dropped_pip_lines: tuple[int, ...] = ()
    #: `- conda:` mappings in dependencies: (its line, the lines of the conda entries before it, which it replaces)
    conda_mappings: tuple[tuple[int, tuple[int, ...]], ...] = ()
    pip_index: int | None = None  # position of the {pip: [...]} item in dependencies
    uses_aliases: bool = False
    root: Any = field(default=None, compare=False, repr=False)

    def pip_item(self, index: int) -> PipItem:
        """The pip item at position ``index`` of the YAML pip list (its ``PipItem.index``: an empty item skipped
        before it leaves a gap, so the position is not the tuple's)."""
        for item in self.pip or ():
            if item.index == index:
                return item
        raise KeyError(index)

    @property
    def channel_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.channels or ())

    def dep(self, name: str) -> CondaDep | None:
        for d in self.deps:
            if d.name == name:
                return d
        return None

    def pip_requirements(self) -> list[PipItem]:
        return [p for p in self.pip or () if p.line.kind == "requirement"]

    def pip_req(self, name: str) -> PipItem | None:
        for p in self.pip_requirements():
            if p.line.name == name:
                return p
        return None

    def line_text(self, line: int) -> str:
        lines = self.text.splitlines()
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""


# ------------------------------------------------------------------------------------------------------------
# decoding


def decode(data: bytes, path: str) -> tuple[str, str, bool]:
    """(text, encoding, had_bom). UTF-8 (with or without BOM) and UTF-16 with a BOM, as conda reads them."""
    if data.startswith(codecs.BOM_UTF8):
        encoding, bom, body = "utf-8", True, data[len(codecs.BOM_UTF8) :]
    elif data.startswith(codecs.BOM_UTF16_LE):
        encoding, bom, body = "utf-16-le", True, data[2:]
    elif data.startswith(codecs.BOM_UTF16_BE):
        encoding, bom, body = "utf-16-be", True, data[2:]
    else:
        encoding, bom, body = "utf-8", False, data
    if not bom and b"\x00" in body:
        raise SpecFileError(path, "utf16_no_bom")
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as exc:
        before = body[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise SpecFileError(
            path, "not_utf8", line=line, column=column, byte=f"0x{body[exc.start]:02x}", encoding=encoding
        ) from None
    if text.startswith("\ufeff"):  # a second BOM inside the text (double-saved files)
        raise SpecFileError(path, "double_bom")
    return text, encoding, bom


def encode(text: str, encoding: str, bom: bool) -> bytes:
    prefix = b""
    if bom:
        prefix = {"utf-8": codecs.BOM_UTF8, "utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE}[
            encoding
        ]
    return prefix + text.encode(encoding)


def dominant_newline(text: str) -> str:
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    return "\r\n" if crlf > lf else "\n"


# ------------------------------------------------------------------------------------------------------------
# YAML


def _compose(text: str, path: str) -> Any:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip(" ")
        if stripped.startswith("\t") or (stripped.startswith("-") and stripped[1:2] == "\t"):
            raise SpecFileError(path, "tab", line=number, column=len(line) - len(stripped) + 1)
    try:
        with warnings.catch_warnings():  # ruamel warns (on stderr) about reused anchors: not ours to print
            warnings.simplefilter("ignore")
            return YAML(typ="rt").compose(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = str(exc.problem or exc.context or "").strip()
        if "'\\t'" in problem or "\\t" in problem:
            raise SpecFileError(
                path, "tab", line=mark.line + 1 if mark else None, column=mark.column + 1 if mark else None
            ) from None
        if "another document" in problem:
            raise SpecFileError(path, "several_documents", line=mark.line + 1 if mark else None) from None
        raise SpecFileError(
            path,
            "yaml",
            line=mark.line + 1 if mark else None,
            column=mark.column + 1 if mark else None,
            problem=problem,
        ) from None
    except YAMLError as exc:
        raise SpecFileError(path, "yaml", problem=str(exc).strip().splitlines()[0] if str(exc) else "?") from None


def _kind(node: Any) -> str:
    name = type(node).__name__
    if name == "ScalarNode":
        tag = str(getattr(node.tag, "value", node.tag) or "")
        return {
            STR_TAG: "string",
            "tag:yaml.org,2002:int": "number",
            "tag:yaml.org,2002:float": "number",
            "tag:yaml.org,2002:bool": "boolean",
            "tag:yaml.org,2002:null": "empty",
        }.get(tag, "string" if not tag.startswith("tag:yaml.org") else tag.rsplit(":", 1)[-1])
    if name == "SequenceNode":
        return "list"
    if name == "MappingNode":
        return "mapping"
    return "?"


def _walk_duplicates(node: Any, path: str, seen_ids: set[int]) -> bool:
    """Raise on a duplicate mapping key anywhere; return True when a node is reached twice (YAML aliases)."""
    aliased = False
    if id(node) in seen_ids:
        return True
    seen_ids.add(id(node))
    kind = type(node).__name__
    if kind == "MappingNode":
        first: dict[str, Any] = {}
        for key, value in node.value:
            label = str(key.value) if type(key).__name__ == "ScalarNode" else repr(key.value)
            if label in first:
                raise SpecFileError(
                    path,
                    "duplicate_key",
                    line=key.start_mark.line + 1,
                    column=key.start_mark.column + 1,
                    key=label,
                    first=first[label].start_mark.line + 1,
                )
            first[label] = key
            aliased |= _walk_duplicates(value, path, seen_ids)
    elif kind == "SequenceNode":
        for item in node.value:
            aliased |= _walk_duplicates(item, path, seen_ids)
    return aliased


_SHOWN_VALUE = 80


def _type_error(path: str, node: Any, key: str, expected: str) -> SpecFileError:
    found = _kind(node)
    value = node.value if type(node).__name__ == "ScalarNode" else ""
    if len(value) > _SHOWN_VALUE:  # a 5,000-digit number is named, not printed whole
        value = value[: _SHOWN_VALUE // 2] + f"… ({len(value):,} characters)"
    return SpecFileError(
        path,
        f"type.{expected}",
        line=node.start_mark.line + 1,
        column=node.start_mark.column + 1,
        key=key,
        found=found,
        value=value,
    )


def _strings(node: Any, path: str, key: str) -> Iterator[Any]:
    if _kind(node) != "list":
        raise _type_error(path, node, key, "list")
    for item in node.value:
        if _kind(item) != "string":
            raise _type_error(path, item, key, "string_item")
        yield item


def parse_text(text: str, path: str = "<string>", *, encoding: str = "utf-8", bom: bool = False) -> EnvFile:
    try:
        return _parse_text(text, path, encoding=encoding, bom=bom)
    except RecursionError:  # ruamel's composer and the walks below recurse once per level of nesting
        raise SpecFileError(path, "yaml", problem="nested too deep to be an environment file") from None


def _parse_text(text: str, path: str, *, encoding: str, bom: bool) -> EnvFile:
    root = _compose(text, path)
    if root is None:
        raise SpecFileError(path, "empty")
    if _kind(root) != "mapping":
        raise SpecFileError(path, "not_mapping", line=root.start_mark.line + 1, found=_kind(root))
    aliased = _walk_duplicates(root, path, set())
    values = {str(k.value): v for k, v in root.value if type(k).__name__ == "ScalarNode"}

    name = None
    for key in ("name", "prefix"):
        node = values.get(key)
        if node is not None and _kind(node) not in ("string", "empty"):
            raise _type_error(path, node, key, "string")
    if values.get("name") is not None and _kind(values["name"]) == "string":
        name = str(values["name"].value)
    if values.get("variables") is not None and _kind(values["variables"]) not in ("mapping", "empty"):
        raise _type_error(path, values["variables"], "variables", "mapping")

    channels: tuple[ChannelItem, ...] | None = None
    node = values.get("channels")
    if node is not None and _kind(node) != "empty":
        channels = tuple(
            ChannelItem(str(n.value), channel_name(str(n.value)), Where.of(n)) for n in _strings(node, path, "channels")
        )

    deps: list[CondaDep] = []
    pip: tuple[PipItem, ...] | None = None
    pip_index = None
    pip_where_line = 0
    others: list[int] = []
    empty: list[int] = []
    empty_pip: list[int] = []
    dropped_pip: list[int] = []
    conda_mappings: list[tuple[int, tuple[int, ...]]] = []
    node = values.get("dependencies")
    has_deps = node is not None
    if node is not None and _kind(node) != "empty":
        if _kind(node) != "list":
            raise _type_error(path, node, "dependencies", "list")
        for index, item in enumerate(node.value):
            kind = _kind(item)
            if kind == "string":
                text_value = str(item.value)
                try:
                    spec: CondaSpec | None = parse_conda_spec(text_value)
                except SpecSyntaxError:
                    spec = None
                deps.append(CondaDep(text_value, spec, index, Where.of(item)))
            elif kind == "mapping":
                keys = {str(k.value): v for k, v in item.value}
                if "pip" in keys:
                    if pip is not None:
                        # conda merges the dependency mappings with dict.update: only the last pip list is installed
                        # (conda 26.7.1's conda.env.env.from_file); the earlier one is kept untouched, and TC618 says so
                        others.append(pip_index)  # type: ignore[arg-type]
                        dropped_pip.append(pip_where_line)
                        empty_pip.clear()
                    pip_node = keys["pip"]
                    pip_where_line = item.start_mark.line + 1
                    pip_index = index
                    if _kind(pip_node) == "empty":
                        pip = ()
                    else:
                        if _kind(pip_node) != "list":
                            raise _type_error(path, pip_node, "pip", "list")
                        items = []
                        for i, n in enumerate(pip_node.value):
                            if _kind(n) == "empty":
                                # `- # av==14.4.0`: a null item; conda hands it to pip's requirements file and
                                # stops with a TypeError (TC618 says so); the rest is still checked
                                empty_pip.append(n.start_mark.line + 1)
                                continue
                            if _kind(n) != "string":
                                raise _type_error(path, n, "pip", "string_item")
                            items.append(PipItem(str(n.value), parse_pip_line(str(n.value)), i, Where.of(n)))
                        pip = tuple(items)
                else:
                    others.append(index)
                if "conda" in keys:
                    # conda's Dependencies.parse: dict.update, so a `- conda:` mapping replaces the conda list read
                    # so far (python=3.9 above it is dropped) and later entries join the mapping's list (kept as
                    # an opaque item here; TC618 says what conda drops)
                    conda_mappings.append((item.start_mark.line + 1, tuple(d.where.line for d in deps)))
            elif kind == "empty":
                # kept (never touched) and reported by TC618, so the rest of the file is still checked
                others.append(index)
                empty.append(item.start_mark.line + 1)
            else:
                raise _type_error(path, item, "dependencies", "dependency")
    return EnvFile(
        path=path,
        text=text,
        encoding=encoding,
        bom=bom,
        newline=dominant_newline(text),
        name=name,
        channels=channels,
        deps=tuple(deps),
        pip=pip,
        has_dependencies=has_deps,
        other_dep_items=tuple(others),
        empty_dep_lines=tuple(empty),
        empty_pip_lines=tuple(empty_pip),
        dropped_pip_lines=tuple(dropped_pip),
        conda_mappings=tuple(conda_mappings),
        pip_index=pip_index,
        uses_aliases=aliased,
        root=root,
    )


# Real environment files are a few KB; a 50 MB one (or /dev/zero) is not one, and parsing it would take minutes.
SPEC_LIMIT = 8 << 20


def read_bytes(path: Path) -> bytes:
    try:
        return fs.read_bytes(path, SPEC_LIMIT)
    except FileNotFoundError:
        raise SpecFileError(str(path), "not_found") from None
    except IsADirectoryError:
        raise SpecFileError(str(path), "is_directory") from None
    except fs.NotRegularFile as exc:
        if fs.is_dir(path):
            raise SpecFileError(str(path), "is_directory") from None
        raise SpecFileError(str(path), "unreadable", detail=fs.describe(exc)) from None
    except OSError as exc:
        raise SpecFileError(str(path), "unreadable", detail=exc.strerror or str(exc)) from None


def parse_bytes(data: bytes, path: str = "<bytes>") -> EnvFile:
    text, encoding, bom = decode(data, path)
    return parse_text(text, path, encoding=encoding, bom=bom)


def load(path: Path | str) -> EnvFile:
    """Read and parse an environment file; :class:`SpecFileError` says what is wrong and where."""
    p = Path(path)
    return parse_bytes(read_bytes(p), str(path))
