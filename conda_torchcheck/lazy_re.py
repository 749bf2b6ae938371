"""Regular expressions compiled on first use, for module-level patterns that a run may never reach.

A check module is imported whenever its check can run on the target OS, but many of its patterns serve one
branch (a Windows Store Python, a Jetson board, a driver file that is not there). Compiling such a pattern at
import costs 0.05-0.2 ms each on every run; a :class:`LazyPattern` costs that only when something matches with it.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class LazyPattern:
    """``re.compile(pattern, flags)``, done the first time one of the compiled pattern's attributes is used."""

    __slots__ = ("_pattern", "_flags", "_compiled")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self._pattern, self._flags)
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"LazyPattern({self._pattern!r}, {self._flags!r})"
