"""Text for ``check --all-envs``: one line per env (verdict, name or path, torch, worst finding) and a total."""

from __future__ import annotations

from typing import Any

from conda_torchcheck.messages import translate
from conda_torchcheck.render.style import paint

_COLOURS = {"errors": "red", "warnings": "yellow", "ok": "green", "no-torch": "dim", "unreadable": "red"}


def _torch_text(entry: dict[str, Any], lang: str | None) -> str:
    torch = entry["torch"]
    if torch is not None and torch.get("source") == "unreadable-record":
        return translate("fleet.torch_record_unreadable", lang)
    if torch is None or not torch.get("version"):
        return translate("fleet.no_torch", lang)
    details = ", ".join(v for v in (torch.get("source"), torch.get("variant")) if v and v != "unknown")
    return f"torch {torch['version']}" + (f" ({details})" if details else "")


def render_fleet_text(
    doc: dict[str, Any], *, lang: str | None = None, color: bool = False, command: str = "conda-torchcheck"
) -> str:
    """The fleet table; ``command`` is the command the footer names for one env's report (``conda torchcheck``
    under conda)."""
    entries = doc["envs"]
    if not entries:
        places = ", ".join(doc.get("looked_in", ()))
        return translate("fleet.none", lang, places=places) + "\n"
    labels = {e["prefix"]: e["name"] or e["prefix"] for e in entries}
    width = min(max((len(v) for v in labels.values()), default=0), 40)
    out = [paint(translate("fleet.header", lang, count=len(entries)), "bold", color)]
    for e in entries:
        verdict = translate(f"fleet.verdict.{e['verdict'].replace('-', '_')}", lang)
        label = labels[e["prefix"]]
        if e["status"] == "unreadable":
            detail = e["error"]["message"] if e["error"] else ""
            line = f"  {verdict:<10} {label:<{width}}  {detail}"
        else:
            worst = e["worst"]
            tail = f"  {worst['id']} {worst['title']}" if worst and worst["severity"] != "info" else ""
            if e["verdict"] == "unreadable" and worst and worst["id"] == "TC901":
                tail = ""  # the torch column already says it, naming TC901
            line = f"  {verdict:<10} {label:<{width}}  {_torch_text(e, lang)}{tail}"
        out.append(paint(line, _COLOURS.get(e["verdict"], ""), color))
    s = doc["summary"]
    out.append("")
    out.append(translate("fleet.summary", lang, **s))
    if any(e["status"] == "checked" and e["verdict"] in ("errors", "warnings") for e in entries):
        out.append(translate("fleet.details", lang, command=command))
    return "\n".join(out) + "\n"
