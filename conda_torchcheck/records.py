"""Plain classes for the facts on the start-up path of ``conda-torchcheck tree FILE``.

The ELF reader, the loader models and their graph are written as classes with ``__slots__`` and an explicit
``__init__`` rather than dataclasses, because the ``tree`` command must start and finish well inside 100 ms:
measured on a 2-vCPU VM, importing ``dataclasses`` and defining twenty frozen dataclasses costs 35-45 ms in a
fresh process, the same twenty plain classes 3-6 ms (``benchmarks/linux_tree.py`` has the whole picture).
:class:`Record` gives them what they used from dataclasses: a readable repr, field-wise equality and hashing,
and :meth:`Record.replace`. Treat the records as immutable unless their class says otherwise.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Record:
    """Base of the plain fact classes: ``_fields`` (default: the class's ``__slots__``) drive repr, == and hash."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_fields" not in cls.__dict__:
            cls._fields = cls._fields + tuple(cls.__dict__.get("__slots__", ()))

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({inner})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def replace(self, **changes: Any) -> Any:
        """A copy with ``changes`` applied (``dataclasses.replace``)."""
        copy = object.__new__(type(self))
        for cls in type(self).__mro__:
            for name in cls.__dict__.get("__slots__", ()):
                object.__setattr__(copy, name, changes.pop(name) if name in changes else getattr(self, name))
        if changes:
            raise TypeError(f"{type(self).__name__} has no field(s) {', '.join(changes)}")
        return copy


class MutableRecord(Record):
    """A record that is changed after creation: equal field-wise, but not hashable (as a dataclass would be)."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]
