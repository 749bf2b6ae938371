"""Inventory: a target environment read into frozen dataclasses (no conda import, no writes).

Names are exported lazily: importing ``conda_torchcheck.inventory.model`` alone (as renderers and the conda
hooks do) must not pay for the readers.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_EXPORTS = {
    "load_environment": "conda_torchcheck.inventory.environment",
    "CondaRecord": "conda_torchcheck.inventory.model",
    "Distribution": "conda_torchcheck.inventory.model",
    "Environment": "conda_torchcheck.inventory.model",
    "HostFacts": "conda_torchcheck.inventory.host",
    "PythonInfo": "conda_torchcheck.inventory.model",
    "SiteDir": "conda_torchcheck.inventory.model",
    "TorchInfo": "conda_torchcheck.inventory.torch",
    "find_torch": "conda_torchcheck.inventory.torch",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
