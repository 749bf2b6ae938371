"""The C-speed column tests of the symbol reader answer what max() and `in` answer."""

from __future__ import annotations

import random
from array import array

import pytest

from conda_torchcheck.binaries.elf import _any_above, _has_zero


@pytest.mark.parametrize("seed", range(40))
def test_any_above_is_max_above(seed):
    rng = random.Random(seed)
    top = rng.choice([255, 65_535, 5_169_025, 2**32 - 1])
    values = array("I", [rng.randrange(0, top + 1) for _ in range(rng.randrange(1, 300))])
    peak = max(values)
    for limit in {0, 1, peak - 1, peak, peak + 1, top, rng.randrange(0, top + 1), -1, 2**32 - 1, 2**32}:
        assert _any_above(values, limit) == (peak > limit), limit


def test_any_above_byte_boundaries():
    for value in (0, 0xFF, 0x100, 0xFFFF, 0x10000, 0x4EDF01, 0x4EDF02, 0x4EE000, 0xFF000000, 0xFFFFFFFF):
        for limit in (value - 1, value, value + 1, value ^ 0x0100, value ^ 0x010000):
            assert _any_above(array("I", [7, value, 3]), limit) == (max(7, value) > limit), (value, limit)


@pytest.mark.parametrize("seed", range(20))
def test_has_zero_is_zero_in(seed):
    rng = random.Random(seed)
    values = array("H", [rng.choice([0, 1, 255, 256, 257, 65_280, 65_535, rng.randrange(65_536)]) for _ in range(50)])
    assert _has_zero(values) == (0 in values)
    values = array("H", [v or 1 for v in values])
    assert not _has_zero(values)
    assert not _has_zero(array("H"))
