"""At the inotify watch limit some folders cannot be watched: watchdog 7.1.1 refuses a whole tree
that does not fit at start-up (older releases left its sub-folders unwatched), and every release
leaves folders made past the limit later unwatched. Run the app in a user namespace whose limit is
lowered (the machine-wide setting is untouched), and check what the user gets, whatever watchdog
does: one line saying what is polled, and every question seen."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..app_process import AppProcess
from ..writer import append, ask, header, user


def _can_lower_limit() -> bool:
    if not shutil.which("unshare"):
        return False
    probe = subprocess.run(
        ["unshare", "-Ur", "sh", "-c", "echo 60 > /proc/sys/user/max_inotify_watches"],
        capture_output=True,
        timeout=20,
    )
    return probe.returncode == 0


@pytest.mark.skipif(not _can_lower_limit(), reason="cannot lower the inotify limit in a user namespace here")
def test_watch_limit_is_reported_once_and_unwatched_folders_are_polled(tmp_path: Path) -> None:
    for i in range(150):
        (tmp_path / f"--p{i}--").mkdir()
    script = (
        "echo 60 > /proc/sys/user/max_inotify_watches && exec "
        f"{sys.executable} -m notifier run --no-tray --json --no-notify --liveness off --sessions-dir {tmp_path}"
    )
    with AppProcess(argv=["unshare", "-Ur", "sh", "-c", script]) as app:
        app.wait("ready")
        # (the companion extension's socket folder may say it hit the limit too: its own line)
        line = app.log_has("inotify watch limit reached: ")
        assert str(tmp_path) in line and "folders" in line and "polling them every 2 s" in line
        for i in range(150):  # most of these folders are not watched: only the poll can see them
            append(tmp_path / f"--p{i}--" / "s.jsonl", header(), user(), ask(f"q{i}", f"Folder {i}?"))
        asked = app.wait("needs_input", 150, timeout=20)
        assert {e["question"]["text"] for e in asked} == {f"Folder {i}?" for i in range(150)}
    assert sum("inotify watch limit reached: " in x for x in app.stderr) == 1


@pytest.mark.skipif(not _can_lower_limit(), reason="cannot lower the inotify limit in a user namespace here")
def test_folders_made_past_the_limit_while_running_are_said_once_and_polled(tmp_path: Path) -> None:
    """The limit reached after start-up, by folders pi makes while the app runs: every watchdog
    leaves those unwatched (the root's own watch stands). The app says so once, names what it
    polls, and a question written in any of them afterwards is seen."""
    script = (
        "echo 40 > /proc/sys/user/max_inotify_watches && exec "
        f"{sys.executable} -m notifier run --no-tray --json --no-notify --liveness off --sessions-dir {tmp_path}"
    )
    with AppProcess(argv=["unshare", "-Ur", "sh", "-c", script]) as app:
        app.wait("ready")
        assert not any("inotify watch limit reached" in x for x in app.stderr)
        for i in range(80):
            (tmp_path / f"--p{i}--").mkdir()
        line = app.log_has("inotify watch limit reached: ")
        assert str(tmp_path) in line and "not watched; polling them every 2 s" in line
        for i in range(80):  # written after the line: a folder past the limit is seen by the poll alone
            append(tmp_path / f"--p{i}--" / "s.jsonl", header(), user(), ask(f"q{i}", f"Folder {i}?"))
        asked = app.wait("needs_input", 80, timeout=20)
        assert {e["question"]["text"] for e in asked} == {f"Folder {i}?" for i in range(80)}
    assert sum("inotify watch limit reached: " in x for x in app.stderr) == 1


def test_below_the_limit_no_folder_is_said_unwatched(tmp_path: Path) -> None:
    from notifier.watch import Watcher, watch_refused

    for name in ("a", "b", "b/c"):
        (tmp_path / name).mkdir()
    outside = tmp_path.parent / (tmp_path.name + "-outside")
    outside.mkdir()
    dirs = [str(tmp_path / name) for name in ("", "a", "b", "b/c")]

    class Out:
        def put(self, item: object) -> None:
            pass

    watcher = Watcher(Out())
    watcher.start()
    try:
        assert watcher.watch(str(tmp_path))
        assert watcher.unwatched(str(tmp_path), dirs) == []
        assert watcher.unwatched(str(tmp_path), [str(outside)]) == [str(outside)]  # no watch covers it
        assert watch_refused([str(outside)]) is False
    finally:
        watcher.stop()
