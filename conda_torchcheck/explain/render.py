"""Text and JSON output of ``explain`` (Markdown lives with the other Markdown in render/markdown.py)."""

from __future__ import annotations

import json

from conda_torchcheck.explain import Explanation
from conda_torchcheck.explain.diagnose import CONFIRMED, RULED_OUT, Diagnosis, RankedCause
from conda_torchcheck.messages import translate
from conda_torchcheck.render.style import paint
from conda_torchcheck.render.text import wrap

_STATUS_STYLE = {CONFIRMED: "red", RULED_OUT: "dim", "not-found": "dim", "unverifiable": "yellow"}


def source_label(source: str, lang: str | None) -> str:
    return translate(f"explain.source_{source.replace('-', '_')}", lang)


def target_reason_label(reason: str | None, lang: str | None) -> str:
    return translate(f"explain.target_{(reason or 'prefix').replace('-', '_')}", lang)


def import_test_outcome(result: dict, lang: str | None) -> str:
    outcome = result.get("outcome", "?")
    return translate(
        f"import_test.outcome_{outcome.replace('-', '_')}",
        lang,
        version=result.get("version") or "?",
        error_type=result.get("error_type") or "?",
        returncode=result.get("returncode"),
        timeout=result.get("timeout_s"),
        reason=result.get("reason") or "?",
    )


def labelled(label_key: str, text: str, lang: str | None) -> str:
    return translate("explain.labelled", lang, label=translate(label_key, lang), text=text)


def _cause_lines(c: RankedCause, lang: str | None, color: bool, *, detailed: bool) -> list[str]:
    status = ""
    if c.status != "possible":
        status = (
            " [" + paint(translate(f"explain.status.{c.status}", lang), _STATUS_STYLE.get(c.status, ""), color) + "]"
        )
    number = f"{c.rank}. "
    lines = wrap(f"{number}{c.title.render(lang)}{status}", "      ", hang="      " + " " * len(number))
    if c.doubt is not None:
        # the paste contradicts this cause's premise: say so instead of stating it as fact
        lines.extend(wrap(labelled("explain.doubt.label", c.doubt.render(lang), lang), "         "))
    if c.ruled_out is not None:
        lines.extend(wrap(c.ruled_out.render(lang), "         "))
        return lines
    for f in c.confirmed_by:
        lines.extend(wrap(labelled("explain.confirmed_by", f"{f.id} {f.title.render(lang)}", lang), "         "))
    if detailed:
        lines.extend(wrap(labelled("explain.how_to_tell", c.tell.render(lang), lang), "         "))
        lines.extend(wrap(labelled("explain.fix", c.fix.render(lang), lang), "         "))
        fixes = [fix for f in c.confirmed_by for fix in f.fixes]
        commands = [cmd for fix in fixes for cmd in fix.commands] or list(c.commands)
        for command in dict.fromkeys(commands):
            lines.append("           " + paint(command, "green", color))
    return lines


def _diagnosis_lines(i: int, d: Diagnosis, lang: str | None, color: bool, verbose: int) -> list[str]:
    head = f"[{i}] {d.title.render(lang)}"
    if d.match.count > 1:
        head += " " + translate("explain.seen_times", lang, count=d.match.count)
    if d.match.more_distinct:
        head += " " + translate("explain.more_distinct", lang, count=d.match.more_distinct)
    lines = [paint(head, "bold", color)]
    # an excerpt of several lines (dyld's "Library not loaded" with its "Referenced from:" lines) keeps every
    # line inside the quote, with its own indentation
    lines.extend("    > " + line for line in d.match.excerpt.split("\n"))
    lines.extend(wrap(d.explanation.render(lang), "    "))
    for note in d.notes:
        lines.extend(wrap("! " + note.render(lang), "    "))
    lines.append("")
    root = d.root_cause
    if root is not None:
        lines.append("    " + paint(d.verdict.render(lang), "red", color))
        lines.extend(_cause_lines(root, lang, color, detailed=True))
        others = [c for c in d.causes if c is not root]
        if others:
            lines.append("    " + translate("explain.other_causes", lang))
            for c in others:
                lines.extend(_cause_lines(c, lang, color, detailed=verbose > 0))
        return lines
    lines.extend(wrap(d.verdict.render(lang), "    "))
    if d.env_checked:
        lines.append("    " + translate("explain.likely_causes", lang))
    for c in d.causes:
        # on a checked env, ruled-out causes are listed briefly; the others in full
        lines.extend(_cause_lines(c, lang, color, detailed=c.status != RULED_OUT))
    return lines


def decision_line(expl: Explanation, lang: str | None) -> str:
    """One sentence: the text decides the first cause, or between which causes it does not and what would."""
    decision = expl.decision
    if decision.decided:
        why = translate(f"explain.decision.why.{decision.reason}", lang, **dict(decision.numbers))
        return translate("explain.decision.decided", lang, why=why)
    ranked = {c.id: c for d in reversed(expl.diagnoses) for c in d.causes}
    titles = [ranked[cid].title.render(lang) for cid in decision.between if cid in ranked]
    decider = decision.decider_text
    return translate(
        "explain.decision.undecided" if len(titles) != 1 else "explain.decision.undecided_one",
        lang,
        between=" / ".join(f"\u201c{t}\u201d" for t in titles) or "-",
        decider=decider.render(lang) if decider else "-",
    )


def _lead_lines(expl: Explanation, lang: str | None) -> list[str]:
    """The causes the nearest resolved reports established, as leads to check (the text itself decided none)."""

    lines = wrap(translate("explain.leads.header", lang), "")
    for i, cid in enumerate(expl.similar_causes[:3], 1):
        number = f"{i}. "
        title = translate(f"explain.cause.{cid}.title", lang)
        lines.extend(wrap(f"{number}{title}", "  ", hang="  " + " " * len(number)))
        tell = translate(f"explain.cause.{cid}.tell", lang)
        lines.extend(wrap(labelled("explain.how_to_tell", tell, lang), "     "))
    return lines


def similar_lines(expl: Explanation, lang: str | None) -> list[str]:
    """The nearest resolved public threads, each with the cause it established (never stated as this one's)."""
    near = expl.similar
    if not near:
        return []
    lines = ["", translate("explain.similar.header", lang)]
    for n in near:
        lines.append(f"  - {n.report.url}")
        lines.extend(wrap(n.report.summary, "    "))
    return lines


def render_explanation_text(
    expl: Explanation, *, lang: str | None = None, color: bool = False, verbose: int = 0
) -> str:
    out: list[str] = []
    if expl.env is not None:
        out.append(
            paint(
                translate(
                    "explain.target",
                    lang,
                    prefix=str(expl.env.prefix),
                    reason=target_reason_label(expl.target_reason, lang),
                ),
                "bold",
                color,
            )
        )
        if expl.checks_run:
            out.append("  " + translate("explain.checks_ran", lang, ids=", ".join(expl.checks_run)))
    if expl.import_test is not None:
        out.append(
            translate(
                "explain.import_test_line",
                lang,
                when=expl.import_test.get("ran_at", "?"),
                outcome=import_test_outcome(expl.import_test, lang),
            )
        )
    for note in expl.notes:
        out.extend(wrap(note.render(lang), ""))
    if not expl.diagnoses:
        out.append(translate("explain.nothing", lang))
        if expl.leads_from_similar:
            out.extend(_lead_lines(expl, lang))
        out.extend(wrap(translate("explain.nothing_hint", lang), ""))
    else:
        out.append(translate("explain.header", lang, count=len(expl.diagnoses), source=source_label(expl.source, lang)))
        if expl.env is None:
            out.extend(wrap(translate("explain.no_target", lang), ""))
        for i, d in enumerate(expl.diagnoses, 1):
            out.append("")
            out.extend(_diagnosis_lines(i, d, lang, color, verbose))
        out.append("")
        out.extend(wrap(decision_line(expl, lang), ""))
    out.extend(similar_lines(expl, lang))
    others = expl.other_findings
    if others:
        from conda_torchcheck.render.text import render_finding

        out.append("")
        out.append(translate("explain.other_findings", lang))
        for f in others:
            out.extend("  " + line for line in render_finding(f, lang=lang, color=color, verbose=verbose))
    return "\n".join(out).rstrip() + "\n"


def render_explanation_json(expl: Explanation, *, lang: str | None = None) -> str:
    return json.dumps(expl.to_dict(lang), indent=2, ensure_ascii=False)
