"""Is the user already looking at a session? Its terminal is the focused window (as the focus
method here tells it: sway IPC, X11 EWMH; :mod:`notifier.system.window_manager`) and, in tmux, its
pane is the one that terminal's client shows. Notifications skip such sessions
(``notifications.skip_when_focused``). Anything unknown counts as not looking, and so does a
session on another machine (a remote host's session is never in front of you here, even when a
local pi runs in a folder of the same path).

The check runs before every notification, so what is focused is not asked for then: a
:class:`FocusFollower` keeps it current from the compositor's focus events, read by the
notifier's thread as they come (it starts with the notifier), looked up in microseconds (Hyprland
and KWin are asked at each check instead). Only when the focused window's processes include a
tmux client or a pi in the folder of the session asking is the focus method asked afresh (a
notification is skipped only on what is true now, not on an event still on its way) and the
session located (process list, tmux) and compared."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from notifier.core.owners import Wanted
from notifier.system.locate import Location, locate_sessions
from notifier.system.processes import folder, folders_of, looks_like_pi
from notifier.system.tmux import client_pane, tmux_clients
from notifier.system.window_manager import ASK, Events, Front, Method, Missing, focus_method, window_for

if TYPE_CHECKING:
    from notifier.system.supervisor import Worker

# Lazy imports here: psutil only where a focused window's processes are looked at.

log = logging.getLogger(__name__)

UNKNOWN = (-1, -1)  # nothing watches: ask the focus method


def is_focused(
    location: Location | None, front: Front | None = UNKNOWN, method: Method | Missing | None = None
) -> bool:
    """True when the session's terminal is the focused window and, in tmux, its pane is the
    pane that terminal's client shows (whichever of the session's clients that is: two terminals
    may show one tmux session). ``front``: the focused window if the caller knows it. Anything
    unknown counts as not focused."""
    if location is None:
        return False
    method = focus_method() if method is None else method
    if isinstance(method, Missing):
        return False
    try:
        if front == UNKNOWN:
            front = method.focused()
        if front is None:
            return False
        windows = method.windows()
    except Exception as exc:
        log.debug("cannot ask %s what is focused: %s", method.name, exc)
        return False
    pane = location.tmux
    if pane is None:
        return window_for([location.pid], windows) == front[0]
    for client in tmux_clients(pane.socket):
        if window_for([client.pid], windows) == front[0]:
            return client_pane(client, pane.socket) == pane.pane
    return False


def may_show(pid: int, folders: set[str]) -> bool:
    """Whether the window of process ``pid`` could show a session of one of ``folders``: a tmux
    client runs under it, or a pi in one of those folders (a look at its own processes only)."""
    import psutil

    try:
        below = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return False
    for p in below:
        try:
            name = p.name()
            if name == "tmux" or name.startswith("tmux:"):
                return True
            if looks_like_pi(name, p.cmdline()) and {folder(c) for c in folders_of(p.cwd())} & folders:
                return True
        except psutil.Error:
            continue
    return False


# ---- what is focused, kept current ----


class FocusFollower:
    """What is focused, for the check before a notification (:func:`items_focused`'s ``front``),
    on ``worker``'s thread only: kept current from the focus method's events (sway: a ``window`` /
    ``workspace`` subscription; X11: ``PropertyNotify`` of ``_NET_ACTIVE_WINDOW``), read there
    when their file is ready; subscribed at :meth:`start` and again at a check once the events
    stopped. ``UNKNOWN`` where nothing can watch (ask the focus method), ``None`` where nothing
    here can tell what is focused."""

    def __init__(self, worker: Worker) -> None:
        self._worker = worker
        self._method: Method | Missing | None = None
        self._events: Events | None = None
        self._front: Front | None = None

    def start(self) -> None:
        self.front()

    def front(self) -> Front | None:
        if isinstance(self._method, Missing):
            return None
        if self._events is not None:
            return self._front
        method = self._method = focus_method()
        if isinstance(method, Missing):
            return None
        if method.backend.events is None:
            return UNKNOWN  # (not watched: asked at each check; KWin: a script run, ~5 ms)
        try:
            self._events = method.backend.events(method.path)
            self._front = method.focused()
        except Exception as exc:
            log.debug("cannot watch the focus through %s: %s", method.name, exc)
            self.stop()
            return UNKNOWN
        log.debug("watching what is focused through %s", method.name)
        self._worker.watch(self._events.fileno(), self._read)
        return self._front

    def _read(self) -> None:
        events, method = self._events, self._method
        if events is None or not isinstance(method, Method):
            return
        try:
            for seen in events.read():
                self._front = method.focused() if seen == ASK else seen
        except Exception as exc:
            log.debug("the focus watcher stopped: %s", exc)
            self.stop()

    def stop(self) -> None:
        events, self._events = self._events, None
        if events is not None:
            with contextlib.suppress(Exception):
                self._worker.unwatch(events.fileno())
            with contextlib.suppress(Exception):
                events.close()


# ---- the check before a notification ----


def items_focused(
    items: Sequence[Any],
    front: Callable[[], Front | None] = lambda: UNKNOWN,
    method: Callable[[], Method | Missing] = focus_method,
    shows: Callable[[int, set[str]], bool] = may_show,
    locate: Callable[[list[Wanted]], Mapping[str, Location]] = locate_sessions,
) -> bool:
    """For notifications (``notifications.skip_when_focused``): True when every question of a
    notice (items with ``ref`` and ``question``) is in a session the user is looking at.
    ``front``: what the watcher last saw in front (:meth:`FocusFollower.front`; by default
    nothing watches); ``method``: the focus method, asked afresh; ``shows``: whether a window's
    process may show one of these folders (:func:`may_show`); ``locate``: where the sessions' pis run."""
    if not items or any(i.ref.host is not None for i in items):
        return False  # (a remote session: its folder path says nothing about this machine)
    try:
        seen = front()
        if seen is None:
            return False  # nothing focused, or nothing here can tell
        if seen != UNKNOWN:
            folders = {folder(i.ref.cwd) for i in items if i.ref.cwd}
            if not shows(seen[1], folders):
                return False  # the focused window runs neither tmux nor a pi of these folders
        # It may be one of them. Skipping loses a notification, so the watcher's word is not
        # enough: its event for a focus change made a moment ago may still be on its way. The
        # focus method is asked what is in front now.
        asked = method()
        wanted = [Wanted(i.ref.key, i.ref.cwd, i.question.asked_at, True, i.question.text) for i in items]
        found = locate(wanted)
        return all(is_focused(found.get(i.ref.key), UNKNOWN, asked) for i in items)
    except Exception as exc:
        log.debug("focus check failed: %s", exc)
        return False
