"""Every class built on :mod:`notifier.core.values` is what ``dataclasses`` makes of the same
fields: a :class:`Value` what ``@dataclass(frozen=True)`` makes, a :class:`Record` what
``@dataclass`` makes. The same ``__init__`` (order, defaults, every field set), equality, hash,
repr, ``dataclasses`` support, and the same refusals. A field added without its ``__init__`` line
fails here."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from typing import Any, ClassVar

import pytest

from notifier.core.values import Record, Value, field

MODULES = [
    "notifier.core.board",
    "notifier.core.model",
    "notifier.core.local_session",
    "notifier.core.reducer",
    "notifier.core.remote_sessions",
    "notifier.engine.options",
    "notifier.system.config",
    "notifier.system.config_keys",
    "notifier.system.locate",
    "notifier.system.processes",
    "notifier.system.tmux",
    "notifier.watch.readers",
    "notifier.watch.scanner",
    "notifier.watch.tail",
]
for _m in MODULES:
    importlib.import_module(_m)


def _all(cls: type) -> list[type]:
    return [c for sub in cls.__subclasses__() for c in (sub, *_all(sub)) if sub.__module__.startswith("notifier.")]


CLASSES = sorted(_all(Value), key=lambda c: f"{c.__module__}.{c.__qualname__}")
RECORDS = sorted(_all(Record), key=lambda c: f"{c.__module__}.{c.__qualname__}")


def _twin(cls: type, frozen: bool = True) -> Any:
    """``@dataclass(frozen=frozen)`` of the same fields and defaults."""
    ns: dict[str, Any] = {"__annotations__": dict(cls.__annotations__), "__module__": cls.__module__}
    for f in dataclasses.fields(cls):
        ns[f.name] = dataclasses.field(
            default=f.default, default_factory=f.default_factory, repr=f.repr, hash=f.hash, compare=f.compare
        )
    twin = type(cls.__name__, (), ns)
    twin.__qualname__ = cls.__qualname__
    return dataclasses.dataclass(frozen=frozen)(twin)


def _params(c: Any, factories: set[str]) -> list[tuple[str, object, object]]:
    # (a field with a default_factory: None in the written-out __init__ stands for a new default)
    return [
        (p.name, None if p.name in factories else p.default, p.kind) for p in inspect.signature(c).parameters.values()
    ]


def test_every_value_class_is_checked() -> None:
    assert len(CLASSES) >= 8 and {c.__name__ for c in CLASSES} >= {"Question", "SessionView", "Snapshot"}


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__qualname__)
def test_same_as_a_frozen_dataclass(cls: Any) -> None:
    twin = _twin(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    assert cls._fields == tuple(names)

    factories = {f.name for f in dataclasses.fields(cls) if f.default_factory is not dataclasses.MISSING}
    assert _params(cls, factories) == _params(twin, factories)

    args = [object() for _ in names]  # every field its own value: each must land in its field
    a, b = cls(*args), twin(*args)
    assert vars(a) == vars(b) == dict(zip(names, args, strict=True))
    assert repr(a) == repr(b)
    assert a == cls(*args) == cls(**dict(zip(names, args, strict=True)))
    try:
        assert hash(a) == hash(b)
    except TypeError:  # a field that cannot be hashed: neither can be
        with pytest.raises(TypeError):
            hash(b)
    assert a != b and a != tuple(args)  # another class is never equal
    for i, f in enumerate(dataclasses.fields(cls)):
        other = cls(*args[:i], object(), *args[i + 1 :])
        assert (a == other) is not f.compare and (a == other) == (b == twin(*args[:i], object(), *args[i + 1 :]))

    required = [object() for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING]
    assert vars(cls(*required)) == vars(twin(*required))  # the defaults

    for x in (a, b):  # the same refusals
        with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot assign to field '{names[0]}'"):
            setattr(x, names[0], 1)
        with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot delete field '{names[-1]}'"):
            delattr(x, names[-1])
    assert vars(a) == vars(b)
    changed = dataclasses.replace(a, **{names[-1]: 1})
    assert getattr(changed, names[-1]) == 1 and vars(changed) == {**vars(a), names[-1]: 1}


def test_every_record_class_is_checked() -> None:
    assert {c.__name__ for c in RECORDS} >= {"SessionReducer", "LocalSession", "Config", "EngineOptions", "Tree"}


@pytest.mark.parametrize("cls", RECORDS, ids=lambda c: c.__qualname__)
def test_same_as_a_dataclass(cls: Any) -> None:
    twin = _twin(cls, frozen=False)
    names = [f.name for f in dataclasses.fields(cls)]
    assert cls._fields == tuple(names)
    factories = {f.name for f in dataclasses.fields(cls) if f.default_factory is not dataclasses.MISSING}
    assert _params(cls, factories) == _params(twin, factories)

    args = [object() for _ in names]
    a, b = cls(*args), twin(*args)
    assert vars(a) == vars(b) == dict(zip(names, args, strict=True))
    assert repr(a) == repr(b)
    assert a == cls(*args) == cls(**dict(zip(names, args, strict=True)))
    assert a != b and a != tuple(args)
    for i, f in enumerate(dataclasses.fields(cls)):
        other = cls(*args[:i], object(), *args[i + 1 :])
        assert (a == other) is not f.compare
    for x in (a, b):  # mutable, hence not hashable
        with pytest.raises(TypeError):
            hash(x)
        setattr(x, names[0], 1)
        assert getattr(x, names[0]) == 1

    required = [object() for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    fresh, twin_fresh = cls(*required), twin(*required)
    for f in dataclasses.fields(cls):  # the defaults
        mine, theirs = getattr(fresh, f.name), getattr(twin_fresh, f.name)
        if f.default_factory is dataclasses.MISSING:
            assert mine == theirs
        else:  # a new one for each instance, made by the same factory
            assert type(mine) is type(theirs) and mine is not getattr(cls(*required), f.name)
            assert vars(mine) == vars(theirs) if hasattr(mine, "__dict__") else mine == theirs
    changed = dataclasses.replace(a, **{names[-1]: 1})
    assert getattr(changed, names[-1]) == 1 and vars(changed) == {**vars(a), names[-1]: 1}


def test_fields_made_on_first_use_keep_their_declarations() -> None:
    class Kept(Value):
        a: int
        b: dict[str, int] = field(default_factory=dict, compare=False)
        c: int = 3

        def __init__(self, a: int, b: dict[str, int] | None = None, c: int = 3) -> None:
            object.__setattr__(self, "a", a)
            object.__setattr__(self, "b", {} if b is None else b)
            object.__setattr__(self, "c", c)

    assert "__dataclass_fields__" not in vars(Kept) or not isinstance(vars(Kept)["__dataclass_fields__"], dict)
    assert Kept(1, {"x": 1}) == Kept(1, {"y": 2}) != Kept(2)  # b is left out of equality
    assert dataclasses.is_dataclass(Kept)
    fields = {f.name: f for f in dataclasses.fields(Kept)}
    assert [*fields] == ["a", "b", "c"]
    assert fields["b"].default_factory is dict and fields["b"].compare is False and fields["c"].default == 3
    assert isinstance(vars(Kept)["__dataclass_fields__"], dict)  # made once, kept
    assert Kept.__match_args__ == ("a", "b", "c")
    with pytest.raises(ValueError):
        field(default=1, default_factory=int)


def test_a_subclass_has_its_bases_fields_first_and_class_vars_are_no_fields() -> None:
    class Base(Record):
        a: int
        b: list[int] = field(default_factory=list, compare=False)
        kind: ClassVar[str] = "base"

        def __init__(self, a: int, b: list[int] | None = None) -> None:
            self.a, self.b = a, [] if b is None else b

    class Sub(Base):
        c: int = 0
        kind: ClassVar[str] = "sub"

        def __init__(self, a: int, b: list[int] | None = None, c: int = 0) -> None:
            super().__init__(a, b)
            self.c = c

    assert Sub._fields == ("a", "b", "c") and [f.name for f in dataclasses.fields(Sub)] == ["a", "b", "c"]
    assert Sub(1, [1], 2) == Sub(1, [2], 2) != Sub(1, [1], 3)  # (b is left out of equality, c is not)
    assert repr(Sub(1, [1], 2)) == "test_a_subclass_has_its_bases_fields_first_and_class_vars_are_no_fields.<locals>.Sub(a=1, b=[1], c=2)"
    assert dataclasses.replace(Sub(1, [1], 2), c=5) == Sub(1, [1], 5)
    assert Sub(1).__replace__(a=2) == Sub(2)  # (copy.replace on Python 3.13+)


def test_a_value_is_a_frozen_dataclass_to_dataclasses() -> None:
    from notifier.core.board import Proc

    assert dataclasses.fields(Proc) and Proc.__dataclass_params__.frozen  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'cwd'"):
        Proc("/p", 1.0).cwd = "/q"  # type: ignore[misc]
