"""The terminal renderer's wrapping: terminal columns, not characters."""

from __future__ import annotations

import unicodedata

from conda_torchcheck.render.text import WIDTH, wrap


def columns(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in line)


def test_chinese_lines_fit_the_terminal():
    parts = [
        "Python 只会加载文件名以当前解释器后缀结尾的扩展模块；",
        "这里 torch 编译好的 `_C` 模块是按 Python 3.11 命名的。",
    ]
    sentence = "".join(parts)
    text = sentence * 4
    lines = wrap(text, "    ")
    assert len(lines) > 2
    assert all(columns(line) <= WIDTH for line in lines)
    assert all(line.startswith("    ") for line in lines)
    # nothing lost, nothing reordered (spaces aside)
    assert "".join(line.strip() for line in lines).replace(" ", "") == text.replace(" ", "")


def test_english_wraps_at_spaces_as_before():
    text = "word " * 60
    lines = wrap(text.strip(), "  ")
    assert all(len(line) <= WIDTH and line.startswith("  word") for line in lines)


def test_all_good_is_said_only_where_the_machine_was_examined(make_env):
    """An env read without its machine (--ignore-environment, another OS, a copy) has no findings about what
    only the machine decides; 'nothing stops import torch' would be a claim the tool cannot back."""
    from conda_torchcheck.inventory import load_environment
    from conda_torchcheck.render.text import render_text
    from conda_torchcheck.report import check_environment
    from tests.checks.tc_helpers import healthy

    b = healthy(make_env())
    env, host = load_environment(b.prefix, use_live_host=False)
    report = check_environment(env, host)
    if report.findings:
        return
    text = render_text(report)
    assert "nothing here stops" not in text and "was not examined" in text
