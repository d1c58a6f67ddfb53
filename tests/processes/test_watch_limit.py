"""At the inotify watch limit watchdog silently stops watching sub-folders. Run the app in a user
namespace whose limit is lowered (the machine-wide setting is untouched), and check it says so
once and still sees a question written in a folder it could not watch."""

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
        assert "folders" in line and "polling them every 2 s" in line
        for i in range(150):  # most of these folders are not watched: only the poll can see them
            append(tmp_path / f"--p{i}--" / "s.jsonl", header(), user(), ask(f"q{i}", f"Folder {i}?"))
        asked = app.wait("needs_input", 150, timeout=20)
        assert {e["question"]["text"] for e in asked} == {f"Folder {i}?" for i in range(150)}
    assert sum("inotify watch limit reached: " in x for x in app.stderr) == 1
