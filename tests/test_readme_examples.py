"""README.md's example runs are the tool's real output: tools/readme_examples.py regenerates them, and each
block in README.md must still be what a run prints today."""

from __future__ import annotations

import re

import pytest

from tools import readme_examples

README = readme_examples.README.read_text(encoding="utf-8")


def test_readme_has_the_generated_blocks():
    assert readme_examples.block_names(README) == ["windows", "first-contact"]


@pytest.mark.realdata
@pytest.mark.parametrize("name", ["windows", "first-contact"])
def test_block_is_what_the_tool_prints(name):
    [shown] = [m.group(3) for m in re.finditer(readme_examples._BLOCK, README) if m.group(2) == name]
    assert shown == readme_examples.render(name), "README.md is out of date: run python -m tools.readme_examples"


def test_windows_example_names_only_what_the_real_dlls_miss():
    """The block the issue found wrong: TC301's title lists the DLL the real 14.34 runtime lacks, no other."""
    [shown] = [m.group(3) for m in re.finditer(readme_examples._BLOCK, README) if m.group(2) == "windows"]
    [title] = [line for line in shown.splitlines() if line.startswith("ERROR TC301")]
    assert title.endswith("missing VCRUNTIME140_THREADS.dll")
