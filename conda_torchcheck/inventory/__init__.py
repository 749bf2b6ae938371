"""Inventory: a target environment read into frozen dataclasses (no conda import, no writes)."""

from conda_torchcheck.inventory.environment import load_environment
from conda_torchcheck.inventory.model import (
    CondaRecord,
    Distribution,
    Environment,
    HostFacts,
    PythonInfo,
    SiteDir,
)
from conda_torchcheck.inventory.torch import TorchInfo, find_torch

__all__ = [
    "CondaRecord",
    "Distribution",
    "Environment",
    "HostFacts",
    "PythonInfo",
    "SiteDir",
    "TorchInfo",
    "find_torch",
    "load_environment",
]
