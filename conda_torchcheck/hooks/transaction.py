"""What conda actually changed in this process, recorded by a post-transaction action.

``conda_post_commands`` receives only the command name, and ``context.target_prefix`` is wrong for
``conda env update -f FILE`` (it stays on base). The transaction actions are the only hook that always knows the
real prefix and the exact packages linked and unlinked, so a tiny action records them here and the
post-command reads them. The action never raises: a raising post-transaction action rolls the whole
transaction back.

For conda versions without transaction actions (< 25.5) a pre-command snapshot of ``conda-meta`` file names
is compared with the listing after the command instead.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conda_torchcheck.hooks.records import names_from_meta_files, record_key


@dataclass
class TransactionRecord:
    prefix: str
    unlinked: set[tuple[str, str, str]] = field(default_factory=set)
    linked: set[tuple[str, str, str]] = field(default_factory=set)

    @property
    def changed_names(self) -> set[str]:
        return {key[0] for key in self.unlinked | self.linked}


@dataclass
class TransactionLog:
    """Transactions executed in this process since the last :meth:`take` (in order, one per prefix)."""

    records: dict[str, TransactionRecord] = field(default_factory=dict)
    #: conda-meta listings taken by the pre-command (fallback for conda without transaction actions)
    snapshots: dict[str, frozenset[str]] = field(default_factory=dict)
    #: finding ids the post-solve guard already warned about, per prefix (the post-command does not repeat them)
    solve_warnings: dict[str, set[str]] = field(default_factory=dict)

    def add(self, prefix: str, unlink: Any, link: Any) -> None:
        key = os.path.normcase(os.path.abspath(prefix))
        rec = self.records.setdefault(key, TransactionRecord(prefix=prefix))
        rec.unlinked.update(record_key(r) for r in (unlink or ()))
        rec.linked.update(record_key(r) for r in (link or ()))

    def warned_at_solve(self, prefix: str, ids: set[str]) -> None:
        self.solve_warnings.setdefault(os.path.normcase(os.path.abspath(prefix)), set()).update(ids)

    def already_warned(self, prefix: str) -> set[str]:
        return self.solve_warnings.get(os.path.normcase(os.path.abspath(prefix)), set())

    def take(self) -> list[TransactionRecord]:
        out = list(self.records.values())
        self.records.clear()
        return out

    def snapshot(self, prefix: str) -> None:
        self.snapshots[os.path.normcase(os.path.abspath(prefix))] = meta_listing(prefix)

    def changes_since_snapshot(self, prefix: str) -> TransactionRecord | None:
        key = os.path.normcase(os.path.abspath(prefix))
        before = self.snapshots.pop(key, None)
        if before is None:
            return None
        after = meta_listing(prefix)
        rec = TransactionRecord(prefix=prefix)
        rec.unlinked = {(n, "", "") for n in names_from_meta_files(before - after)}
        rec.linked = {(n, "", "") for n in names_from_meta_files(after - before)}
        return rec if rec.unlinked or rec.linked else None


LOG = TransactionLog()


def meta_listing(prefix: str) -> frozenset[str]:
    try:
        return frozenset(n for n in os.listdir(Path(prefix) / "conda-meta") if n.endswith(".json"))
    except OSError:
        return frozenset()


def transaction_hooks_supported() -> bool:
    """Whether the running conda calls post-transaction actions (conda >= 25.5)."""
    try:
        from conda.plugins.hookspec import CondaSpecs

        return hasattr(CondaSpecs, "conda_post_transaction_actions")
    except Exception:
        return False


@functools.cache
def recorder_action_class() -> type:
    """A ``conda.core.path_actions.Action`` subclass that records the transaction into :data:`LOG`."""
    from conda.core.path_actions import Action

    class TorchcheckRecordTransaction(Action):
        def verify(self) -> None:
            self._verified = True
            return None

        def execute(self) -> None:
            try:
                if self.target_prefix:
                    LOG.add(str(self.target_prefix), self.unlink_precs, self.link_precs)
            except Exception:  # never roll back the user's transaction because of bookkeeping
                pass

        def reverse(self) -> None:
            pass

        def cleanup(self) -> None:
            pass

    return TorchcheckRecordTransaction
