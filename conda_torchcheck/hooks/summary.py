"""Short, line-limited summaries of findings for hook output (stderr only, never stdout)."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from conda_torchcheck.findings import Finding, Severity
from conda_torchcheck.messages import translate


def finding_line(f: Finding, lang: str | None = None) -> str:
    return f"  {f.id} {f.title.render(lang)}"


def finding_lines(findings: Sequence[Finding], budget: int, lang: str | None = None) -> list[str]:
    """At most ``budget`` lines: one per finding, the last one saying how many were left out."""
    if budget <= 0 or not findings:
        return []
    if len(findings) <= budget:
        return [finding_line(f, lang) for f in findings]
    shown = [finding_line(f, lang) for f in findings[: budget - 1]]
    shown.append(translate("plugin.more", lang, count=len(findings) - (budget - 1)))
    return shown


def first_fix_command(findings: Sequence[Finding]) -> str | None:
    for f in findings:
        for fix in f.fixes:
            if fix.commands:
                return fix.commands[0]
    return None


def report_command(prefix: Path | str) -> str:
    """The one command that prints the full report for ``prefix``, quoted for the user's shell."""
    text = str(prefix)
    if sys.platform == "win32" or "\\" in text:
        quoted = f'"{text}"' if any(c in text for c in " &()[]{}^=;!+,`~%") or not text else text
    else:
        quoted = shlex.quote(text)
    return f"conda torchcheck -p {quoted}"


def at_least(findings: Sequence[Finding], severity: Severity) -> list[Finding]:
    return [f for f in findings if f.severity.rank <= severity.rank]


def emit(lines: Sequence[str], limit: int = 6) -> None:
    """Write up to ``limit`` lines to stderr; never raises (a closed stderr must not fail conda)."""
    try:
        for line in list(lines)[:limit]:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except Exception:
        pass
