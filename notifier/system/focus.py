"""Is the user already looking at a session? Its terminal is the active X11 window and, in tmux,
its pane is the one that terminal's client shows. Notifications skip such sessions
(``notifications.skip_when_focused``). Anything unknown counts as not looking, and so does a
session on another machine (a remote host's session is never in front of you here, even when a
local pi runs in a folder of the same path)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from notifier.core.model import SessionView
from notifier.core.text import clean
from notifier.system.locate import Location, Wanted, locate_sessions
from notifier.system.tmux import TmuxClient, tmux, tmux_clients
from notifier.system.x11 import active_window, open_display, window_for, x_windows_by_pid

log = logging.getLogger(__name__)


def client_pane(client: TmuxClient, socket: str) -> str | None:
    out = tmux(socket, "display-message", "-c", client.tty, "-p", "#{pane_id}")
    return out.strip() if out else None


def is_focused(location: Location | None) -> bool:
    """True when the session's terminal is the active window and, in tmux, its pane is the pane
    that terminal's client shows. Anything unknown counts as not focused."""
    if location is None or location.window_id is None:
        return False
    disp = open_display()
    if disp is None:
        return False
    try:
        if active_window(disp) != location.window_id:
            return False
        if location.tmux is None:
            return True
        windows = x_windows_by_pid(disp)
    except Exception:
        return False
    finally:
        disp.close()
    pane = location.tmux
    for client in tmux_clients(pane.socket):
        if window_for([client.pid], windows) == location.window_id:
            return client_pane(client, pane.socket) == pane.pane
    return False


def is_session_focused(view: SessionView) -> bool:
    """The hook for notifications: never raises."""
    if view.ref.host is not None:
        return False
    try:
        return is_focused(locate_sessions([view]).get(view.ref.key))
    except Exception as exc:
        log.debug("focus check failed: %s", clean(exc, 200))
        return False


def items_focused(items: Sequence[Any]) -> bool:
    """For notifications (``notifications.skip_when_focused``): True when every question of a
    notice (items with ``ref`` and ``question``) is in a session the user is looking at."""
    if not items or any(i.ref.host is not None for i in items):
        return False  # (a remote session: its folder path says nothing about this machine)
    try:
        wanted = [Wanted(i.ref.key, i.ref.cwd, i.question.asked_at, True, i.question.text) for i in items]
        found = locate_sessions(wanted)
        return all(is_focused(found.get(i.ref.key)) for i in items)
    except Exception as exc:
        log.debug("focus check failed: %s", clean(exc, 200))
        return False
