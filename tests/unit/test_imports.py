"""Modules are imported from where they are: no package re-exports its modules. (What ``status``
imports, in a real process: tests/processes/test_imports.py.)"""

from __future__ import annotations

from ..conftest import ROOT


def test_no_package_re_exports_its_modules() -> None:
    """A name is imported from the module that defines it: no package ``__init__`` re-exports
    names of its own modules (a facade readers would have to see through)."""
    facades = []
    for init in sorted((ROOT / "notifier").rglob("__init__.py")):
        package = ".".join(init.relative_to(ROOT).parent.parts)
        text = init.read_text()
        if f"from {package}." in text or "__getattr__" in text:
            facades.append(package)
    assert facades == []
