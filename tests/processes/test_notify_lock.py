"""The lock that says who notifies (app/instance.py ``NotifyLock``), held by another process: a
claim names the app's folders for as long as that app runs, and a headless run leaves
notifying to an app of the same folders only, and takes it back once that app let the claim go
or ended (seen by an :class:`EndWatch`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from notifier.instance import EndWatch, NotifyLock, Turn


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
    from notifier.config import Config

    path = str(tmp_path / "notify.lock")
    claim = f"from notifier.instance import NotifyLock; NotifyLock({path!r}).claim(['/s']); print(1, flush=True); input()"
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


def _claimant(path: str, roots: list[str]) -> subprocess.Popen[str]:
    """Another process that claims the lock (as the app does) until its stdin closes, then lets
    it go (as the app does when it quits)."""
    code = (
        "import sys; from notifier.instance import NotifyLock; lock = NotifyLock(sys.argv[1]); "
        "assert lock.claim(sys.argv[2:], wait_s=5); print(1, flush=True); sys.stdin.read(); lock.release()"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, path, *roots], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline() == "1\n"  # it holds the claim
    return proc


def test_whose_turn_it_is_beside_an_app_and_after_it(tmp_path: Path) -> None:
    """``turn``: a run that would notify does not beside an app of its folders, does beside an app
    of other folders, and does again once the app let its claim go (quit) or ended (killed)."""
    path = str(tmp_path / "notify.lock")
    mine = NotifyLock(path)
    assert mine.turn(["/s"]) == Turn(True, None)  # no app: it notifies, holding the lock shared
    assert not NotifyLock(path).claim(["/s"], wait_s=0.1)  # (so an app waits for it)
    mine.release()
    app = _claimant(path, ["/s"])
    try:
        assert mine.turn(["/s"]) == Turn(False, app.pid)  # the app notifies these
        assert mine.turn(["/t"]) == Turn(True, app.pid)  # nobody else notifies those
        # said to have ended, yet its lock is held: an app letting go; its end is waited for
        assert mine.turn(["/s"], ended=(app.pid,)) == Turn(False, None)
        mine.release()
    finally:
        assert app.stdin is not None
        app.stdin.close()  # it quits, letting the claim go
        app.wait(10)
    assert Path(path).read_text() == ""
    assert mine.turn(["/s"]) == Turn(True, None)
    mine.release()

    killed = _claimant(path, ["/s"])
    assert mine.turn(["/s"]) == Turn(False, killed.pid)
    mine.release()
    killed.kill()  # no word: its claim stays in the file, naming a pid that ended
    watch = EndWatch(killed.pid, lambda: None)
    assert watch.join(10) and watch.ended
    # Until its parent reaps it, kill(pid, 0) still finds it: the watch's word is what counts
    assert mine.turn(["/s"], ended=(killed.pid,)) == Turn(True, None)
    mine.release()
    killed.wait(10)
    assert json.loads(Path(path).read_text())["pid"] == killed.pid
    assert mine.turn(["/s"]) == Turn(True, None)
    mine.release()


def test_an_end_watch_says_when_a_process_ends_and_only_then(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ended: list[int] = []
    for pidfds in (True, False):
        if not pidfds:  # where there are none (not Linux, an old kernel): it looks now and then
            monkeypatch.delattr(os, "pidfd_open", raising=False)
            monkeypatch.setattr(EndWatch, "POLL_S", 0.05)
        proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)

        def on_end(pid: int = proc.pid) -> None:
            ended.append(pid)

        watch = EndWatch(proc.pid, on_end)
        assert not watch.join(0.2) and not watch.ended  # (still running)
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(10)
        assert watch.join(10) and ended[-1] == proc.pid and watch.ended
        watch.stop()  # (after it ended: nothing to wake)
    stopped = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    watch = EndWatch(stopped.pid, lambda: ended.append(0))
    watch.stop()
    assert watch.join(10)
    assert stopped.stdin is not None
    stopped.stdin.close()
    stopped.wait(10)
    assert 0 not in ended and not watch.ended  # stopped first: not called
    gone = EndWatch(stopped.pid, lambda: ended.append(-1))  # one that ended already
    assert gone.join(10) and ended[-1] == -1


def test_one_headless_run_of_the_same_folders_holds_the_peer_lock(tmp_path: Path) -> None:
    """``PeerLock``: held by another process, it names that process's pid (and no other folders'
    lock is held by it); let go when the process ends, the next run takes it."""
    from notifier.cli.run import _headless_notifies
    from notifier.config import Config
    from notifier.instance import PeerLock

    code = (
        "import sys; from notifier.instance import PeerLock; lock = PeerLock(sys.argv[1], ['/s']);"
        " assert lock.take() is None; print(1, flush=True); sys.stdin.read()"
    )
    other = subprocess.Popen(
        [sys.executable, "-c", code, str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert other.stdout is not None and other.stdout.readline() == "1\n"
        assert PeerLock(str(tmp_path), ["/s"]).take() == other.pid
        elsewhere = PeerLock(str(tmp_path), ["/t"])
        assert elsewhere.take() is None and elsewhere.held  # (other folders: nobody else notifies them)
        elsewhere.release()
        config = Config()
        config.set("sessions_dirs", ["/s"], "test")
        lock = NotifyLock(str(tmp_path / "notify.lock"))
        assert _headless_notifies(lock, config, peer=PeerLock(str(tmp_path), ["/s"])) is False
        assert lock.fd is None  # (not sharing the app's lock: an app that starts does not wait for it)
    finally:
        assert other.stdin is not None
        other.stdin.close()
        other.wait(10)
    mine = PeerLock(str(tmp_path), ["/s"])
    assert mine.take() is None and mine.held and mine.take() is None  # (taken once, kept)
    mine.release()
