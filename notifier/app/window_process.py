"""The window process (`pi-notifier show --attach`): opened one at a time, raised and focused
over the control channel, fed snapshots as it subscribes."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from notifier.control.connection import Connection
from notifier.control.wire import SOCKET_ENV, encode
from notifier.core.commands import Focus
from notifier.core.model import Snapshot
from notifier.system import desktop as x11
from notifier.ui.view import window_obj

log = logging.getLogger(__name__)


def window_display() -> tuple[dict[str, str] | None, str]:
    """Where the window (Tk: X only) can open: (environment variables to add for it, what that
    display is), or (``None``, why none can, in one line). On Wayland without ``DISPLAY``, the
    compositor's XWayland display (:func:`notifier.system.desktop.window_display`)."""
    if not sys.platform.startswith("linux"):
        return {}, "the desktop"
    return x11.window_display()


def has_display() -> bool:
    return window_display()[0] is not None


def _focus_obj(focus: Focus | None) -> list[str] | None:
    return [focus.file, focus.call] if focus is not None else None


class WindowProcess:
    """Every open window is a subscribed connection; at most one is started by this app."""

    def __init__(
        self, socket: str, decorate: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    ) -> None:
        self.socket = socket  # the channel the window connects back to
        self.decorate = decorate  # adds to each window object what the snapshot does not hold
        self._subscribers: list[Connection] = []
        self._sub_lock = threading.Lock()
        self._show_lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._pending_focus: list[str] | None = None
        self._pending_said: str | None = None
        self._subscribed = threading.Event()  # a window subscribed since the last one was started

    @property
    def subscribers(self) -> list[Connection]:
        with self._sub_lock:
            return list(self._subscribers)

    def show(self, focus: Focus | None = None, wait: float = 0.0, said: str | None = None) -> str:
        """Open the window (one at a time), or raise the open one at ``focus``; ``said``: a line
        for its status line. Says what really happened: "raised", "opened" (a new window
        subscribed within ``wait`` s), "starting" (not confirmed yet), "no-display" or "failed"."""
        with self._show_lock:
            self._pending_said = said
            result = self._show(_focus_obj(focus))
            process = self._process
        deadline = time.monotonic() + wait
        while result == "starting" and process is not None and time.monotonic() < deadline:
            if self._subscribed.wait(0.05):
                return "opened"
            if process.poll() is not None:
                return "failed"
        return result

    def _show(self, focus: list[str] | None) -> str:
        with self._sub_lock:
            self._subscribers = [c for c in self._subscribers if not c.closed]
            subs = list(self._subscribers)
        message: dict[str, Any] = {"focus": focus}
        if self._pending_said:
            message["said"] = self._pending_said
        delivered = [conn.send(message) for conn in subs]
        if any(delivered):
            self._pending_said = None
            return "raised"
        if self._process is not None and self._process.poll() is None:
            self._pending_focus = focus  # starting: it gets the focus when it subscribes
            return "starting"
        extra, said = window_display()
        if extra is None:
            log.warning("cannot open the window: %s", said)
            return "no-display"
        cmd = [sys.executable, "-m", "notifier", "show", "--attach"]
        if focus:
            cmd += ["--focus", focus[0], focus[1]]
        self._pending_focus = focus
        env = dict(os.environ, **extra, **{SOCKET_ENV: self.socket})
        self._subscribed.clear()
        try:
            self._process = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, env=env)
        except OSError as exc:
            log.warning("cannot open the window: %s", exc)
            return "failed"
        return "starting"

    def subscribe(self, conn: Connection, snapshot: Snapshot) -> None:
        """A window connected: it gets every snapshot from now on, and the focus it was opened for."""
        with self._sub_lock:
            self._subscribers = [c for c in self._subscribers if not c.closed]
            self._subscribers.append(conn)
        self._subscribed.set()
        conn.send({"window": self._obj(snapshot)}, kind="window")
        if self._pending_focus or self._pending_said:
            message: dict[str, Any] = {"focus": self._pending_focus}
            if self._pending_said:
                message["said"] = self._pending_said
            conn.send(message)
            self._pending_focus = self._pending_said = None

    def _obj(self, snapshot: Snapshot) -> dict[str, Any]:
        obj = window_obj(snapshot)
        if self.decorate is not None:
            try:
                obj = self.decorate(obj)
            except Exception as exc:  # what it adds is a nicety: the list is shown regardless
                log.debug("window object not decorated: %s", exc)
        return obj

    def push(self, snapshot: Snapshot) -> None:
        """A new snapshot to every open window (from the UI thread)."""
        subs = self.subscribers
        if not subs:
            return
        # Encoded once; send() only queues (a newer snapshot replaces an unsent one), so a
        # window that stops reading never holds up this thread; the channel drops it.
        message = encode({"window": self._obj(snapshot)})
        gone = [conn for conn in subs if not conn.send(message, kind="window")]
        if gone:
            with self._sub_lock:
                self._subscribers = [c for c in self._subscribers if c not in gone]

    def close(self) -> None:
        with self._sub_lock:
            for conn in self._subscribers:
                conn.close()
            self._subscribers.clear()
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
