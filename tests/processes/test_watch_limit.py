"""At the inotify watch limit watchdog silently stops watching sub-folders. Run the app in a user
namespace whose limit is lowered (the machine-wide setting is untouched), and check it says so
once and still sees a question written in a folder it could not watch."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
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


# Run under a lowered limit: which folders the watcher says are unwatched, whether the kernel
# refuses a watch, and which folders a written file is then seen in. Files go to the folders said
# to be unwatched first: inotify reports one instance's events in order, so once the others' events
# are in, any event from those would be in too (no waiting on a clock).
_PROBE = textwrap.dedent(
    """
    import json, os, queue, sys, time
    from notifier.watch.events import FileChanged
    from notifier.watch.observer import Watcher
    from notifier.watch.watchlimit import watch_refused
    root = sys.argv[1]
    dirs = [root] + sorted(os.path.join(root, d) for d in os.listdir(root))
    before = watch_refused(dirs[:1])
    out = queue.SimpleQueue()
    watcher = Watcher(out)
    watcher.start()
    watcher.watch(root)
    missing = watcher.unwatched(root, dirs)
    refused = watcher.limit_reached(missing)
    for d in missing + [d for d in dirs if d not in missing]:
        with open(os.path.join(d, "s.jsonl"), "ab") as fh:
            fh.write(b"{}\\n")
    seen, deadline = set(), time.monotonic() + 20
    while len(seen) < len(dirs) - len(missing) and time.monotonic() < deadline:
        try:
            item = out.get(timeout=0.5)
        except queue.Empty:
            continue
        if isinstance(item, FileChanged):
            seen.add(os.path.dirname(item.path))
    watcher.stop()
    print(json.dumps({"before": before, "missing": missing, "refused": refused, "seen": sorted(seen)}))
    """
)


@pytest.mark.skipif(not _can_lower_limit(), reason="cannot lower the inotify limit in a user namespace here")
def test_the_folders_said_unwatched_are_exactly_those_that_see_nothing(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    root.mkdir()
    for i in range(30):
        (root / f"--p{i:02}--").mkdir()
    limit = 12
    script = f"echo {limit} > /proc/sys/user/max_inotify_watches && exec {sys.executable} -c \"$0\" {root}"
    run = subprocess.run(["unshare", "-Ur", "sh", "-c", script, _PROBE], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    everything = {str(root)} | {str(root / f"--p{i:02}--") for i in range(30)}
    assert got["before"] is False  # below the limit the kernel takes one more watch
    assert got["refused"] is True
    assert len(got["missing"]) == len(everything) - limit  # the root and 11 folders got a watch
    assert set(got["seen"]) == everything - set(got["missing"])  # those said watched all see a write


def test_below_the_limit_no_folder_is_said_unwatched(tmp_path: Path) -> None:
    from notifier.watch.observer import Watcher
    from notifier.watch.watchlimit import watch_refused

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
