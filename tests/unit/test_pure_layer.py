"""The pure layer's guard (tests/pure.py) refuses what only tests/processes may do."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from ..pure import CHECKOUT, NotPure, _refused, writable


def test_a_process_a_socket_or_a_write_outside_the_temporary_folders_is_refused(tmp_path: Path) -> None:
    with pytest.raises(NotPure, match="started a process"):
        subprocess.run([sys.executable, "-c", "pass"], check=False)
    with pytest.raises(NotPure, match="opened a socket"):
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with pytest.raises(NotPure, match="wrote outside"):
        open(Path(__file__).with_name("never-written"), "a")  # noqa: SIM115
    assert not Path(__file__).with_name("never-written").exists()
    (tmp_path / "fine").write_text("tmp_path is the test's own")  # reading and tmp_path are fine
    assert (tmp_path / "fine").read_text() and os.listdir(tmp_path) == ["fine"]
    assert len(_refused) == 3
    _refused.clear()  # (else the guard fails this test at its end: refusals caught still count)


def test_the_bytecode_python_caches_as_it_imports_is_not_the_tests_write(tmp_path: Path) -> None:
    """A module imported for the first time during a pure test has its compiled code written to a
    __pycache__ folder (the checkout's, the venv's): the import's doing, not a write of the test's."""
    cache = os.path.join(CHECKOUT, "notifier", "__pycache__")
    assert writable(os.path.join(cache, "app.cpython-311.pyc"))
    assert writable(os.path.join(cache, "app.cpython-311-pytest-9.2.0.pyc.12345"))  # (written, then renamed)
    assert writable(str(tmp_path / "anything"))
    assert not writable(os.path.join(cache, "app.py"))
    assert not writable(os.path.join(CHECKOUT, "notifier", "app.cpython-311.pyc"))
    assert not writable(os.path.join(CHECKOUT, "never-written"))
    assert not writable("/var/lib/pi-notifier/state.sqlite3")
