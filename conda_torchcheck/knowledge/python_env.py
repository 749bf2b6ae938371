"""What `import torch` needs of its Python, typed: the modules it imports by top-level name (shadowing.toml,
derived from the torch 2.5.1 wheel and CPython 3.11) and which declared dependencies it needs at import time
(python_requirements.toml, verified with torch 2.13.0+cpu installed --no-deps)."""

from __future__ import annotations

import functools

from conda_torchcheck.inventory.names import normalize
from conda_torchcheck.knowledge import load

SHADOWING_SOURCE = "knowledge/shadowing.toml: torch 2.5.1 macOS arm64 wheel's module-level imports, CPython 3.11"
REQUIREMENTS_SOURCE = "knowledge/python_requirements.toml: torch 2.13.0+cpu installed --no-deps, import torch"


@functools.cache
def torch_import_modules() -> frozenset[str]:
    """Top-level module names `import torch` imports (a user's file of that name shadows it)."""
    return frozenset(load("shadowing")["torch_import_modules"])


@functools.cache
def skipped_requirements() -> tuple[tuple[str, ...], frozenset[str]]:
    """(name prefixes, names) of declared dependencies the requirement check does not ask for."""
    table = load("python_requirements")["skip"]
    return tuple(table.get("prefixes", ())), frozenset(table.get("names", ()))


@functools.cache
def import_time_requirements(package: str = "torch") -> dict[str, str]:
    """Normalized distribution name -> the module `import <package>` imports from it at start-up."""
    return {normalize(k): v for k, v in load("python_requirements")["import_time"].get(package, {}).items()}
