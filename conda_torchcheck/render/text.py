"""Plain-text report for a terminal: verdict first, then findings grouped by severity."""

from __future__ import annotations

import re
import textwrap
import unicodedata
from typing import Any

from conda_torchcheck.findings import Finding, Severity
from conda_torchcheck.messages import translate
from conda_torchcheck.render.style import paint, terminal_columns
from conda_torchcheck.report import Report

_STYLE = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "blue"}
#: where the terminal's width is not known (output to a file or a pipe)
WIDTH = 100
#: without -v: items shown of one evidence list, and consequences listed under their cause
LIST_ITEMS = 2
CONSEQUENCE_LINES = 4
#: evidence shown only with -v (what the explanation already counts)
VERBOSE_EVIDENCE = frozenset({"lookup_scope"})


def width() -> int:
    """The terminal's width (COLUMNS, then the terminal itself, else WIDTH), never narrower than 40."""
    return max(40, terminal_columns(WIDTH))


def wrap(text: str, indent: str, hang: str | None = None) -> list[str]:
    """Paragraphs of ``text`` wrapped at the terminal's width, each line starting with ``indent``; with ``hang``,
    the lines after a paragraph's first start with ``hang`` instead (a numbered item's text stays under its text,
    not under its number).

    Chinese (and other wide) characters take two columns and may break anywhere; textwrap counts them as
    one and breaks only at spaces, which made Chinese lines twice as wide as English ones.
    """
    if hang is not None and hang != indent:
        lines = wrap(text, hang)
        return [indent + line[len(hang) :] if line.startswith(hang) else line for line in lines[:1]] + lines[1:]
    lines: list[str] = []
    columns = width()
    for para in text.splitlines() or [""]:
        if any(_wide(ch) for ch in para):
            lines.extend(_wrap_wide(para, indent, columns))
            continue
        lines.extend(
            textwrap.wrap(
                para,
                columns,
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


def _wrap_wide(para: str, indent: str, columns: int) -> list[str]:
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
        if width + size > columns and width > len(indent):
            out.append(line.rstrip())
            line, width = indent, len(indent)
        line, width = line + token, width + size
    out.append(line.rstrip() if line.strip() else indent)
    return out


def _scalar(value: Any) -> str:
    # JSON keeps null (not known); a reader sees a dash, not Python's None
    return "-" if value is None or value == [] else str(value)


def _told(items: list[Any], told: str) -> bool:
    """Every item of an evidence list already stands in the explanation (a search list printed once)."""
    return bool(told) and all(isinstance(i, str) and i in told for i in items)


def _evidence_lines(value: Any, indent: str, depth: int = 0, *, limit: int = 0, told: str = "") -> list[str]:
    """``limit``: at most this many items of a list (0: all); ``told``: text already shown, whose lists are
    not repeated."""
    lines: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, (dict, list, tuple)) and item:
                if limit and isinstance(item, (list, tuple)) and _told(list(item), told):
                    continue
                if (
                    limit
                    and isinstance(item, dict)
                    and not any(isinstance(v, (dict, list, tuple)) for v in item.values())
                ):
                    lines.append(f"{indent}{key}: " + "; ".join(f"{k}: {_scalar(v)}" for k, v in item.items()))
                    continue
                lines.append(f"{indent}{key}:")
                lines.extend(_evidence_lines(item, indent + "  ", depth + 1, limit=limit, told=told))
            else:
                if limit and (
                    item in (None, "-", "", []) or (isinstance(item, str) and len(item) > 20 and item in told)
                ):
                    continue  # without -v: nothing known, or already said in the explanation
                lines.append(f"{indent}{key}: {_scalar(item)}")
    elif isinstance(value, (list, tuple)):
        shown = value[:limit] if limit else value
        for item in shown:
            if isinstance(item, dict):
                first = True
                for key, sub in item.items():
                    prefix = "- " if first else "  "
                    lines.append(f"{indent}{prefix}{key}: {_scalar(sub)}")
                    first = False
            else:
                lines.append(f"{indent}- {item}")
        if len(shown) < len(value) and lines:
            lines[-1] += f"  (+{len(value) - len(shown)} more)"
    else:
        lines.append(f"{indent}{value}")
    return lines


def _clip(text: str, columns: int) -> str:
    return text if len(text) <= columns else text[: max(0, columns - 3)].rstrip() + "..."


def render_plan(plan: Any, *, lang: str | None, color: bool, verbose: int) -> list[str]:
    """The one fix plan: numbered steps with their commands, what each changes and how it was checked."""
    lines = [paint(translate("report.plan", lang, count=len(plan.steps)), "bold", color)]
    for n, step in enumerate(plan.steps, 1):
        admin = f" ({translate('report.needs_admin', lang)})" if step.needs_admin else ""
        also = f" ({translate('report.plan_also', lang, ids=', '.join(step.also_fixes))})" if step.also_fixes else ""
        head = wrap(f"[{step.finding}]{also} {step.summary}{admin}", "     ")
        lines.extend([f"  {n}. ".ljust(5) + head[0][5:], *head[1:]])
        for command in step.commands:
            lines.append("      " + paint(command, "green", color))
        lines.extend(wrap(translate("report.plan_changes", lang, changes=step.changes), "     "))
        v = step.verification
        if v.status == "verified":
            lines.extend(wrap(translate("report.plan_verified", lang, by=v.by or "?"), "     "))
        elif v.status == "not verified":
            lines.extend(wrap(translate("report.plan_not_verified", lang, reason=v.reason or "?"), "     "))
    shown = plan.dropped if verbose else [d for d in plan.dropped if d.commands]
    for d in shown:
        command = "; ".join(d.commands)
        text = translate("report.plan_dropped", lang, finding=d.finding, command=command, reason=d.reason)
        lines.extend(wrap(text, "  "))
    return lines


def render_finding(f: Finding, *, lang: str | None, color: bool, verbose: int, fixes: bool = True) -> list[str]:
    sev = translate(f"severity.{f.severity.value}", lang)
    head = f"{paint(sev.upper(), _STYLE[f.severity], color)} {paint(f.id, 'bold', color)}  {f.title.render(lang)}"
    lines = [head]
    explanation = f.explanation.render(lang)
    lines.extend(wrap(explanation, "    "))
    if f.evidence:
        lines.append("    " + paint(translate("report.evidence", lang), "dim", color))
        evidence = dict(f.to_dict(lang)["evidence"])
        if verbose:
            lines.extend(_evidence_lines(evidence, "      "))
        else:
            # the lookup scope is counted in the explanation ("18 libraries: the Python executable ..."); its
            # list is for -v, so that one root cause fits one screen
            brief = {k: v for k, v in evidence.items() if k not in VERBOSE_EVIDENCE}
            lines.extend(_evidence_lines(brief, "      ", limit=LIST_ITEMS, told=explanation))
    if f.consequences:
        lines.append("    " + paint(translate("report.consequences", lang, count=len(f.consequences)), "dim", color))
        if verbose:
            for c in f.consequences:
                # a consequence's own fixes treat a symptom: the cause's fixes (and the plan) are the way out
                shown = render_finding(c, lang=lang, color=color, verbose=verbose, fixes=False)
                lines.extend("      " + line for line in shown)
        else:
            columns = width()
            for c in f.consequences[:CONSEQUENCE_LINES]:
                sev = translate(f"severity.{c.severity.value}", lang)
                lines.append(_clip(f"      {sev.upper()} {c.id}  {c.title.render(lang)}", columns))
            if len(f.consequences) > CONSEQUENCE_LINES:
                more = translate("report.more", lang, count=len(f.consequences) - CONSEQUENCE_LINES)
                lines.append("      " + paint(more, "dim", color))
    for i, fix in enumerate(f.fixes if fixes else (), 1):
        label = translate("report.fix", lang) if len(f.fixes) == 1 else f"{translate('report.fix', lang)} {i}"
        admin = f" ({translate('report.needs_admin', lang)})" if fix.needs_admin else ""
        lines.extend(wrap(f"{label}: {fix.summary.render(lang)}{admin}", "    "))
        for command in fix.commands:
            lines.append("      " + paint(command, "green", color))
    if verbose:
        lines.append("    " + paint(f.docs["command"] or "", "dim", color))
    return lines


def host_examined(report: Report) -> bool:
    """Whether the machine the env runs on was read (this machine, or its root given with --system-root)."""
    return bool(report.host.live or report.host.system_root is not None)


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
        from conda_torchcheck.inventory.torch import unreadable_torch_record

        damaged = unreadable_torch_record(env)
        if damaged is not None:
            out.append("  " + translate("report.torch_record_unreadable", lang, file=damaged.name))
        else:
            out.append("  " + translate("report.no_torch", lang))
    if report.import_test is not None:
        from conda_torchcheck.explain.render import import_test_outcome

        when = report.import_test.get("ran_at", "?")
        outcome = import_test_outcome(report.import_test, lang)
        out.append("  " + translate("report.import_test_ran", lang, outcome=outcome, when=when))
    out.append("")
    if not report.findings:
        # "nothing stops import torch" only where the machine the env runs on was read too
        key = "report.all_good" if host_examined(report) else "report.all_good_unexamined_host"
        out.extend(paint(line, "green", color) for line in wrap(translate(key, lang), ""))
        return "\n".join(out) + "\n"
    for severity in (Severity.ERROR, Severity.WARNING, Severity.INFO):
        group = [f for f in report.findings if f.severity is severity]
        if not group:
            continue
        for f in group:
            # with a plan, the plan is the one place fixes are shown (each finding's own with -v)
            fixes = report.plan is None or not report.plan.steps or bool(verbose)
            out.extend(render_finding(f, lang=lang, color=color, verbose=verbose, fixes=fixes))
            out.append("")
    if report.plan is not None and (report.plan.steps or report.plan.dropped):
        out.extend(render_plan(report.plan, lang=lang, color=color, verbose=verbose))
        out.append("")
    c = report.counts
    out.append(translate("report.summary", lang, errors=c["errors"], warnings=c["warnings"], info=c["info"]))
    return "\n".join(out) + "\n"
