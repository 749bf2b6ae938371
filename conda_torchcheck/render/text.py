"""Plain-text report for a terminal: verdict first, then findings grouped by severity."""

from __future__ import annotations

import re
import textwrap
import unicodedata
from typing import Any

from conda_torchcheck.findings import Finding, Severity
from conda_torchcheck.messages import translate
from conda_torchcheck.render.style import paint
from conda_torchcheck.report import Report

_STYLE = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "blue"}
WIDTH = 100


def wrap(text: str, indent: str) -> list[str]:
    """Paragraphs of ``text`` wrapped at WIDTH terminal columns, each line starting with ``indent``.

    Chinese (and other wide) characters take two columns and may break anywhere; textwrap counts them as
    one and breaks only at spaces, which made Chinese lines twice as wide as English ones.
    """
    lines: list[str] = []
    for para in text.splitlines() or [""]:
        if any(_wide(ch) for ch in para):
            lines.extend(_wrap_wide(para, indent))
            continue
        lines.extend(
            textwrap.wrap(
                para,
                WIDTH,
                initial_indent=indent,
                subsequent_indent=indent,
                break_on_hyphens=False,
                break_long_words=False,
            )
            or [indent]
        )
    return lines


def _wide(ch: str) -> bool:
    return ord(ch) >= 0x1100 and unicodedata.east_asian_width(ch) in ("W", "F")


def _wrap_wide(para: str, indent: str) -> list[str]:
    # tokens: each wide character alone (a break is allowed after it), narrow words whole
    tokens: list[str] = []
    for piece in re.findall(r"\s+|[^\s]+", para):
        if piece.isspace() or not any(_wide(ch) for ch in piece):
            tokens.append(piece)
            continue
        word = ""
        for ch in piece:
            if _wide(ch):
                if word:
                    tokens.append(word)
                    word = ""
                tokens.append(ch)
            else:
                word += ch
        if word:
            tokens.append(word)
    out: list[str] = []
    line, width = indent, len(indent)
    for token in tokens:
        size = sum(2 if _wide(ch) else 1 for ch in token)
        if token.isspace():
            if width > len(indent):
                line, width = line + " ", width + 1
            continue
        if width + size > WIDTH and width > len(indent):
            out.append(line.rstrip())
            line, width = indent, len(indent)
        line, width = line + token, width + size
    out.append(line.rstrip() if line.strip() else indent)
    return out


def _scalar(value: Any) -> str:
    # JSON keeps null (not known); a reader sees a dash, not Python's None
    return "-" if value is None or value == [] else str(value)


def _evidence_lines(value: Any, indent: str, depth: int = 0) -> list[str]:
    lines: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, (dict, list, tuple)) and item:
                lines.append(f"{indent}{key}:")
                lines.extend(_evidence_lines(item, indent + "  ", depth + 1))
            else:
                lines.append(f"{indent}{key}: {_scalar(item)}")
    elif isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, dict):
                first = True
                for key, sub in item.items():
                    prefix = "- " if first else "  "
                    lines.append(f"{indent}{prefix}{key}: {_scalar(sub)}")
                    first = False
            else:
                lines.append(f"{indent}- {item}")
    else:
        lines.append(f"{indent}{value}")
    return lines


def render_finding(f: Finding, *, lang: str | None, color: bool, verbose: int) -> list[str]:
    sev = translate(f"severity.{f.severity.value}", lang)
    head = f"{paint(sev.upper(), _STYLE[f.severity], color)} {paint(f.id, 'bold', color)}  {f.title.render(lang)}"
    lines = [head]
    lines.extend(wrap(f.explanation.render(lang), "    "))
    if f.evidence:
        lines.append("    " + paint(translate("report.evidence", lang), "dim", color))
        lines.extend(_evidence_lines(dict(f.to_dict(lang)["evidence"]), "      "))
    for i, fix in enumerate(f.fixes, 1):
        label = translate("report.fix", lang) if len(f.fixes) == 1 else f"{translate('report.fix', lang)} {i}"
        admin = f" ({translate('report.needs_admin', lang)})" if fix.needs_admin else ""
        lines.extend(wrap(f"{label}: {fix.summary.render(lang)}{admin}", "    "))
        for command in fix.commands:
            lines.append("      " + paint(command, "green", color))
    if verbose:
        lines.append("    " + paint(f.docs["command"] or "", "dim", color))
    return lines


def render_text(report: Report, *, lang: str | None = None, color: bool = False, verbose: int = 0) -> str:
    env = report.env
    t = report.torch
    out: list[str] = []
    layout = env.layout_text
    target = translate("report.target", lang, prefix=str(env.prefix), platform=env.platform_text, layout=layout)
    out.append(paint(target, "bold", color))
    py = env.python
    out.append("  " + translate("report.python", lang, version=py.version or "?", arch=py.arch or "?"))
    if t.installed:
        out.append(
            "  "
            + translate(
                "report.torch",
                lang,
                version=t.version or "?",
                variant=t.variant,
                source=t.source,
                location=str(t.package_dir or "-"),
            )
        )
        from conda_torchcheck.knowledge import beyond_tables

        newest = beyond_tables(t.version)
        if newest is not None:  # said once, here: the findings below cannot say what they did not check
            out.append("  " + translate("report.torch_beyond_tables", lang, version=t.version, newest=newest))
    else:
        out.append("  " + translate("report.no_torch", lang))
    if report.import_test is not None:
        from conda_torchcheck.explain.render import import_test_outcome

        when = report.import_test.get("ran_at", "?")
        outcome = import_test_outcome(report.import_test, lang)
        out.append("  " + translate("report.import_test_ran", lang, outcome=outcome, when=when))
    out.append("")
    if not report.findings:
        out.append(paint(translate("report.all_good", lang), "green", color))
        return "\n".join(out) + "\n"
    for severity in (Severity.ERROR, Severity.WARNING, Severity.INFO):
        group = [f for f in report.findings if f.severity is severity]
        if not group:
            continue
        for f in group:
            out.extend(render_finding(f, lang=lang, color=color, verbose=verbose))
            out.append("")
    c = report.counts
    out.append(translate("report.summary", lang, errors=c["errors"], warnings=c["warnings"], info=c["info"]))
    return "\n".join(out) + "\n"
