"""The lock that says who notifies (app/instance.py ``NotifyLock``), held by another process: a
claim names the app's folders for as long as that app runs, and a headless run leaves
notifying to an app of the same folders only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from notifier.app.instance import NotifyLock


def test_a_claim_names_a_running_app_only(tmp_path: Path) -> None:
    path = tmp_path / "notify.lock"
    other = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        path.write_text(json.dumps({"pid": other.pid, "roots": ["/s"]}))
        assert NotifyLock(str(path)).claimant() == ["/s"]
    finally:
        assert other.stdin is not None
        other.stdin.close()
        other.wait(10)
    assert NotifyLock(str(path)).claimant() is None  # that app ended without a word
    for junk in ("", "null", "[1]", '{"pid": "1", "roots": []}', '{"pid": 1}', "\xff{"):
        path.write_text(junk)
        assert NotifyLock(str(path)).claimant() is None


def test_a_headless_run_leaves_notifying_to_an_app_of_the_same_folders_only(tmp_path: Path) -> None:
    """``run --no-tray`` / ``run --json`` beside an app (another process holding the claim): it
    notifies only when that app watches other folders, and never keeps the app waiting."""
    from notifier.cli.run import _headless_notifies
    from notifier.config.load import Config

    path = str(tmp_path / "notify.lock")
    claim = f"from notifier.app.instance import NotifyLock; NotifyLock({path!r}).claim(['/s']); print(1, flush=True); input()"
    app = subprocess.Popen([sys.executable, "-c", claim], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert app.stdout is not None and app.stdout.readline() == "1\n"  # it holds the claim
        same, other = Config(), Config()
        same.set("sessions_dirs", ["/s"], "test")
        other.set("sessions_dirs", ["/elsewhere"], "test")
        for config, notifies in ((same, False), (other, True)):
            lock = NotifyLock(path)
            assert _headless_notifies(lock, config) is notifies
            assert lock.fd is None  # (let go: nothing follows a lock this run does not share)
    finally:
        assert app.stdin is not None
        app.stdin.close()
        app.wait(10)
