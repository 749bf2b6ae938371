"""Markdown for GitHub issues: a one-line verdict, an environment table, findings in collapsible sections.

It must stay readable when pasted as-is, and render on GitHub: table cells escape ``|``, backticks and ``<``;
free text escapes ``*``, ``~`` and ``<`` outside code spans (GitHub drops unknown tags such as ``<prefix>``
and turns ``cudnn*, cublas*`` into italics); ``<summary>`` content is HTML-escaped; code fences are longer
than any backtick run they hold.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conda_torchcheck import __version__
from conda_torchcheck.findings import Finding, Severity
from conda_torchcheck.messages import translate
from conda_torchcheck.report import Report

if TYPE_CHECKING:
    from conda_torchcheck.explain import Explanation
    from conda_torchcheck.explain.diagnose import Diagnosis, RankedCause
    from conda_torchcheck.inventory.model import Environment, HostFacts
    from conda_torchcheck.inventory.torch import TorchInfo

_ICON = {Severity.ERROR: "❌", Severity.WARNING: "⚠️", Severity.INFO: "ℹ️"}
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_OS_NAMES = {"windows": "Windows", "linux": "Linux", "darwin": "macOS"}
# a backslash before ASCII punctuation is an escape in Markdown; before anything else (C:\Users) it is literal
_ESCAPING_BACKSLASH = re.compile(r"\\(?=[!-/:-@\[-`{-~])")


# --- escaping -------------------------------------------------------------------------------------------------


def _escape_plain(text: str) -> str:
    text = _ESCAPING_BACKSLASH.sub(r"\\\\", text)
    return text.replace("<", "&lt;").replace(">", "&gt;").replace("*", r"\*").replace("~", r"\~")


def md_text(text: str) -> str:
    """Free text: special characters escaped outside `code spans`, which are kept as they are."""
    out, last = [], 0
    for m in _CODE_SPAN.finditer(text):
        out.append(_escape_plain(text[last : m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(_escape_plain(text[last:]))
    return "".join(out)


def md_code(value: str) -> str:
    """An inline code span that survives any backticks inside ``value``."""
    value = " ".join(str(value).split())
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def md_cell(text: str) -> str:
    """A table cell: one line, pipes and backticks escaped, no raw HTML."""
    text = " ".join(str(text).split())
    text = _ESCAPING_BACKSLASH.sub(r"\\\\", text).replace("|", r"\|").replace("`", r"\`")
    return text.replace("<", "&lt;").replace(">", "&gt;").replace("*", r"\*")


def md_cell_code(value: str) -> str:
    """A table cell holding a path or version: a code span, with pipes escaped as GitHub tables need."""
    return md_code(value).replace("|", r"\|")


def fence(body: str, info: str = "text") -> str:
    longest = max((len(run) for run in re.findall(r"`{3,}", body)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}{info}\n{body.rstrip()}\n{marks}"


def summary_html(text: str) -> str:
    """``<summary>`` holds HTML, not Markdown: escape it, and turn `code` into <code>."""
    out, last = [], 0
    for m in _CODE_SPAN.finditer(text):
        out.append(html.escape(text[last : m.start()], quote=False))
        out.append(f"<code>{html.escape(m.group(2), quote=False)}</code>")
        last = m.end()
    out.append(html.escape(text[last:], quote=False))
    return " ".join("".join(out).split())


def details(summary: str, body: Sequence[str], *, open_: bool = False) -> list[str]:
    """A collapsible section; blank lines around the body so GitHub renders the Markdown inside."""
    return [f"<details{' open' if open_ else ''}>", f"<summary>{summary}</summary>", "", *body, "", "</details>", ""]


def table(header: tuple[str, str], rows: Iterable[tuple[str, str]]) -> list[str]:
    lines = [f"| {md_cell(header[0])} | {md_cell(header[1])} |", "|---|---|"]
    lines.extend(f"| {md_cell(label)} | {value} |" for label, value in rows)
    return lines


def _evidence_lines(value: Any, indent: str = "") -> list[str]:
    lines: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(item, (Mapping, list, tuple)) and item:
                lines.append(f"{indent}{key}:")
                lines.extend(_evidence_lines(item, indent + "  "))
            else:
                lines.append(f"{indent}{key}: {_scalar(item)}")
    elif isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, Mapping):
                sub = _evidence_lines(item, indent + "  ")
                if sub:
                    lines.append(f"{indent}- {sub[0].strip()}")
                    lines.extend(sub[1:])
            else:
                lines.append(f"{indent}- {_scalar(item)}")
    else:
        lines.append(f"{indent}{_scalar(value)}")
    return lines


def _scalar(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, (list, tuple)) and not value:
        return "[]"
    if isinstance(value, Mapping) and not value:
        return "{}"
    return str(value)


# --- environment table ------------------------------------------------------------------------------------------


def _record_version(env: Environment, names: Sequence[str]) -> tuple[str, str] | None:
    for name in names:
        rec = env.record(name)
        if rec is not None:
            return name, rec.version
    return None


def _fact(facts: Mapping[str, Any], key: str) -> str | None:
    value = facts.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, Mapping):
        return ", ".join(f"{k}: {v}" for k, v in value.items())
    return str(value)


def _machine_os(env: Environment, host: HostFacts | None) -> str:
    """``Linux`` or, on WSL, ``Linux (WSL 2)``: read from the machine's root when it is known."""
    name = _OS_NAMES.get(env.os, env.os)
    if env.os != "linux" or host is None:
        return name
    root = host.system_root or (Path("/") if host.live else None)
    if root is None:
        return name
    from conda_torchcheck.inventory.wsl import wsl_version

    version = wsl_version(root)
    return f"{name} (WSL {version})" if version else name


def environment_rows(
    env: Environment,
    host: HostFacts | None,
    torch: TorchInfo | None,
    lang: str | None,
    *,
    import_test: Mapping[str, Any] | None = None,
    facts: Mapping[str, Any] | None = None,
) -> list[tuple[str, str]]:
    """(label, rendered cell) rows; values nobody determined say so instead of guessing."""
    facts = facts or {}
    unknown = md_cell(translate("markdown.not_determined", lang))
    rows: list[tuple[str, str]] = []
    rows.append((translate("markdown.row_env", lang), md_cell_code(str(env.prefix)) + f" ({md_cell(env.layout)})"))
    os_key = "markdown.os_live" if host is None or host.live else "markdown.os_foreign"
    rows.append(
        (
            translate("markdown.row_os", lang),
            md_cell(translate(os_key, lang, os=_machine_os(env, host), platform=env.platform_text)),
        )
    )
    py = env.python
    py_value = translate("markdown.python_value", lang, version=py.version or "?", arch=py.arch or "?")
    if py.free_threaded:
        py_value += ", " + translate("markdown.free_threaded", lang)
    rows.append((translate("markdown.row_python", lang), md_cell(py_value)))
    if torch is not None and torch.installed:
        source = torch.source
        if torch.conda_record is not None and torch.source != "pip":
            source += f" ({torch.conda_record.channel}, {torch.conda_record.build})"
        value = translate(
            "markdown.torch_value", lang, version=torch.version or "?", variant=torch.variant, source=source
        )
        rows.append((translate("markdown.row_torch", lang), md_cell(value)))
        cuda = (
            translate("markdown.cuda_build", lang, cuda=torch.cuda_version)
            if torch.cuda_version
            else translate("markdown.cuda_none", lang)
        )
    else:
        from conda_torchcheck.inventory.torch import unreadable_torch_record

        damaged = unreadable_torch_record(env)
        absent = (
            translate("report.torch_record_unreadable", lang, file=damaged.name)
            if damaged is not None
            else translate("markdown.not_installed", lang)
        )
        rows.append((translate("markdown.row_torch", lang), md_cell(absent)))
        cuda = translate("markdown.cuda_none", lang)
    driver = _fact(facts, "cuda_driver")
    if torch is not None and torch.cuda_version:
        cuda += "; " + translate(
            "markdown.cuda_driver", lang, driver=driver or translate("markdown.not_determined", lang)
        )
    rows.append((translate("markdown.row_cuda", lang), md_cell(cuda)))
    if env.os == "windows":
        vc = _fact(facts, "vc_runtime")
        if vc is None:
            found = _record_version(env, ("vc14_runtime", "vs2015_runtime"))
            if found is not None:
                vc = translate("markdown.runtime_conda", lang, package=found[0], version=found[1])
        rows.append((translate("markdown.row_vc_runtime", lang), md_cell(vc) if vc else unknown))
    elif env.os == "linux":
        lib = _fact(facts, "libstdcxx")
        if lib is None:
            found = _record_version(env, ("libstdcxx", "libstdcxx-ng"))
            lib = (
                translate("markdown.libstdcxx_conda", lang, package=found[0], version=found[1])
                if found is not None
                else translate("markdown.libstdcxx_system", lang)
            )
        rows.append((translate("markdown.row_libstdcxx", lang), md_cell(lib)))
    if import_test is None:
        test_value = translate("markdown.import_test_not_run", lang)
    else:
        from conda_torchcheck.explain.render import import_test_outcome

        test_value = translate(
            "markdown.import_test_ran",
            lang,
            when=import_test.get("ran_at", "?"),
            outcome=import_test_outcome(dict(import_test), lang),
        )
    rows.append((translate("markdown.row_import_test", lang), md_cell(test_value)))
    rows.append((translate("markdown.row_tool", lang), md_cell(f"conda-torchcheck {__version__}")))
    return rows


def plan_section(plan: Any, lang: str | None) -> list[str]:
    """The one fix plan: numbered steps, each with its commands, what it changes and how it was checked; then the
    fixes not offered and why."""
    out = [f"### {md_text(translate('report.plan', lang, count=len(plan.steps)))}", ""]
    for n, step in enumerate(plan.steps, 1):
        also = f" ({translate('report.plan_also', lang, ids=', '.join(step.also_fixes))})" if step.also_fixes else ""
        admin = f" _({md_text(translate('markdown.needs_admin', lang))})_" if step.needs_admin else ""
        out.append(f"{n}. **{md_text(step.finding)}**{md_text(also)}: {md_text(step.summary)}{admin}")
        if step.commands:
            out += ["", _indented(fence("\n".join(step.commands), "shell"))]
        v = step.verification
        notes = [translate("report.plan_changes", lang, changes=step.changes)]
        if v.status == "verified":
            notes.append(translate("report.plan_verified", lang, by=v.by or "?"))
        elif v.status == "not verified":
            notes.append(translate("report.plan_not_verified", lang, reason=v.reason or "?"))
        out += ["", *(f"   - {md_text(note)}" for note in notes), ""]
    for d in plan.dropped:
        text = translate("report.plan_dropped", lang, finding=d.finding, command="; ".join(d.commands), reason=d.reason)
        out.append(f"- {md_text(text)}")
    if plan.dropped:
        out.append("")
    return out


def _indented(block: str) -> str:
    """A block inside a list item: three spaces, as the item's text."""
    return "\n".join(f"   {line}" if line else line for line in block.splitlines())


def finding_section(f: Finding, lang: str | None, *, fixes: bool = True) -> list[str]:
    sev = translate(f"severity.{f.severity.value}", lang).upper()
    summary = f"{_ICON[f.severity]} <b>{html.escape(sev)} {html.escape(f.id)}</b>: {summary_html(f.title.render(lang))}"
    body: list[str] = [md_text(f.explanation.render(lang))]
    doc = f.to_dict(lang)
    if doc["evidence"]:
        body += [
            "",
            f"**{md_text(translate('markdown.evidence', lang))}**",
            "",
            fence("\n".join(_evidence_lines(doc["evidence"]))),
        ]
    for i, fix in enumerate(f.fixes if fixes else (), 1):
        label = translate("markdown.fix", lang) if len(f.fixes) == 1 else translate("markdown.fix_n", lang, n=i)
        admin = f" _({md_text(translate('markdown.needs_admin', lang))})_" if fix.needs_admin else ""
        body += ["", f"**{md_text(label)}:** {md_text(fix.summary.render(lang))}{admin}"]
        if fix.commands:
            body += ["", fence("\n".join(fix.commands), "shell")]
    body += ["", f"{md_text(translate('markdown.docs', lang, id=f.id))}: `{f.docs['command']}`"]
    return details(summary, body)


def _verdict(report: Report, lang: str | None) -> str:
    c = report.counts
    first = next((f for f in report.findings if f.severity is not Severity.INFO), None)
    first_text = f"{first.id} {first.title.render(lang)}" if first else ""
    if c["errors"]:
        line = translate("markdown.verdict_errors", lang, errors=c["errors"], warnings=c["warnings"], first=first_text)
        icon = "❌"
    elif c["warnings"]:
        line = translate("markdown.verdict_warnings", lang, warnings=c["warnings"], first=first_text)
        icon = "⚠️"
    elif not report.torch.installed:
        from conda_torchcheck.inventory.torch import unreadable_torch_record

        damaged = unreadable_torch_record(report.env)
        if damaged is not None:
            line, icon = translate("report.torch_record_unreadable", lang, file=damaged.name), "⚠️"
        else:
            line, icon = translate("markdown.verdict_no_torch", lang), "ℹ️"
    else:
        from conda_torchcheck.render.text import host_examined

        key = "markdown.verdict_ok" if host_examined(report) else "markdown.verdict_ok_unexamined_host"
        line, icon = translate(key, lang), "✅"
    return f"{icon} **conda-torchcheck:** {md_text(' '.join(line.split()))}"


def _packages(report: Report, lang: str | None) -> list[str]:
    family = report.torch_family()
    rows = [(r["name"], r["version"], r["build"], r["channel"]) for r in family["conda"]] + [
        (r["name"], r["version"], r["installer"] or "-", r["site"]) for r in family["pip"]
    ]
    if not rows:
        return []
    header = [
        translate(k, lang)
        for k in ("markdown.package", "markdown.version", "markdown.build_or_installer", "markdown.channel_or_site")
    ]
    lines = ["| " + " | ".join(md_cell(h) for h in header) + " |", "|---|---|---|---|"]
    lines += ["| " + " | ".join(md_cell(str(v)) for v in row) + " |" for row in rows]
    return details(html.escape(translate("markdown.packages", lang)), lines)


def _import_test_output(import_test: Mapping[str, Any] | None, lang: str | None) -> list[str]:
    if not import_test:
        return []
    report = import_test.get("report") or {}
    text = str(report.get("traceback") or "") or str(import_test.get("stderr_tail") or "")
    if not text.strip():
        return []
    lines = text.strip().splitlines()[-60:]
    return details(html.escape(translate("markdown.import_test_output", lang)), [fence("\n".join(lines))])


def render_markdown(report: Report, *, lang: str | None = None) -> str:
    from conda_torchcheck.knowledge import beyond_tables

    out = [_verdict(report, lang), ""]
    newest = beyond_tables(report.torch.version) if report.torch.installed else None
    if newest is not None:
        out += [md_text(translate("report.torch_beyond_tables", lang, version=report.torch.version, newest=newest)), ""]
    out += table(
        (translate("markdown.item", lang), translate("markdown.value", lang)),
        environment_rows(
            report.env,
            report.host,
            report.torch,
            lang,
            import_test=report.import_test,
            facts=getattr(report, "facts", None),
        ),
    )
    out += ["", f"### {md_text(translate('markdown.findings', lang))}", ""]
    if not report.findings:
        out += [md_text(translate("markdown.no_findings", lang)), ""]
    plan = getattr(report, "plan", None)
    for f in report.findings:
        # with a plan, the plan is the one place fixes are shown (as in the text report)
        out += finding_section(f, lang, fixes=plan is None or not plan.steps)
    if plan is not None and (plan.steps or plan.dropped):
        out += plan_section(plan, lang)
    out += _import_test_output(report.import_test, lang)
    out += _packages(report, lang)
    out += [f"<sub>{html.escape(translate('markdown.generated', lang, version=__version__))}</sub>"]
    return "\n".join(out).rstrip() + "\n"


# --- explain ----------------------------------------------------------------------------------------------------


def _cause_section(c: RankedCause, lang: str | None) -> list[str]:
    status = translate(f"explain.status.{c.status}", lang)
    summary = f"{c.rank}. {summary_html(c.title.render(lang))}"
    if c.status != "possible":
        summary += f" — <i>{html.escape(status)}</i>"
    body: list[str] = []
    if c.doubt is not None:
        # the paste contradicts this cause's premise: the bug report says why it is ranked last
        body += [f"**{md_text(translate('explain.doubt.label', lang))}:** {md_text(c.doubt.render(lang))}", ""]
    if c.ruled_out is not None:
        body.append(md_text(c.ruled_out.render(lang)))
    for f in c.confirmed_by:
        body += [f"**{md_text(translate('explain.confirmed_by', lang))}:** {f.id} {md_text(f.title.render(lang))}", ""]
    body += [f"**{md_text(translate('explain.how_to_tell', lang))}:** {md_text(c.tell.render(lang))}", ""]
    body += [f"**{md_text(translate('explain.fix', lang))}:** {md_text(c.fix.render(lang))}"]
    commands = [cmd for f in c.confirmed_by for fix in f.fixes for cmd in fix.commands] or list(c.commands)
    if commands:
        body += ["", fence("\n".join(dict.fromkeys(commands)), "shell")]
    return details(summary, body, open_=c.status == "confirmed")


def _diagnosis_section(i: int, d: Diagnosis, lang: str | None) -> list[str]:
    out = [
        f"### {i}. {md_text(d.title.render(lang))}",
        "",
        fence(d.match.excerpt),
        "",
        md_text(d.explanation.render(lang)),
        "",
    ]
    for note in d.notes:
        out += [f"> {md_text(note.render(lang))}", ""]
    out += [f"**{md_text(d.verdict.render(lang))}**", ""]
    for c in d.causes:
        out += _cause_section(c, lang)
    return out


def render_explanation_markdown(expl: Explanation, *, lang: str | None = None) -> str:
    count = len(expl.diagnoses)
    roots = [d.root_cause for d in expl.diagnoses if d.root_cause is not None]
    if roots:
        verdict = "❌ " + translate("markdown.explain_verdict_root", lang, cause=roots[0].title.render(lang))
    elif not count:
        verdict = "ℹ️ " + translate("markdown.explain_verdict_nothing", lang)
    elif expl.env is not None:
        verdict = "⚠️ " + translate("markdown.explain_verdict_checked", lang, count=count)
    else:
        verdict = "ℹ️ " + translate("markdown.explain_verdict_ranked", lang, count=count)
    out = [f"**conda-torchcheck explain:** {md_text(verdict)}", ""]
    if expl.env is not None:
        out += table(
            (translate("markdown.item", lang), translate("markdown.value", lang)),
            environment_rows(expl.env, expl.host, expl.torch, lang, import_test=expl.import_test, facts=expl.facts),
        )
        out.append("")
    elif expl.import_test is not None:
        out += [
            md_text(
                translate(
                    "explain.import_test_line",
                    lang,
                    when=expl.import_test.get("ran_at", "?"),
                    outcome=expl.import_test.get("outcome", "?"),
                )
            ),
            "",
        ]
    for note in expl.notes:
        out += [f"> {md_text(note.render(lang))}", ""]
    if not count:
        out += [md_text(translate("explain.nothing_hint", lang)), ""]
    for i, d in enumerate(expl.diagnoses, 1):
        out += _diagnosis_section(i, d, lang)
    others = expl.other_findings
    if others:
        out += [f"### {md_text(translate('explain.other_findings', lang))}", ""]
        for f in others:
            out += finding_section(f, lang)
    out += _import_test_output(expl.import_test, lang)
    out += [f"<sub>{html.escape(translate('markdown.generated', lang, version=__version__))}</sub>"]
    return "\n".join(out).rstrip() + "\n"
