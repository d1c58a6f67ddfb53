"""Frozen dataclasses without the code generation: a :class:`Value` subclass is decorated
``@dataclass(frozen=True, init=False, repr=False, eq=False)`` and writes its ``__init__`` out
(setting each field with ``object.__setattr__``, as a frozen dataclass does); equality, hash and
repr come from here, by its fields in order. The result behaves as ``@dataclass(frozen=True)``
(fields, ``dataclasses.replace``, assignment raising ``FrozenInstanceError``, and for mypy too),
but importing it does not compile five methods per class: that was most of the import time of
the values every command uses (tests/unit/test_values.py checks each such class against what
``@dataclass(frozen=True)`` makes of the same fields)."""

from __future__ import annotations

from operator import attrgetter
from typing import Any, ClassVar


class Value:
    """Equality, hash and repr of a frozen dataclass, by its fields in order."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]]
    _values: ClassVar[Any]  # self → the tuple of its fields' values (an attrgetter)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names = tuple(cls.__dict__.get("__annotations__", {}))
        cls._fields = names
        cls._values = attrgetter(*names) if len(names) > 1 else lambda v: tuple(getattr(v, n) for n in names)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return bool(self._values(self) == self._values(other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._values(self))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self._values(self), strict=True))
        return f"{self.__class__.__qualname__}({shown})"
