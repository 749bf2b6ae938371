"""plugin.py is imported by every conda command: at module level it may import only conda's hookimpl and the
plugin-types module (checked on the source, so this runs without conda; tests/plugin checks the live module set
where conda is installed)."""

from __future__ import annotations

import ast
from pathlib import Path

PLUGIN = Path(__file__).resolve().parents[2] / "conda_torchcheck" / "plugin.py"


def module_level_imports() -> list[str]:
    tree = ast.parse(PLUGIN.read_text(encoding="utf-8"))
    found = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found += [f"{node.module}:{alias.name}" for alias in node.names]
    return found


def test_only_hookimpl_and_plugin_types_at_module_level():
    assert sorted(module_level_imports()) == ["__future__:annotations", "conda.plugins:hookimpl", "conda.plugins:types"]


def test_every_hook_is_a_hookimpl_named_after_a_conda_hookspec():
    tree = ast.parse(PLUGIN.read_text(encoding="utf-8"))
    hooks = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and any(getattr(d, "id", None) == "hookimpl" for d in node.decorator_list)
    ]
    assert sorted(hooks) == sorted(
        [
            "conda_subcommands",
            "conda_pre_commands",
            "conda_post_commands",
            "conda_post_solves",
            "conda_post_transaction_actions",
            "conda_health_checks",
            "conda_settings",
            "conda_environment_exporters",
        ]
    )
