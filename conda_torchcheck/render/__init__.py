"""Renderers: text (terminal), JSON (one document), Markdown (bug reports)."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: `tree` must not pay for importing it
if TYPE_CHECKING:  # the report module pulls in the inventory; tree and explain render without it
    from conda_torchcheck.report import Report

FORMATS = ("text", "json", "markdown")


def render(report: Report, fmt: str, *, lang: str | None = None, color: bool = False, verbose: int = 0) -> str:
    if fmt == "json":
        from conda_torchcheck.render.json import render_json

        return render_json(report, lang=lang)
    if fmt == "markdown":
        from conda_torchcheck.render.markdown import render_markdown

        return render_markdown(report, lang=lang)
    from conda_torchcheck.render.text import render_text

    return render_text(report, lang=lang, color=color, verbose=verbose)
