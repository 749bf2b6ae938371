"""Terminal colour: only on a tty, never when NO_COLOR is set to a non-empty value (https://no-color.org: an
empty NO_COLOR does not count) and never on a terminal that declares it has none (TERM=dumb)."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

CODES = {"red": "31", "yellow": "33", "blue": "34", "green": "32", "bold": "1", "dim": "2"}


def wants_color(stream: TextIO | None = None) -> bool:
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def paint(text: str, style: str, enabled: bool) -> str:
    if not enabled or style not in CODES:
        return text
    return f"\033[{CODES[style]}m{text}\033[0m"


def terminal_columns(fallback: int = 80) -> int:
    """``shutil.get_terminal_size().columns``: $COLUMNS, else the terminal of stdout, else ``fallback``."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else fallback
