"""TC6xx: what is wrong with an environment file, torch-wise, found without any environment.

One module per rule, declared in conda_torchcheck.registry (which also gives the order they run in). Each rule
reads the :class:`~conda_torchcheck.envspec.intent.Intent` (how the file will be solved) and yields findings with
the lines that prove them and a fix that fits this file. A rule stays silent when the file does not say enough to
be sure (an unpinned version, a channel it does not know): accuracy over volume.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

from conda_torchcheck import registry
from conda_torchcheck.envspec.intent import analyse
from conda_torchcheck.envspec.parse import EnvFile
from conda_torchcheck.envspec.rules._common import Rule, RuleContext, defaults_first
from conda_torchcheck.envspec.rules.cudatoolkit import pytorch_cuda_for_cudatoolkit
from conda_torchcheck.envspec.rules.pip_index import tags_offered
from conda_torchcheck.findings import Finding, with_check

# the rewriter asks the same questions as the rules
__all__ = [
    "Rule",
    "RuleContext",
    "check_file",
    "defaults_first",
    "pytorch_cuda_for_cudatoolkit",
    "rules",
    "tags_offered",
]


@functools.cache
def rules() -> tuple[Rule, ...]:
    """Every rule, in the registry's order."""
    return tuple(importlib.import_module(entry.module).RULE for entry in registry.RULES)


def check_file(file: EnvFile, *, command: str = "conda-torchcheck") -> list[Finding]:
    """Every TC6xx finding for ``file``, errors first, in file order within a severity."""
    intent = analyse(file)
    ctx = RuleContext(intent, command)
    wanted = [rule for rule in rules() if intent.has_torch or rule.whole_file]
    found = [with_check(f, rule.name) for rule in wanted for f in rule.run(ctx)]
    return sorted(found, key=lambda f: (f.severity.rank, _first_line(f), f.id))


def _first_line(f: Finding) -> int:
    lines: list[int] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if isinstance(value.get("line"), int):
                lines.append(value["line"])
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(dict(f.evidence))
    return min(lines) if lines else 0
