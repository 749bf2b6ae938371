"""Record: the plain-class stand-in for dataclasses on the `tree` start-up path."""

from __future__ import annotations

import pytest

from conda_torchcheck.records import MutableRecord, Record


class Point(Record):
    __slots__ = ("x", "y")

    def __init__(self, x: int, y: int = 0) -> None:
        self.x = x
        self.y = y


class Tagged(Record):
    __slots__ = ("name", "cache")
    _fields = ("name",)  # cache is not part of what it is

    def __init__(self, name: str, cache: object = None) -> None:
        self.name = name
        self.cache = cache


class Bag(MutableRecord):
    __slots__ = ("items",)

    def __init__(self, items: list[int] | None = None) -> None:
        self.items = [] if items is None else items


class Bigger(Point):
    __slots__ = ("z",)

    def __init__(self, x: int, y: int = 0, z: int = 0) -> None:
        super().__init__(x, y)
        self.z = z


def test_repr_equality_and_hash_follow_the_fields():
    assert repr(Point(1, 2)) == "Point(x=1, y=2)"
    assert Point(1, 2) == Point(1, 2) and Point(1, 2) != Point(2, 1)
    assert len({Point(1, 2), Point(1, 2), Point(3)}) == 2
    assert Point(1, 0) != (1, 0)  # not a tuple


def test_fields_can_leave_out_caches():
    assert Tagged("a", cache=1) == Tagged("a", cache=2) and repr(Tagged("a", 1)) == "Tagged(name='a')"


def test_a_subclass_extends_the_fields_and_is_not_equal_to_its_base():
    assert Bigger._fields == ("x", "y", "z")
    assert Bigger(1, 2, 3) != Point(1, 2) and Bigger(1, 2, 3) == Bigger(1, 2, 3)


def test_replace_copies_every_slot_and_rejects_unknown_names():
    t = Tagged("a", cache=[1])
    copy = t.replace(name="b")
    assert (copy.name, copy.cache) == ("b", [1]) and t.name == "a"
    assert Bigger(1, 2, 3).replace(y=5) == Bigger(1, 5, 3)
    with pytest.raises(TypeError, match="no field"):
        Point(1).replace(w=2)


def test_mutable_records_compare_but_do_not_hash():
    assert Bag([1]) == Bag([1])
    with pytest.raises(TypeError):
        hash(Bag())
