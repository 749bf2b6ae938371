"""Knowledge is read through the typed modules of conda_torchcheck.knowledge, never as raw TOML elsewhere: no
module outside the knowledge package imports its ``load`` or parses a knowledge/*.toml itself."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("conda_torchcheck", "benchmarks")
#: raw reads not converted yet, each with why (remove an entry when its module moves to a typed accessor)
NOT_YET = {
    # the loader helper's modules (windows_system, windows_vc_runtime, windows_torch, windows_python, macos_dyld
    # for dyld's rules); the Windows tables get their typed module with the per-OS loader packages
    "conda_torchcheck/loader/windows.py": "loader helper",
    "conda_torchcheck/loader/macos.py": "loader helper",
    # env_files.toml is envspec's own table, read by rules.py/rewrite.py through intent.facts(); it is typed
    # together with envspec/rules.py's split into one module per rule
    "conda_torchcheck/envspec/history.py": "env_files.toml",
    "conda_torchcheck/envspec/intent.py": "env_files.toml",
}


def _raw_reads(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "conda_torchcheck.knowledge":
            found += [f"line {node.lineno}: imports load" for a in node.names if a.name == "load"]
        elif isinstance(node, ast.Attribute) and node.attr == "load":
            if isinstance(node.value, ast.Name) and node.value.id == "knowledge":
                found.append(f"line {node.lineno}: knowledge.load")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if "knowledge" in node.value and node.value.endswith(".toml") and "/" in node.value:
                found.append(f"line {node.lineno}: names {node.value!r}")
    return found


def test_no_module_outside_the_knowledge_package_reads_knowledge_raw():
    offenders = {}
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith("conda_torchcheck/knowledge/") or rel in NOT_YET:
                continue
            reads = _raw_reads(path)
            if reads:
                offenders[rel] = reads
    assert not offenders, f"read knowledge through its typed modules (conda_torchcheck.knowledge.*): {offenders}"


def test_the_exceptions_still_read_raw():
    """An entry whose module no longer reads raw is stale: remove it, so the list only shrinks."""
    stale = [rel for rel in NOT_YET if not _raw_reads(ROOT / rel)]
    assert not stale, stale
