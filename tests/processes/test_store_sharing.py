"""One state store file, written by several connections: two of one process (a headless run
that takes its turn to notify opens the store again beside its first) and one of another (the
command line saving a snooze). Nothing any of them writes is lost: the other process's
connection, closing, must not take itself for the last one and delete the ``-wal`` file that
this process's connections still write to."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from notifier.store import Store

from ..conftest import ROOT

OTHER = """
import sys, time
from notifier.store import Store
s = Store(sys.argv[1])
if sys.argv[2] == "write":
    s.mute("by the other process", True)
    s.flush(2.0)
else:
    print("\\n".join(sorted(s.silences(time.time(), reread=True).muted)))
s.close()
"""


def other_process(path: Path, what: str) -> str:
    return subprocess.run([sys.executable, "-c", OTHER, str(path), what], cwd=ROOT, capture_output=True,
                          text=True, check=True, timeout=60).stdout  # fmt: skip


def test_a_second_store_of_this_process_keeps_the_file_shared(tmp_path: Path) -> None:
    path = tmp_path / "state" / "state.sqlite3"
    first = Store(str(path))
    first.mute("first", True)
    first.flush(2.0)
    second = Store(str(path))  # (a headless run's turn: the store read again beside the first)
    other_process(path, "write")
    assert os.path.exists(f"{path}-wal")  # (this process's connections still have it)
    first.mute("after the other process", True)
    second.mute("by the second store", True)
    first.flush(2.0)
    second.flush(2.0)
    seen = other_process(path, "read").split("\n")
    first.close()
    second.close()
    assert {"first", "by the other process", "after the other process", "by the second store"} <= set(seen)
