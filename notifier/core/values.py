"""Frozen dataclasses without the code generation. ``@dataclass(frozen=True)`` compiles six
methods per class when its module is imported (about half a millisecond a class, and a command
such as ``status`` imports more than a dozen of them); a :class:`Value` subclass instead writes
its ``__init__`` out (each field set with ``object.__setattr__``, as a frozen dataclass does, or
the instance's dict set at once where one is built per session) and is decorated::

    @value(frozen=True, init=False, repr=False, eq=False)

For mypy that is ``dataclasses.dataclass`` itself, so the class is checked as the frozen
dataclass it is. At run time it records the fields (``dataclasses.fields`` and ``replace`` work)
and nothing more: equality, hash, repr and refusing assignment (``FrozenInstanceError``) come from
:class:`Value`, by the fields in order, as a frozen dataclass has them. tests/unit/test_values.py
checks each such class against ``@dataclass(frozen=True)`` of the same fields."""

from __future__ import annotations

from dataclasses import Field, FrozenInstanceError, dataclass
from operator import attrgetter
from typing import TYPE_CHECKING, Any, ClassVar

__all__ = ["Value", "value"]


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

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self._values(self), strict=True))
        return f"{self.__class__.__qualname__}({shown})"


if TYPE_CHECKING:
    from dataclasses import dataclass as value
else:

    def value(*, frozen: bool, init: bool, repr: bool, eq: bool) -> Any:
        """The fields of a :class:`Value` class (see above: mypy sees ``dataclass``)."""
        if not frozen or init or repr or eq:
            raise TypeError("a Value is frozen, with its own __init__ (repr and equality from Value)")
        return dataclass(init=False, repr=False, eq=False)
