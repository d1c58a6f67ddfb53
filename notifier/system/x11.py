"""X11 windows through the window manager's EWMH properties: the top-level window of each process
(``_NET_WM_PID`` among ``_NET_CLIENT_LIST``) and the active window. ``WINDOWID`` is not trusted
(tmux copies it into panes, so it can name a long-gone window). Without ``DISPLAY`` or python-xlib
there is no display (``None``)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from notifier.core.text import clean
from notifier.system import logs
from notifier.system.programs import ancestors

log = logs.get(__name__)


def open_display() -> Any:
    """A python-xlib ``Display`` (the caller closes it), or ``None``."""
    if not os.environ.get("DISPLAY"):
        return None
    try:
        from Xlib import display

        return display.Display()
    except Exception as exc:
        log.debug("cannot open the X display: %s", clean(exc, 200))
        return None


def x_windows_by_pid(disp: Any) -> dict[int, int]:
    """pid → top-level window (the window manager's client list; without one, the root's children)."""
    from Xlib import X

    root = disp.screen().root
    net_pid = disp.intern_atom("_NET_WM_PID")
    client_list = root.get_full_property(disp.intern_atom("_NET_CLIENT_LIST"), X.AnyPropertyType)
    windows = (
        list(client_list.value) if client_list is not None else [c.id for c in root.query_tree().children]
    )
    found: dict[int, int] = {}
    for wid in windows:
        try:
            prop = disp.create_resource_object("window", wid).get_full_property(net_pid, X.AnyPropertyType)
        except Exception:
            continue
        if prop is not None and len(prop.value):
            found.setdefault(int(prop.value[0]), int(wid))
    return found


def window_for(pids: Iterable[int], windows: dict[int, int]) -> int | None:
    """The window of the first of ``pids`` (or of an ancestor of it) that has one."""
    for pid in pids:
        for p in ancestors(pid):
            if p in windows:
                return windows[p]
    return None


def active_window(disp: Any) -> int | None:
    from Xlib import X

    prop = disp.screen().root.get_full_property(disp.intern_atom("_NET_ACTIVE_WINDOW"), X.AnyPropertyType)
    if prop is None or not len(prop.value):
        return None
    return int(prop.value[0]) or None
