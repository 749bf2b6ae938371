"""What every check receives: the env, the host, options, and facts computed once and shared."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from conda_torchcheck.inventory.model import Environment, HostFacts
from conda_torchcheck.inventory.torch import TorchInfo, find_torch
from conda_torchcheck.records import Record

T = TypeVar("T")


class CheckOptions(Record):
    """What the user asked of a run beyond the env (the opt-in import test, hash verification)."""

    __slots__ = ("import_test", "import_timeout", "verify_hashes", "extra")

    def __init__(
        self,
        import_test: bool = False,
        import_timeout: float = 60.0,
        verify_hashes: bool = True,
        extra: dict[str, Any] | None = None,
    ) -> None:
        #: run the target env's python to import torch (opt-in only)
        self.import_test = import_test
        self.import_timeout = import_timeout
        #: check file hashes against RECORD / conda-meta (reads every torch file: slower)
        self.verify_hashes = verify_hashes
        self.extra = {} if extra is None else extra


class CheckContext:
    """Shared, lazily computed facts. A check reads facts; it does not re-walk what another layer walked."""

    def __init__(self, env: Environment, host: HostFacts, options: CheckOptions | None = None) -> None:
        self.env = env
        self.host = host
        self.options = options or CheckOptions()
        self._memo: dict[str, Any] = {}

    def memo(self, key: str, factory: Callable[[], T]) -> T:
        """Compute ``factory()`` once per context under ``key`` (for facts several checks share)."""
        if key not in self._memo:
            self._memo[key] = factory()
        return self._memo[key]

    def computed(self, key: str) -> Any | None:
        """A fact already computed under ``key``, else None (a renderer may show it without paying for it)."""
        return self._memo.get(key)

    @property
    def import_test(self) -> dict[str, Any] | None:
        """The opt-in import test's result as a plain dict for the report (None when it did not run)."""
        result = self._memo.get("import_test")
        if result is None:
            return None
        return result.to_dict() if hasattr(result, "to_dict") else result

    @functools.cached_property
    def torch(self) -> TorchInfo:
        return find_torch(self.env)

    @property
    def load_graph(self):  # -> LoadGraph | None
        """The load graph of torch's libraries for this env's OS (None when torch is absent)."""

        def build():
            from conda_torchcheck.loader.contract import for_os

            loader = for_os(self.env.os)
            return None if loader is None else loader.build_torch_graph(self)

        return self.memo("load_graph", build)
