"""LazyPattern: compiled on first use, then the same answers as the compiled pattern."""

from __future__ import annotations

import re

from conda_torchcheck.lazy_re import LazyPattern


def test_compiles_only_when_used_and_answers_as_re():
    lazy = LazyPattern(r"^python(\d)(\d+)(t?)\.dll$", re.IGNORECASE)
    assert lazy._compiled is None
    compiled = re.compile(r"^python(\d)(\d+)(t?)\.dll$", re.IGNORECASE)
    for name in ("python311.dll", "PYTHON313T.DLL", "python3.dll", "pythoncom311.dll"):
        got, want = lazy.match(name), compiled.match(name)
        assert (got and got.groups()) == (want and want.groups())
    assert lazy._compiled is not None
    assert [m.group(0) for m in LazyPattern(r"\d+").finditer("a1b22")] == ["1", "22"]
    assert LazyPattern("x", re.M).flags == re.compile("x", re.M).flags
