"""envspec.rules: one module per rule, each declared in conda_torchcheck.registry, run in the registry's order."""

from __future__ import annotations

import importlib

from conda_torchcheck import registry
from conda_torchcheck.envspec.parse import parse_text
from conda_torchcheck.envspec.rules import check_file, rules


def test_each_rule_module_declares_its_registry_entry():
    assert [r.name for r in rules()] == [e.name for e in registry.RULES]
    for entry in registry.RULES:
        rule = importlib.import_module(entry.module).RULE
        assert (rule.name, rule.ids, rule.summary) == (entry.name, entry.ids, entry.summary)
        assert len(rule.ids) == 1  # one id per rule module


def test_findings_name_the_rule_that_made_them():
    text = "dependencies:\n  - pytorch=2.1\n"
    found = check_file(parse_text(text, "environment.yml"))
    assert found and {f.check for f in found} <= {e.name for e in registry.RULES}
    by_id = {spec.id: spec.emitted_by for spec in registry.FINDINGS}
    assert all(f.check in by_id[f.id] for f in found)
