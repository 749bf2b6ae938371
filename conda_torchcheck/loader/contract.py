"""The contract between the checks and the three loader models (Windows, ld.so, dyld).

Every loader module offers the same entry points (:class:`Loader`); :func:`for_os` is the one place that
picks a module by the env's OS. A loader reads the env and the host from its context and caches what it
computed through the context's ``memo`` (:class:`LoaderContext`): a check run passes its
:class:`~conda_torchcheck.checks.context.CheckContext`, a run on one file outside any env's checks
(``tree FILE``) a :class:`FileContext`, whose memo is its own.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any, Protocol, TypeVar

    from conda_torchcheck.inventory.model import Environment
    from conda_torchcheck.loader.graph import LoadGraph

    T = TypeVar("T")

    class LoaderContext(Protocol):
        """What a loader reads: the env (None outside one), the host's facts, and a per-run memo."""

        env: Environment | None
        host: Any

        def memo(self, key: str, factory: Callable[[], T]) -> T: ...

        def computed(self, key: str) -> Any | None: ...

    class Loader(Protocol):
        """One OS's loader model (a package: loader/windows/, loader/linux/, loader/macos/)."""

        def build_torch_graph(self, ctx: LoaderContext) -> LoadGraph | None: ...

        def build_graph_for_file(self, ctx: LoaderContext, path: Path) -> LoadGraph: ...

        def report_facts(self, ctx: LoaderContext, *, compute: bool = True) -> dict[str, str]:
            """What a bug report shows of this OS's model (the environment table); with ``compute=False`` only
            what the run already computed is read."""
            ...


#: the loader module of each OS the env model knows (EnvironmentFacts.os)
LOADER_MODULES = {
    "windows": "conda_torchcheck.loader.windows",
    "linux": "conda_torchcheck.loader.linux",
    "darwin": "conda_torchcheck.loader.macos",
}


def for_os(os_name: str | None) -> Loader | None:
    """The loader model of ``os_name`` (``windows``, ``linux``, ``darwin``); None for any other OS."""
    module = LOADER_MODULES.get(os_name or "")
    return None if module is None else importlib.import_module(module)  # type: ignore[return-value]


class FileContext:
    """The context of a loader run outside a check run: no env unless one is given, the host's facts, and a
    memo of its own (so nothing is written into a check run's memo)."""

    __slots__ = ("env", "host", "_memo")

    def __init__(self, host: Any, env: Environment | None = None) -> None:
        self.env = env
        self.host = host
        self._memo: dict[str, Any] = {}

    def memo(self, key: str, factory: Callable[[], T]) -> T:
        if key not in self._memo:
            self._memo[key] = factory()
        return self._memo[key]

    def computed(self, key: str) -> Any | None:
        return self._memo.get(key)


__all__ = ["LOADER_MODULES", "FileContext", "for_os"]
