"""Dataclasses without the ``dataclasses`` module at run time. ``@dataclass`` compiles several
methods per class when its module is imported (about half a millisecond a class), and importing
``dataclasses`` imports ``inspect``, ``ast`` and ``dis`` (about 9 ms): more than a tenth of a
command such as ``status``, which imports about two dozen such classes. Instead, a class here
writes its ``__init__`` out and takes equality and repr from its base, by its fields (its
annotations) in order:

- :class:`Value`, a frozen dataclass: each field set with ``object.__setattr__`` (or the
  instance's dict set at once where one is built per session), assignment refused
  (``FrozenInstanceError``), hashable. Decorated ``@value(frozen=True, init=False, repr=False,
  eq=False)``, which mypy reads as ``dataclasses.dataclass``, so it checks the class as the frozen
  dataclass it is.
- :class:`Record`, a mutable dataclass (``@dataclass`` with ``eq=True``): fields set as usual,
  not hashable.

A field's default is a class attribute, or :func:`field` (``dataclasses.field`` for mypy) for a
default factory or a field left out of equality. ``dataclasses.fields``, ``replace`` and
``is_dataclass`` still work: the class's dataclass fields are made the first time something asks
for them (that imports ``dataclasses`` then). tests/unit/test_values.py checks each class against
the dataclass of the same fields."""

from __future__ import annotations

from _thread import RLock
from operator import attrgetter
from typing import TYPE_CHECKING, Any, ClassVar

__all__ = ["Record", "Value", "field", "value"]


def _getter(names: tuple[str, ...]) -> Any:
    """self → the tuple of these attributes' values."""
    return attrgetter(*names) if len(names) > 1 else lambda v: tuple(getattr(v, n) for n in names)


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


_MISSING: Any = _Missing()


class _Field:
    """What :func:`field` declares, until ``dataclasses`` is asked about the class."""

    __slots__ = ("default", "default_factory", "compare")

    def __init__(self, default: Any, default_factory: Any, compare: bool) -> None:
        self.default, self.default_factory, self.compare = default, default_factory, compare

    def made(self) -> Any:
        """The ``dataclasses.field`` it stands for."""
        import dataclasses

        kwargs: dict[str, Any] = {"compare": self.compare}
        if self.default is not _MISSING:
            kwargs["default"] = self.default
        if self.default_factory is not _MISSING:
            kwargs["default_factory"] = self.default_factory
        return dataclasses.field(**kwargs)


_MAKING = RLock()  # (one thread makes a class's fields; a subclass's makes its bases' first)


class _Fields:
    """``__dataclass_fields__``, made when first asked for (``dataclasses.fields``, ``replace``,
    ``is_dataclass``): the class's :func:`field` declarations become ``dataclasses.field`` and the
    class goes through ``dataclass(init=False, repr=False, eq=False)`` (``frozen`` for a
    :class:`Value`), which adds no method of its own (a frozen one: refusals that say the same)."""

    def __get__(self, instance: object, cls: type) -> Any:
        import dataclasses

        own = cls.__dict__
        with _MAKING:
            if not isinstance(own.get("__dataclass_fields__"), dict):  # (not made meanwhile)
                for name in own.get("__annotations__", {}):
                    if isinstance(own.get(name), _Field):
                        setattr(cls, name, own[name].made())
                frozen = issubclass(cls, Value)
                dataclasses.dataclass(init=False, repr=False, eq=False, frozen=frozen)(cls)  # (for good)
        return own["__dataclass_fields__"]


def _class_var(annotation: object) -> bool:
    """A ``ClassVar`` annotation (a string under ``from __future__ import annotations``)."""
    if isinstance(annotation, str):
        return annotation.startswith(("ClassVar", "typing.ClassVar"))
    return getattr(annotation, "__origin__", None) is ClassVar


class _Base:
    """Equality and repr by the fields in order (equality by those not declared
    ``field(compare=False)``), as a dataclass has them."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]]
    _uncompared: ClassVar[frozenset[str]]
    _values: ClassVar[Any]
    _compared: ClassVar[Any]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__module__ == __name__:
            return  # (Value and Record: kinds of class, not classes with fields)
        own = cls.__dict__
        # A subclass has its bases' fields first, then its own (as a dataclass has them).
        base: Any = next((b for b in cls.__mro__[1:] if "_fields" in b.__dict__), None)
        names: tuple[str, ...] = base._fields if base is not None else ()
        uncompared: set[str] = set(base._uncompared) if base is not None else set()
        for name, annotation in own.get("__annotations__", {}).items():
            if _class_var(annotation):
                continue
            if name not in names:
                names += (name,)
            declared = own.get(name)
            if isinstance(declared, _Field) and not declared.compare:
                uncompared.add(name)
            else:
                uncompared.discard(name)
        cls._fields = names
        cls._uncompared = frozenset(uncompared)
        cls._values = _getter(names)
        cls._compared = _getter(tuple(n for n in names if n not in uncompared))
        cls.__match_args__ = names  # type: ignore[attr-defined,misc]  # (as dataclass sets it)
        if "__dataclass_fields__" not in own:
            cls.__dataclass_fields__ = _Fields()  # type: ignore[attr-defined]

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return bool(self._compared(self) == self._compared(other))
        return NotImplemented

    def __replace__(self, **changes: Any) -> Any:
        """``copy.replace`` (Python 3.13+), as a dataclass has it."""
        from dataclasses import replace

        return replace(self, **changes)  # type: ignore[type-var]  # (a dataclass, to dataclasses)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self._values(self), strict=True))
        return f"{self.__class__.__qualname__}({shown})"


class Value(_Base):
    """A frozen dataclass (see the module's docstring)."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._compared(self))

    def __setattr__(self, name: str, value: object) -> None:
        from dataclasses import FrozenInstanceError

        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        from dataclasses import FrozenInstanceError

        raise FrozenInstanceError(f"cannot delete field {name!r}")


class Record(_Base):
    """A mutable dataclass with equality (see the module's docstring): not hashable."""

    __hash__ = None  # type: ignore[assignment]  # (as dataclass(eq=True) sets it)


if TYPE_CHECKING:
    from dataclasses import dataclass as value
    from dataclasses import field
else:

    def value(*, frozen: bool, init: bool, repr: bool, eq: bool) -> Any:
        """Nothing at run time (see :class:`Value`; mypy sees ``dataclass``)."""
        if not frozen or init or repr or eq:
            raise TypeError("a Value is frozen, with its own __init__ (repr and equality from Value)")
        return lambda cls: cls

    def field(*, default: Any = _MISSING, default_factory: Any = _MISSING, compare: bool = True) -> Any:
        """A field's default factory, or a field left out of equality (mypy sees
        ``dataclasses.field``)."""
        if default is not _MISSING and default_factory is not _MISSING:
            raise ValueError("cannot specify both default and default_factory")
        return _Field(default, default_factory, compare)
