"""The window process (`pi-notifier show --attach`): opened one at a time, raised and focused
over the control channel, fed snapshots as it subscribes, with
what the window shows beyond the snapshot (:class:`WindowDecoration`: where each pi runs, its
"Where", and what is snoozed). Where they run takes a process table read (tens of ms): it is
looked up on a thread of its own when the questions changed (or every LOCATE_AGAIN_S), and the
window is pushed again once it is known (``on_found``), so a push never waits for it."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from notifier.actions.goto import window_locations
from notifier.control import SOCKET_ENV, Connection, encode
from notifier.core.commands import Focus
from notifier.core.model import Snapshot
from notifier.core.planner import Preferences
from notifier.core.text import clean
from notifier.system import desktop as x11
from notifier.window.view import mark_snoozes, window_obj

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


def _focus_message(focus: list[str] | None, said: str | None) -> dict[str, Any]:
    """What tells an open window where to look (and, ``said``, a line for its status line)."""
    return {"focus": focus, **({"said": said} if said else {})}


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
        message = _focus_message(focus, self._pending_said)
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
            conn.send(_focus_message(self._pending_focus, self._pending_said))
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


LOCATE_AGAIN_S = 5.0  # the window's "Where" of unchanged questions is looked up again this often


class WindowDecoration:
    def __init__(
        self,
        preferences: Callable[[], Preferences],
        on_found: Callable[[], None],
        stop_event: threading.Event,
    ) -> None:
        self.preferences = preferences
        self.on_found = on_found
        self.stop_event = stop_event
        self._locations: tuple[tuple[Any, ...], float, dict[Any, Any]] | None = None  # the window's "Where"
        self._lock = threading.Lock()
        self._wanted: tuple[tuple[Any, ...], list[dict[str, Any]]] | None = None
        self._locating = False

    def __call__(self, obj: dict[str, Any]) -> dict[str, Any]:
        """The window's object with each question's last known location and the snooze marks."""
        now = time.time()
        questions = obj.get("questions", [])
        keys = tuple(tuple(q["key"]) for q in questions)
        with self._lock:
            cached = self._locations
            if cached is None or cached[0] != keys or now - cached[1] >= LOCATE_AGAIN_S:
                self._wanted = (keys, [dict(q) for q in questions])
                if not self._locating:
                    self._locating = True
                    threading.Thread(target=self._locate, name="pi-notifier-locate", daemon=True).start()
        found = cached[2] if cached is not None else {}
        for q in questions:
            q["location"] = found.get(tuple(q["key"]))
        return mark_snoozes(obj, self.preferences(), now)

    def _locate(self) -> None:
        while True:
            with self._lock:
                wanted, self._wanted = self._wanted, None
                if wanted is None or self.stop_event.is_set():
                    self._locating = False
                    return
            keys, questions = wanted
            try:
                window_locations({"questions": questions})
            except Exception as exc:  # the window shows no "Where" then, nothing worse
                log.debug("cannot locate the sessions: %s", clean(exc, 200))
            with self._lock:
                self._locations = (keys, time.time(), {tuple(q["key"]): q.get("location") for q in questions})
            self.on_found()  # pushed again, now with where each pi runs
