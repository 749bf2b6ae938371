"""The steps of ``import torch`` that ld.so's and dyld's models take the same way: start the env's python (or
stand in for one that cannot be read), and record torch's extension module as missing when it is not there."""

from __future__ import annotations

from conda_torchcheck.loader.graph import Dependency, Module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Protocol

    from conda_torchcheck.inventory.model import Environment
    from conda_torchcheck.loader.graph import LoadGraph, SearchPlace

    class ProcessLoader(Protocol):
        """What both engines (linux.LdSo, macos.Dyld) offer: the main executable, the steps, edges."""

        main: Any
        steps: list[Any]

        def start_process(self, path: Path | None) -> Any: ...

        def _edge(self, module: Module, dep: Dependency) -> None: ...


def start_python(loader: ProcessLoader, graph: LoadGraph, env: Environment, unreadable_note: str) -> None:
    """Start the process at the env's python; a python that cannot be read becomes a placeholder root."""
    loader.start_process(env.python.executable if env.python is not None else None)
    if loader.main is None:
        placeholder = Module(env.prefix / "bin" / "python", unreadable=unreadable_note)
        graph.modules[str(placeholder.path)] = placeholder
        graph.roots.append(placeholder.path)
    else:
        graph.roots.append(loader.main.path)


def record_missing_extension(loader: ProcessLoader, step: Any, name: str, place: SearchPlace) -> None:
    """torch's package without its ``_C`` extension module: ``step`` (already failed) misses ``name``."""
    dep = Dependency(name, "dlopen", None, (place,))
    if loader.main is not None:
        loader._edge(loader.main.module, dep)
    step.misses.append((loader.main, dep))
    loader.steps.append(step)


__all__ = ["record_missing_extension", "start_python"]
