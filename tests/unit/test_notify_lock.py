"""The lock that says who notifies (app/instance.py ``NotifyLock``): headless runs share it, the
app claims it. Real files and real flock (two descriptors in one process are two holders).
(A claim of another, running process: tests/processes/test_notify_lock.py.)"""

from __future__ import annotations

import json
import os
from pathlib import Path

from notifier.instance import NotifyLock


def test_headless_runs_share_it_and_the_app_waits_for_them(tmp_path: Path) -> None:
    path = str(tmp_path / "run" / "notify.lock")
    one, two, app = NotifyLock(path), NotifyLock(path), NotifyLock(path)
    assert one.share() and two.share()  # two headless runs that notify
    assert one.claimant() is None  # nobody claims it yet
    assert not app.claim(["/s"], wait_s=0.1)  # they did not let go: the app goes on without it
    assert one.claimant() is None  # (the claim names this very process: never its own claimant)
    one.release()
    two.release()
    app.release()
    assert app.claim(["/b", "/a"], wait_s=1.0) and app.exclusive  # nobody shares it: at once
    said = json.loads(Path(path).read_text())
    assert said == {"pid": os.getpid(), "roots": ["/a", "/b"]}
    late = NotifyLock(path)
    assert not late.share()  # a headless run started after the app: the app notifies
    app.release()
    assert Path(path).read_text() == ""  # the app that ended claims nothing any more
    assert late.share()
    late.release()


