"""Every :class:`notifier.core.values.Value` class is what ``@dataclass(frozen=True)`` makes of the
same fields: the same ``__init__`` (order, defaults, every field set), equality, hash, repr,
``dataclasses`` support, and no assignment. A field added without its ``__init__`` line fails here."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from typing import Any

import pytest

from notifier.core.values import Value

MODULES = [
    "notifier.core.model",
    "notifier.core.local_session",
    "notifier.system.config_keys",
    "notifier.system.locate",
    "notifier.system.processes",
    "notifier.system.tmux",
]
for _m in MODULES:
    importlib.import_module(_m)


def _all(cls: type) -> list[type]:
    return [c for sub in cls.__subclasses__() for c in (sub, *_all(sub))]


CLASSES = sorted(_all(Value), key=lambda c: f"{c.__module__}.{c.__qualname__}")


def _twin(cls: type) -> Any:
    """``@dataclass(frozen=True)`` of the same fields and defaults."""
    ns: dict[str, Any] = {"__annotations__": dict(cls.__annotations__), "__module__": cls.__module__}
    for f in dataclasses.fields(cls):
        ns[f.name] = dataclasses.field(
            default=f.default, default_factory=f.default_factory, repr=f.repr, hash=f.hash, compare=f.compare
        )
    twin = type(cls.__name__, (), ns)
    twin.__qualname__ = cls.__qualname__
    return dataclasses.dataclass(frozen=True)(twin)


def test_every_value_class_is_checked() -> None:
    assert len(CLASSES) >= 8 and {c.__name__ for c in CLASSES} >= {"Question", "SessionView", "Snapshot"}


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__qualname__)
def test_same_as_a_frozen_dataclass(cls: Any) -> None:
    twin = _twin(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    assert cls._fields == tuple(names)

    factories = {f.name for f in dataclasses.fields(cls) if f.default_factory is not dataclasses.MISSING}

    def params(c: Any) -> list[tuple[str, object, object]]:
        # (a field with a default_factory: None in the written-out __init__ stands for a new default)
        return [
            (p.name, None if p.name in factories else p.default, p.kind)
            for p in inspect.signature(c).parameters.values()
        ]

    assert params(cls) == params(twin)

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
