"""One tray app per user: a lock file held for its life; a second one hands over to the first
(asks it to open its window) and leaves."""

from __future__ import annotations

import os
import sys
import time
from typing import IO, Any

from notifier import APP_NAME
from notifier.control.client import request
from notifier.core.text import clean
from notifier.system import paths

HAND_OVER_S = 5.0  # how long a second app waits for the first one's channel to answer


class InstanceLock:
    """Held for the life of the tray app: a second one knows the first is there."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fh: IO[str] | None = None

    def acquire(self) -> bool:
        """True: this is the app. Raises OSError (:class:`~notifier.system.paths.NotOurs`) when
        the lock's folder is not ours: nothing is created in it."""
        paths.own_folder(os.path.dirname(self.path) or ".", parents=True)
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        self.fh = os.fdopen(os.open(self.path, flags, 0o600), "a+")
        try:
            import fcntl

            fcntl.flock(self.fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except ImportError:  # no flock (Windows): the socket alone decides
            return True
        except OSError:
            self.fh.close()
            self.fh = None
            return False

    def release(self) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None


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
