"""One tray app per user: a lock file held for its life; a second one hands over to the first
(asks it to open its window) and leaves. And one notifier per question: :class:`NotifyLock`
(the app and headless runs) and :class:`PeerLock` (two ``run --no-tray`` of the same folders side
by side, no app: the one that holds it notifies; the others stream and follow it, and the first of
them to take the lock once it ended notifies from then on, :mod:`notifier.cli.notify_turns`).
Runs of other folders have other locks (nobody else notifies their questions)."""

from __future__ import annotations

import hashlib
import json
import os
import select
import sys
import threading
import time
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from typing import Any

from notifier import APP_NAME
from notifier.control import request
from notifier.core.text import clean
from notifier.system import paths

HAND_OVER_S = 5.0  # how long a second app waits for the first one's channel to answer
APP_LOCK = "app.lock"  # the one app's lock file, in the runtime folder
CLAIM_S = 5.0  # how long the app waits for headless runs to stop notifying
_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _open(path: str) -> int:
    """The lock file at ``path`` (made 0600, never through a link), in a folder of ours. Raises
    OSError (:class:`~notifier.system.paths.NotOurs`) when the folder is not ours: nothing is
    created in it."""
    paths.own_folder(os.path.dirname(path) or ".", parents=True)
    return os.open(path, _FLAGS, 0o600)


def _flock(fd: int, exclusive: bool = True) -> bool:
    """Take the lock of ``fd`` without waiting: False while it is held the other way. (No flock:
    Windows, where one app and one notifier are not enforced: True.)"""
    try:
        import fcntl
    except ImportError:
        return True
    try:
        fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        return True
    except OSError:
        return False


class InstanceLock:
    """Held for the life of the tray app: a second one knows the first is there."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd: int | None = None

    def acquire(self) -> bool:
        """True: this is the app. Raises OSError when the lock's folder is not ours."""
        fd = _open(self.path)
        if _flock(fd):
            self.fd = fd
            return True
        os.close(fd)
        return False

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def held(self) -> bool:
        """Whether an app holds the lock now: taken for a moment and let go where it is free (no
        lock file: no app). Never raises."""
        if not os.path.exists(self.path):
            return False
        try:
            free = self.acquire()
        except OSError:
            return False
        self.release()
        return not free


@dataclass(frozen=True)
class Turn:
    """What :meth:`NotifyLock.turn` decided: ``notify``, and the app to follow (``app``: the pid
    of the running app that claims notifying; None: none does)."""

    notify: bool
    app: int | None


class NotifyLock:
    """Who notifies the questions: the app holds this file's lock exclusively for its life, each
    headless run that notifies holds it shared. The app, as it starts, first writes its pid and
    folders into the file (:meth:`claim`): a headless run that notifies follows the file, and
    when an app that watches its folders claims it, stops notifying and lets go (run.py), so
    that each question is notified by one of them. The app waits for that (at most
    ``CLAIM_S``) before it reads what was notified already from the state store."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd: int | None = None
        self.exclusive = False

    def _lock(self, exclusive: bool) -> bool:
        """Take the lock (not waiting). False: it is held the other way."""
        if self.fd is None:
            self.fd = _open(self.path)
        return _flock(self.fd, exclusive)

    def share(self) -> bool:
        """A headless run that notifies: True while no app holds the lock."""
        return self._lock(exclusive=False)

    def claim(self, roots: Sequence[str], wait_s: float = CLAIM_S) -> bool:
        """The app: say who wants to notify, then take the lock once the headless runs that
        notify let it go (False: some did not within ``wait_s``; the app notifies anyway)."""
        self.fd = _open(self.path)
        said = json.dumps({"pid": os.getpid(), "roots": sorted(roots)}).encode()
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, said, 0)  # (a change the headless runs follow)
        deadline = time.monotonic() + wait_s
        while not self._lock(exclusive=True):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)  # (only at start-up, while a headless run hands over)
        self.exclusive = True
        return True

    def claim_of(self, ended: Container[int] = ()) -> tuple[int, list[str]] | None:
        """The pid and folders of the app that claimed the lock, while it runs (None: no app
        claims it: nobody did, it let the claim go, or it ended without a word; ``ended``: pids
        known to have ended, which ``kill(pid, 0)`` still finds until their parent reaps them)."""
        try:
            with open(self.path, "rb") as fh:
                said = json.loads(fh.read(1 << 16) or b"null")
            pid, roots = said["pid"], said["roots"]
        except (OSError, ValueError, TypeError, KeyError):
            return None
        if not isinstance(pid, int) or pid <= 0 or pid == os.getpid() or not isinstance(roots, list):
            return None
        if pid in ended:
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None  # (an app that ended without a word: killed, or it crashed)
        except PermissionError:
            pass
        return pid, [str(r) for r in roots]

    def claimant(self) -> list[str] | None:
        """The folders of the app that claimed the lock, while it runs (None: no app claims it)."""
        claim = self.claim_of()
        return None if claim is None else claim[1]

    def turn(self, roots: Sequence[str], ended: Container[int] = ()) -> Turn:
        """For a run of ``roots`` that would notify: whether it does now. Not while a running app
        of the same folders claims notifying; beside an app of other folders it does (nobody
        else notifies its questions); either way the caller lets the lock go (:meth:`release`)
        once it stopped notifying, so that app is not kept waiting. With no app, it does,
        holding the lock shared, unless an app that just let its claim go still holds it
        (``Turn.notify`` False, ``Turn.app`` None: wait for that app's end). ``ended``: as for
        :meth:`claim_of`."""
        claim = self.claim_of(ended)
        if claim is not None:
            return Turn(sorted(claim[1]) != sorted(roots), claim[0])
        return Turn(self.share(), None)

    def release(self) -> None:
        if self.fd is not None:
            if self.exclusive:
                os.ftruncate(self.fd, 0)  # no app claims it any more
            os.close(self.fd)
            self.fd = None
            self.exclusive = False


class EndWatch:
    """Calls ``on_end`` once process ``pid`` has ended, on a thread of its own: woken by the
    kernel (a pidfd: Linux 5.3 and later), elsewhere by a look every ``POLL_S``. ``stop``: not
    called any more. ``ended``: set before ``on_end`` is called (the process may still be a
    zombie then, which ``kill(pid, 0)`` finds)."""

    POLL_S = 1.0

    def __init__(self, pid: int, on_end: Callable[[], None]) -> None:
        self.pid = pid
        self.on_end = on_end
        self.ended = False
        self._stop = threading.Event()
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._wait, name="pi-notifier app end", daemon=True)
        self._thread.start()

    def _wait(self) -> None:
        try:
            self._until_ended()
        finally:
            os.close(self._wake_r)
        if not self._stop.is_set():
            self.ended = True
            self.on_end()

    def _until_ended(self) -> None:
        try:
            pidfd = os.pidfd_open(self.pid)  # type: ignore[attr-defined,unused-ignore]
        except ProcessLookupError:
            return  # ended already
        except (AttributeError, OSError):  # no pidfds here: look now and then
            while not self._stop.wait(self.POLL_S) and _running(self.pid):
                pass
            return
        try:
            select.select([pidfd, self._wake_r], [], [])  # (readable once it ended, or stopped)
        finally:
            os.close(pidfd)

    def join(self, timeout: float) -> bool:
        """Wait for the watch to end (the process ended, or :meth:`stop`): True if it did."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def stop(self) -> None:
        if not self._stop.is_set():
            self._stop.set()
            try:
                os.write(self._wake_w, b"x")
            except OSError:  # (it ended already: nobody reads the pipe)
                pass
            os.close(self._wake_w)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


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


def window_said(reply: dict[str, Any]) -> str:
    """What the running app's answer to a show request means, in words."""
    window = reply.get("window")
    if window == "opened":
        return "its window was opened"
    if window == "raised":
        return "its window (already open) was raised"
    if window == "starting":
        return "its window is starting (not confirmed yet)"
    if window == "no-display":
        return "it runs without a display, so no window was opened"
    if window == "failed":
        return "its window could not be opened (see its log)"
    if not reply.get("ok"):
        return f"it refused to open its window ({clean(reply.get('error'), 100)})"
    return "it was asked to open its window"


class PeerLock:
    """Held exclusively, for its life, by the headless run that notifies ``roots``; the file
    names its pid for the others to follow."""

    def __init__(self, folder: str, roots: Sequence[str]) -> None:
        digest = hashlib.sha256(json.dumps(sorted(roots)).encode()).hexdigest()[:16]
        self.path = os.path.join(folder, f"notify-headless-{digest}.lock")
        self.fd: int | None = None

    @property
    def held(self) -> bool:
        return self.fd is not None

    def take(self) -> int | None:
        """Take the lock (not waiting): None when this run holds it now, else the pid of the
        run that does (0: it does not say)."""
        if self.fd is not None:
            return None
        fd = _open(self.path)
        if not _flock(fd):
            try:
                return _holder(fd)
            finally:
                os.close(fd)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self.fd = fd
        return None

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _holder(fd: int) -> int:
    """The pid the lock's holder wrote (0: none). A holder writes it just after it took the lock:
    read again for a moment while the file is still empty."""
    deadline = time.monotonic() + 0.5
    while True:
        said = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        if said or time.monotonic() >= deadline:
            return int(said) if said.isdigit() and int(said) != os.getpid() else 0
        time.sleep(0.01)
