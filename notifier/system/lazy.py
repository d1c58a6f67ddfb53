"""Names of a package imported from its modules when first used (PEP 562), so importing the
package costs nothing until a name is needed (``status`` imports none of the app's machinery)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable


def lazy_names(package: str, modules: dict[str, str], namespace: dict[str, Any]) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``package``: each name of ``modules`` (name → the module of
    the package it is from) is imported on first use and kept in ``namespace`` (the package's
    globals), so it is looked up once."""

    def __getattr__(name: str) -> object:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    return __getattr__
