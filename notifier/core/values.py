"""Frozen dataclasses without the code generation: a :class:`Value` subclass is decorated
``@dataclass(frozen=True, init=False, repr=False, eq=False)`` and writes its ``__init__`` out
(setting each field with ``object.__setattr__``, as a frozen dataclass does); equality, hash and
repr come from here, by its fields in order. The result behaves as ``@dataclass(frozen=True)``
(fields, ``dataclasses.replace``, assignment raising ``FrozenInstanceError``, and for mypy too),
but importing it does not compile five methods per class: that was most of the import time of
the values every command uses (tests/unit/test_values.py checks each such class against what
``@dataclass(frozen=True)`` makes of the same fields)."""

from __future__ import annotations

from dataclasses import Field
from operator import attrgetter
from typing import Any, ClassVar


def _getter(names: tuple[str, ...]) -> Any:
    """self → the tuple of these attributes' values."""
    return attrgetter(*names) if len(names) > 1 else lambda v: tuple(getattr(v, n) for n in names)


class Value:
    """Equality, hash and repr of a frozen dataclass, by its fields in order (equality and hash
    by those not declared ``field(compare=False)``)."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]]
    _values: ClassVar[Any]
    _compared: ClassVar[Any]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__
        names = tuple(own.get("__annotations__", {}))
        cls._fields = names
        cls._values = _getter(names)
        compared = tuple(n for n in names if not (isinstance(own.get(n), Field) and not own[n].compare))
        cls._compared = _getter(compared)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return bool(self._compared(self) == self._compared(other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._compared(self))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self._values(self), strict=True))
        return f"{self.__class__.__qualname__}({shown})"
