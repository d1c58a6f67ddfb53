"""One tray app per user: a lock file held for its life; a second one hands over to the first
(asks it to open its window) and leaves. And one notifier per question: :class:`Notifying`
(for a set of folders, the app that watches them, else one headless run of them). Runs of
other folders have other locks: nobody else notifies their questions."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from notifier import APP_NAME
from notifier.control import request
from notifier.core.text import clean
from notifier.system import paths

HAND_OVER_S = 5.0  # how long a second app waits for the first one's channel to answer
APP_LOCK = "app.lock"  # the one app's lock file, in the runtime folder
CLAIM_S = 5.0  # how long the app waits for a headless run to stop notifying
_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _open(path: str) -> int:
    """The lock file at ``path`` (made 0600, never through a link), in a folder of ours. Raises
    OSError (:class:`~notifier.system.paths.NotOurs`) when the folder is not ours: nothing is
    created in it."""
    paths.own_folder(os.path.dirname(path) or ".", parents=True)
    return os.open(path, _FLAGS, 0o600)


def _locked(path: str, exclusive: bool = True, wait: bool = False) -> int | None:
    """The lock file at ``path`` (:func:`_open`), locked: its descriptor, held until it is
    closed; None while it is held the other way (``wait``: once it is not). (No flock: Windows,
    where one app and one notifier are not enforced: always.)"""
    fd = _open(path)
    try:
        import fcntl

        fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | (0 if wait else fcntl.LOCK_NB))
    except ImportError:
        pass
    except OSError:
        os.close(fd)
        if wait:
            raise
        return None
    return fd


def _held(path: str) -> bool:
    """Whether another process holds the lock at ``path`` (looked at, never kept)."""
    fd = _locked(path, exclusive=False)
    if fd is not None:
        os.close(fd)
    return fd is None


class InstanceLock:
    """Held for the life of the tray app: a second one knows the first is there."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd: int | None = None

    def acquire(self) -> bool:
        """True: this is the app (its pid written in the lock). Raises OSError when the lock's
        folder is not ours."""
        self.fd = _locked(self.path)
        if self.fd is not None:
            _say(self.fd, "app")
        return self.fd is not None

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def held(self) -> bool:
        """Whether an app holds the lock now (no lock file: no app). Never raises."""
        try:
            return os.path.exists(self.path) and _held(self.path)
        except OSError:
            return False

    def holder(self) -> int:
        """(A look from another process.) The pid of the app that holds the lock; 0: none, or it
        does not say. Never raises."""
        try:
            return _holder(self.path)[0] if self.held() else 0
        except OSError:
            return 0


class Notifying:
    """Who notifies the sessions of a set of folders: the app, when it watches them and notifies;
    else one headless run of them. Two lock files per set say it, each held with ``flock`` for
    its holder's life, so the kernel lets go when the holder ends, crash included (nothing stale
    to judge, no process to follow): ``app-….lock``, held by the app of these folders, and
    ``notify-….lock``, held by whoever notifies them. A headless run notifies while it holds the
    second and nobody holds the first. The app takes the first and writes its pid there (a
    headless run that notifies follows that file: it hands over and lets go of the second), then
    takes the second (:meth:`claim`). A headless run waiting for its turn blocks in ``flock``
    (:meth:`wait`). A third, ``standby-….lock`` (one per session bus: the notification server
    whose bubbles a run could take over), is held shared by every headless run that takes its
    turn to notify (:meth:`stand_by`): whoever notifies there and ends cleanly leaves its bubbles
    on screen for the run that comes next (:meth:`successor`), as a killed one does, instead of
    closing them for that run to put back."""

    def __init__(self, folder: str, roots: Sequence[str]) -> None:
        # (the folders as they really are: one named through a link, or twice, is the same set)
        digest = hashlib.sha256(json.dumps(sorted({os.path.realpath(r) for r in roots})).encode()).hexdigest()[:16]
        self.app_path = os.path.join(folder, f"app-{digest}.lock")
        self.path = os.path.join(folder, f"notify-{digest}.lock")
        bus = os.environ.get("DBUS_SESSION_BUS_ADDRESS", "")
        bus = ",".join(part for part in bus.split(",") if not part.startswith("guid="))
        on = hashlib.sha256(bus.encode()).hexdigest()[:16]
        self.standby_path = os.path.join(folder, f"standby-{digest}-{on}.lock") if bus else None
        self.app_fd: int | None = None  # (the app's: held for its life)
        self.standby_fd: int | None = None  # (a headless run's that takes turns: held for its life)
        self.fd: int | None = None  # (held while this process notifies)
        self.after_app = False  # whether the app held the notifier's lock before this process

    def claim(self, wait_s: float = CLAIM_S) -> bool:
        """The app: take both locks, the second once the headless run that notifies let it go
        (False: it did not within ``wait_s``; the app notifies anyway)."""
        self.app_fd = _locked(self.app_path, wait=True)  # (headless runs hold it only for a look)
        assert self.app_fd is not None
        _say(self.app_fd, "app")  # (the change a headless run that notifies follows)
        deadline = time.monotonic() + wait_s
        while not self._take(wait=False):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)  # (only at start-up, while a headless run hands over)
        return True

    def app_runs(self) -> bool:
        """Whether the app of these folders runs (its lock is held)."""
        return _held(self.app_path)

    def headless(self) -> int | None:
        """(A look from another process; nothing is created.) The pid of the headless run that
        notifies these folders now (0: it does not say); None: none does (nobody, or the app)."""
        try:
            if not os.path.exists(self.path) or not _held(self.path):
                return None
            pid, app = _holder(self.path)
        except OSError:
            return None
        return None if app else pid

    def take(self) -> int | None:
        """A headless run: take the notifier's lock without waiting. None: this run holds it now;
        else the pid of the one that does (0: it does not say)."""
        return None if self._take(wait=False) else _holder(self.path)[0]

    def wait(self) -> None:
        """A headless run: block until it may notify (the notifier's lock held, no app of these
        folders); ``after_app`` says then whether an app notified last."""
        while not self._take(wait=True) or self.app_runs():
            self.let_go()
            fd = _locked(self.app_path, exclusive=False, wait=True)  # (until that app ends)
            if fd is not None:
                os.close(fd)

    def _take(self, wait: bool) -> bool:
        if self.fd is None:
            fd = _locked(self.path, wait=wait)
            if fd is None:
                return False
            self.after_app = os.pread(fd, 32, 0).endswith(b" app")  # (what the last holder said)
            # (for the runs that wait: who notifies; a run that finds the app still running, as
            # a killed app's locks go, writes nothing: it lets go, and the app's word stays)
            if self.app_fd is not None or not self.app_runs():
                _say(fd, "app" if self.app_fd is not None else "")
            self.fd = fd
        return True

    def stand_by(self) -> None:
        """A headless run that takes its turn to notify: say so for its life (until :meth:`release`
        or :meth:`stand_down`)."""
        if self.standby_fd is None and self.standby_path is not None:  # (no bus: no bubble to take over)
            self.standby_fd = _locked(self.standby_path, exclusive=False, wait=True)  # (a look holds it a moment)

    def stand_down(self) -> None:
        """No longer waiting for a turn (before this run ends and asks :meth:`successor`)."""
        if self.standby_fd is not None:
            os.close(self.standby_fd)
            self.standby_fd = None

    def successor(self) -> bool:
        """Whether another run of these folders on this session bus stands by to notify once
        this one ends (so that what this one shows stays on screen for it). Never raises."""
        if self.standby_path is None:
            return False
        try:
            fd = _locked(self.standby_path)
        except OSError:
            return False
        if fd is not None:
            os.close(fd)
        return fd is None

    def let_go(self) -> None:
        """Stop holding the notifier's lock (a headless run that handed over)."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def release(self) -> None:
        """Let every lock go, the app's first: a headless run waiting for the notifier's lock
        then never finds it free while the app still runs (it took it, wrote over the app's
        word in it, and handed it back: the next taker read that no app notified last)."""
        if self.app_fd is not None:
            os.close(self.app_fd)
            self.app_fd = None
        self.let_go()
        self.stand_down()


def _say(fd: int, who: str) -> None:
    """Write this process's pid in the lock file ``fd`` (``who``: "app", or "" for a headless run)."""
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()} {who}".strip().encode(), 0)


def hand_over() -> int:
    """Another pi-notifier is the app: ask it to open its window, say what really happened, leave."""
    deadline = time.monotonic() + HAND_OVER_S
    while time.monotonic() < deadline:
        reply = request({"cmd": "show", "focus": None, "wait": 2.0})
        if reply is not None and reply.get("ok"):  # None: not up yet; an error: try again
            sys.stderr.write(f"{APP_NAME} is already running; {window_said(reply)}\n")
            return 0
        time.sleep(0.1)  # the other one is still starting: its channel opens in a moment
    sys.stderr.write(f"{APP_NAME} is already running (pid file lock held) but does not answer\n")
    return 0


WINDOW_SAID = {
    "opened": "its window was opened",
    "raised": "its window (already open) was raised",
    "starting": "its window is starting (not confirmed yet)",
    "no-display": "it runs without a display, so no window was opened",
    "failed": "its window could not be opened (see its log)",
}


def window_said(reply: dict[str, Any]) -> str:
    """What the running app's answer to a show request means, in words."""
    said = WINDOW_SAID.get(str(reply.get("window")))
    if said is None and not reply.get("ok"):
        return f"it refused to open its window ({clean(reply.get('error'), 100)})"
    return said or "it was asked to open its window"


def _holder(path: str) -> tuple[int, bool]:
    """The pid the holder of the lock at ``path`` wrote (0: none), and whether it is the app. A
    holder writes it just after it took the lock: read again for a moment while it is empty."""
    fd = _open(path)
    try:
        deadline = time.monotonic() + 0.5
        while not (said := os.pread(fd, 32, 0).decode("ascii", "replace").split()) and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        os.close(fd)
    pid = int(said[0]) if said and said[0].isdigit() and int(said[0]) != os.getpid() else 0
    return pid, said[1:] == ["app"]
