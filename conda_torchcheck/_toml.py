"""One place that knows where TOML comes from (tomllib on 3.11+, tomli before)."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not imported from typing: this module must not pull typing in (start-up time)
if TYPE_CHECKING:
    from typing import Any

if sys.version_info >= (3, 11):
    import tomllib as _toml
else:  # pragma: no cover
    import tomli as _toml


def load_toml_text(text: str) -> dict[str, Any]:
    return _toml.loads(text)


TOMLDecodeError = _toml.TOMLDecodeError
