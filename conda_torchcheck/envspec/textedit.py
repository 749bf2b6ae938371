"""Apply a rewrite plan to the original text, in place.

The file is never re-serialised. Each list the plan changes (``channels``, ``dependencies``, the ``pip`` list)
is cut into *segments* — an item's own lines plus the comment and blank lines right above it — and the list
is re-assembled from them: kept items keep their lines byte for byte (a replaced scalar is substituted inside
its line, so an end-of-line comment stays), new items get a line indented like their siblings, and a removed
item leaves its comments behind. Everything outside the lists is untouched, so comments, key order, quoting,
blank lines, CRLF endings, a BOM and a missing final newline all survive.

A layout this does not handle (a multi-line scalar, a flow list with comments inside) raises
:class:`EditError` instead of writing something approximate. The result is parsed again and compared with
the plan before anyone sees it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from conda_torchcheck.envspec.parse import EnvFile, SpecFileError, parse_text
from conda_torchcheck.envspec.rewrite import PIP_MARK, Entry, Plan
from conda_torchcheck.errors import TorchCheckError


class EditError(TorchCheckError):
    """The plan cannot be applied to this layout automatically."""


_DASH_PREFIX = re.compile(r"^( *)-( +)$")


@functools.cache
def _plain_ok(value: str) -> bool:
    """Can ``value`` be written as a plain (unquoted) scalar in a block list and read back unchanged?"""
    if not value or value != value.strip() or "\n" in value or " #" in value or "\t" in value:
        return False
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        node = YAML(typ="rt").compose(f"- {value}\n")
    except YAMLError:
        return False
    if node is None or type(node).__name__ != "SequenceNode" or len(node.value) != 1:
        return False
    item = node.value[0]
    return (
        type(item).__name__ == "ScalarNode"
        and str(getattr(item.tag, "value", item.tag)) == "tag:yaml.org,2002:str"
        and item.value == value
        and item.style is None
    )


def render_scalar(value: str, style: str | None = None) -> str:
    if style == "'" and "\n" not in value:
        return "'" + value.replace("'", "''") + "'"
    if style == '"' or (style is None and not _plain_ok(value)):
        if style is None and "'" not in value and "\n" not in value:
            return "'" + value + "'"
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return value


@dataclass
class _Item:
    node: Any
    first: int  # first line (0-based) of the item
    last: int  # last line holding its content
    lead_from: int  # first line of the comments/blank lines that precede it


def _last_line(node: Any) -> int:
    kind = type(node).__name__
    if kind == "ScalarNode":
        line = node.end_mark.line
        if node.end_mark.column == 0 and line > node.start_mark.line:
            line -= 1
        return line
    if kind == "SequenceNode":
        if node.flow_style or not node.value:
            return node.end_mark.line if node.end_mark.column > 0 else max(node.start_mark.line, node.end_mark.line - 1)
        return _last_line(node.value[-1])
    if kind == "MappingNode":
        if node.flow_style or not node.value:
            return node.end_mark.line if node.end_mark.column > 0 else max(node.start_mark.line, node.end_mark.line - 1)
        return _last_line(node.value[-1][1])
    return node.end_mark.line  # pragma: no cover


class _Doc:
    def __init__(self, file: EnvFile) -> None:
        self.file = file
        text = file.text
        self.added_final_newline = bool(text) and not text.endswith(("\n", "\r"))
        if self.added_final_newline:
            text += file.newline
        self.lines = text.splitlines(keepends=True)
        self.nl = file.newline
        self.edits: list[tuple[int, int, list[str]]] = []  # [first, end) line ranges → new lines

    def key_node(self, mapping: Any, key: str) -> tuple[Any, Any] | None:
        for k, v in mapping.value:
            if type(k).__name__ == "ScalarNode" and str(k.value) == key:
                return k, v
        return None

    def result(self) -> str:
        lines = list(self.lines)
        for first, end, new in sorted(self.edits, key=lambda e: e[0], reverse=True):
            lines[first:end] = new
        text = "".join(lines)
        if self.added_final_newline and text.endswith(self.nl):
            text = text[: -len(self.nl)]
        return text


def _is_null(node: Any) -> bool:
    return type(node).__name__ == "ScalarNode" and str(node.tag).endswith(":null") and node.value == ""


def _items(doc: _Doc, seq: Any, key_line: int) -> list[_Item]:
    items: list[_Item] = []
    previous_last = key_line
    for node in seq.value:
        first = node.start_mark.line
        line = doc.lines[first]
        prefix = line[: node.start_mark.column]
        if _is_null(node):
            prefix += " "  # an empty item (`-` or `- # comment`) starts right after its dash
        if not _DASH_PREFIX.match(prefix.rstrip("\r\n")):
            raise EditError(_m("layout", line=first + 1))
        last = _last_line(node)
        items.append(_Item(node, first, last, previous_last + 1))
        previous_last = last
    return items


def _comment_of(line: str) -> str | None:
    """The end-of-line comment of a one-line item (``# for GPU``), if any."""
    body = line.rstrip("\r\n")
    in_single = in_double = False
    for k, ch in enumerate(body):
        if ch == "'" and not in_double:
            in_single = not in_single
        elif ch == '"' and not in_single:
            in_double = not in_double
        elif ch == "#" and not in_single and not in_double and (k == 0 or body[k - 1] in " \t"):
            return body[k:]
    return None


def _replace_scalar(doc: _Doc, item: _Item, value: str) -> list[str]:
    node = item.node
    if type(node).__name__ != "ScalarNode" or node.start_mark.line != node.end_mark.line:
        raise EditError(_m("multiline", line=item.first + 1))
    line = doc.lines[item.first]
    start, end = node.start_mark.column, node.end_mark.column
    new = line[:start] + render_scalar(value, node.style if node.style in ("'", '"') else None) + line[end:]
    return [new, *doc.lines[item.first + 1 : item.last + 1]]


def _new_line(prefix: str, value: str, nl: str) -> str:
    return f"{prefix}{render_scalar(value)}{nl}"


def _rebuild_block(
    doc: _Doc, seq: Any, key_line: int, entries: list[Entry], bodies: dict[int, list[str]], default_prefix: str
) -> None:
    items = _items(doc, seq, key_line)
    prefix = default_prefix
    if items:
        line = doc.lines[items[0].first]
        prefix = line[: items[0].node.start_mark.column]
    originals = [
        str(it.node.value) if type(it.node).__name__ == "ScalarNode" and not _is_null(it.node) else None for it in items
    ]
    kept = {e.origin for e in entries if e.origin is not None}
    pending: dict[int, list[str]] = {}
    for k, it in enumerate(items):
        if k in kept:
            continue
        leftovers = list(doc.lines[it.lead_from : it.first])
        comment = _comment_of(doc.lines[it.first]) if it.first == it.last else None
        if comment:
            indent = prefix[: len(prefix) - len(prefix.lstrip(" "))]
            leftovers.append(f"{indent}{comment}{doc.nl}")
        elif it.first != it.last:
            # a removed multi-line item (an emptied pip section): keep every comment line it held
            for line in doc.lines[it.first : it.last + 1]:
                stripped = line.strip()
                if stripped.startswith("#"):
                    leftovers.append(line)
                elif "#" in line and _comment_of(line):
                    indent = line[: len(line) - len(line.lstrip())]
                    leftovers.append(f"{indent}{_comment_of(line)}{doc.nl}")
        pending[k] = leftovers
    out: list[str] = []
    flushed: set[int] = set()

    def flush(upto: int) -> None:
        for k in sorted(pending):
            if k < upto and k not in flushed:
                out.extend(pending[k])
                flushed.add(k)

    for e in entries:
        if e.origin is None:
            out.append(_new_line(prefix, e.text, doc.nl))
            continue
        flush(e.origin)
        it = items[e.origin]
        out.extend(doc.lines[it.lead_from : it.first])
        if e.origin in bodies:
            out.extend(bodies[e.origin])
        elif originals[e.origin] is not None and originals[e.origin] != e.text:
            out.extend(_replace_scalar(doc, it, e.text))
        else:
            out.extend(doc.lines[it.first : it.last + 1])
    flush(len(items) + 1)
    start = items[0].lead_from if items else key_line + 1
    end = items[-1].last + 1 if items else key_line + 1
    doc.edits.append((start, end, out))


def _rebuild_flow(doc: _Doc, seq: Any, entries: list[Entry]) -> None:
    start, end = seq.start_mark, seq.end_mark
    span = doc.file.text[start.index : end.index]
    if "#" in span or start.line != end.line:
        raise EditError(_m("flow", line=start.line + 1))
    texts = [render_scalar(e.text) for e in entries]
    line = doc.lines[start.line]
    new = line[: start.column] + "[" + ", ".join(texts) + "]" + line[end.column :]
    doc.edits.append((start.line, start.line + 1, [new]))


def _pip_body(doc: _Doc, item_node: Any, entries: list[Entry]) -> list[str]:
    """The new lines of the ``- pip:`` item with its list rebuilt."""
    sub = _Doc(doc.file)
    sub.lines = doc.lines
    found = doc.key_node(item_node, "pip")
    assert found is not None
    key, value = found
    first, last = item_node.start_mark.line, _last_line(item_node)
    if type(value).__name__ == "SequenceNode" and value.flow_style:
        _rebuild_flow(sub, value, entries)
    elif type(value).__name__ == "SequenceNode":
        key_prefix = doc.lines[key.start_mark.line][: key.start_mark.column]
        _rebuild_block(sub, value, key.start_mark.line, entries, {}, " " * (len(key_prefix) + 2) + "- ")
    else:  # `- pip:` with nothing under it
        indent = " " * (key.start_mark.column + 2)
        sub.edits.append(
            (
                key.start_mark.line + 1,
                key.start_mark.line + 1,
                [_new_line(indent + "- ", e.text, doc.nl) for e in entries],
            )
        )
        last = key.start_mark.line
    lines = list(doc.lines)
    for f, e, new in sorted(sub.edits, key=lambda x: x[0], reverse=True):
        lines[f:e] = new
    delta = sum(len(new) - (e - f) for f, e, new in sub.edits)
    return lines[first : last + 1 + delta]


def apply_plan(plan: Plan) -> str:
    file = plan.file
    if file.uses_aliases:
        raise EditError(_m("aliases"))
    doc = _Doc(file)
    root = file.root
    deps_kv = doc.key_node(root, "dependencies")
    if deps_kv is None:
        raise EditError(_m("no_dependencies"))
    deps_key, deps_seq = deps_kv
    deps_prefix = None
    if type(deps_seq).__name__ == "SequenceNode" and not deps_seq.flow_style and deps_seq.value:
        first = deps_seq.value[0]
        deps_prefix = doc.lines[first.start_mark.line][: first.start_mark.column]
    default_prefix = deps_prefix or (" " * (deps_key.start_mark.column + 2) + "- ")

    # dependencies (with the pip list inside)
    bodies: dict[int, list[str]] = {}
    original_pip = [Entry(p.text, p.index) for p in file.pip or ()]
    if plan.pip is not None and file.pip_index is not None and _entries_differ(plan.pip, original_pip):
        bodies[file.pip_index] = _pip_body(doc, deps_seq.value[file.pip_index], plan.pip)
    original_deps = _original_dep_entries(file)
    if bodies or _entries_differ(plan.deps, original_deps):
        if type(deps_seq).__name__ != "SequenceNode":
            raise EditError(_m("layout", line=deps_key.start_mark.line + 1))
        if deps_seq.flow_style:
            if any(e.text.startswith("\0") for e in plan.deps):
                raise EditError(_m("flow", line=deps_seq.start_mark.line + 1))
            _rebuild_flow(doc, deps_seq, plan.deps)
        else:
            _rebuild_block(doc, deps_seq, deps_key.start_mark.line, plan.deps, bodies, default_prefix)

    # channels
    if plan.channels is not None:
        channels_kv = doc.key_node(root, "channels")
        if channels_kv is None:
            key_indent = " " * deps_key.start_mark.column
            new_lines = [f"{key_indent}channels:{doc.nl}"]
            new_lines += [
                _new_line(_relative_prefix(default_prefix, deps_key.start_mark.column, 0), e.text, doc.nl)
                for e in plan.channels
            ]
            doc.edits.append((deps_key.start_mark.line, deps_key.start_mark.line, new_lines))
        else:
            ch_key, ch_value = channels_kv
            kind = type(ch_value).__name__
            if kind == "SequenceNode" and ch_value.flow_style:
                _rebuild_flow(doc, ch_value, plan.channels)
            elif kind == "SequenceNode":
                _rebuild_block(
                    doc,
                    ch_value,
                    ch_key.start_mark.line,
                    plan.channels,
                    {},
                    _relative_prefix(default_prefix, deps_key.start_mark.column, ch_key.start_mark.column),
                )
            else:  # `channels:` with no value
                if (
                    ch_value.start_mark.line != ch_key.start_mark.line
                    or doc.lines[ch_key.start_mark.line].rstrip("\r\n").rstrip().endswith(":") is False
                ):
                    raise EditError(_m("layout", line=ch_key.start_mark.line + 1))
                prefix = _relative_prefix(default_prefix, deps_key.start_mark.column, ch_key.start_mark.column)
                line = ch_key.start_mark.line
                doc.edits.append((line + 1, line + 1, [_new_line(prefix, e.text, doc.nl) for e in plan.channels]))
    text = doc.result()
    plan.result = _verify(plan, text)
    return text


def _relative_prefix(prefix: str, from_column: int, to_column: int) -> str:
    """``prefix`` (the dash prefix of the dependencies list) re-based from one key's column to another's."""
    offset = len(prefix) - len(prefix.lstrip(" ")) - from_column
    dash = prefix.lstrip(" ")
    return " " * max(0, to_column + offset) + dash


def _original_dep_entries(file: EnvFile) -> list[Entry]:
    from conda_torchcheck.envspec.rewrite import _dep_texts

    return [Entry(t, i) for i, t in _dep_texts(file)]


def _entries_differ(a: list[Entry], b: list[Entry]) -> bool:
    return [(e.text, e.origin) for e in a] != [(e.text, e.origin) for e in b]


def _verify(plan: Plan, text: str) -> EnvFile:
    """Parse the result and compare it with the plan: a mismatch is a bug here, never the user's problem."""
    try:
        result = parse_text(text, plan.file.path)
    except SpecFileError as exc:
        raise EditError(_m("verify", detail=str(exc))) from None
    want_channels = (
        [e.text for e in plan.channels] if plan.channels is not None else [c.text for c in plan.file.channels or ()]
    )
    got_channels = [c.text for c in result.channels or ()]
    want_deps = [e.text for e in plan.deps if not e.text.startswith("\0")]
    got_deps = [d.text for d in result.deps]
    want_pip = [e.text for e in plan.pip] if plan.pip is not None else None
    got_pip = [p.text for p in result.pip] if result.pip is not None else None
    if plan.pip is not None and not any(e.text == PIP_MARK for e in plan.deps):
        want_pip = None
    if plan.pip is None and any(e.text == PIP_MARK for e in plan.deps):
        want_pip = [p.text for p in plan.file.pip or ()]
    problems = []
    if want_channels != got_channels and (plan.channels is not None or plan.file.channels is not None):
        problems.append(f"channels {got_channels} != {want_channels}")
    if want_deps != got_deps:
        problems.append(f"dependencies {got_deps} != {want_deps}")
    if want_pip != got_pip:
        problems.append(f"pip {got_pip} != {want_pip}")
    if problems:
        raise EditError(_m("verify", detail="; ".join(problems)))
    return result


def _m(key: str, **params: Any) -> str:
    from conda_torchcheck.messages import translate

    return translate(f"envspec.edit.{key}", **params)
