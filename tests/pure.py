"""The pure layer's guard (docs/testing.md §1): a test of tests/unit runs no process, opens no
socket and writes no file outside the temporary folders. An audit hook (PEP 578) refuses each
of these while such a test runs (tests/unit/conftest.py uses the ``pure`` fixture), so a test
that needs one fails naming where it belongs, tests/processes/, instead of blurring the layer.
(Not tests/fixtures: the real watcher may run a process of its own, ctypes' ldconfig -p.)"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

PROCESSES = {"subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.exec", "os.spawn", "os.system"}
WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
# where a pure test may write: the temporary folders (tmp_path, the run's HOME), /dev/null and
# the like, and hypothesis's example database (.hypothesis/ where pytest runs)
WRITABLE = (os.path.realpath(tempfile.gettempdir()) + os.sep, "/dev/")
# ...but never the checkout itself, wherever it is (a clone under /tmp too)
CHECKOUT = os.path.realpath(os.path.join(os.path.dirname(__file__), os.pardir)) + os.sep
# ...and anywhere, Python's cache of a module's compiled code (written as "NAME.pyc.NUMBER", then
# renamed), which a module imported for the first time during a test writes: the import's, not
# the test's (pytest's assertion rewriting writes its own there too)
BYTECODE = re.compile(r"[^/]+\.pyc(\.\d+)?")


class NotPure(RuntimeError):
    """A pure test did what only tests/processes may."""


_active = [False]
_refused: list[str] = []  # (also when the code under test caught the refusal)


def _refuse(what: str) -> None:
    message = f"a pure test {what}: it belongs in tests/processes (docs/testing.md §1)"
    _refused.append(message)
    raise NotPure(message)


def _writes(mode: Any, flags: Any) -> bool:
    if isinstance(mode, str) and mode:
        return any(c in mode for c in "wax+")
    return isinstance(flags, int) and bool(flags & WRITES)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _active[0]:
        return
    if event in PROCESSES:
        _refuse(f"started a process ({event})")
    elif event == "socket.__new__":
        _refuse("opened a socket")
    elif event == "open" and args[0] is not None and not isinstance(args[0], int) and _writes(args[1], args[2]):
        path = os.path.realpath(os.fsdecode(args[0]))
        if not writable(path):
            _refuse(f"wrote outside the temporary folders ({path})")


def writable(path: str) -> bool:
    """May a pure test write the file ``path`` (real, absolute)?"""
    if path.startswith(WRITABLE) and not path.startswith(CHECKOUT):
        return True
    folder, name = os.path.split(path)
    return f"{os.sep}.hypothesis{os.sep}" in path or (
        os.path.basename(folder) == "__pycache__" and BYTECODE.fullmatch(name) is not None
    )


sys.addaudithook(_audit)


@pytest.fixture(autouse=True)
def pure() -> Iterator[None]:
    _refused.clear()
    _active[0] = True
    try:
        yield
    finally:
        _active[0] = False
    if _refused:
        pytest.fail(_refused[0], pytrace=False)
