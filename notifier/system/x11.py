"""X11 windows through the window manager's EWMH properties: the top-level window of each process
(``_NET_WM_PID`` among ``_NET_CLIENT_LIST``) and the active window. ``WINDOWID`` is not trusted
(tmux copies it into panes, so it can name a long-gone window). Without ``DISPLAY`` or python-xlib
there is no display (``None``). Where a Wayland desktop runs XWayland for X11 clients but this
process was started without ``DISPLAY``, :func:`xwayland_display` finds it (the window is Tk: X
only)."""

from __future__ import annotations

import glob
import logging
import os
import time
from collections.abc import Iterable
from typing import Any

from notifier.core.text import clean, number
from notifier.system.processes import ancestors

# Lazy imports here: Xlib is a Linux-only dependency and this module loads on every OS; swayipc
# (which imports socket) because status loads this module (as system/desktop.py says).

log = logging.getLogger(__name__)


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


def window_pid(disp: Any, wid: int) -> int | None:
    """The ``_NET_WM_PID`` of a window (``None`` when it has none)."""
    from Xlib import X

    try:
        prop = disp.create_resource_object("window", wid).get_full_property(
            disp.intern_atom("_NET_WM_PID"), X.AnyPropertyType
        )
    except Exception:
        return None
    return int(prop.value[0]) if prop is not None and len(prop.value) else None


ACTIVATE_TIMEOUT_S = 3.0


def _ewmh_activate(d: Any, wid: int) -> None:
    from Xlib import X
    from Xlib.protocol import event

    root = d.screen().root
    window = d.create_resource_object("window", wid)
    mask = X.SubstructureRedirectMask | X.SubstructureNotifyMask

    def send(win: Any, atom: str, data: list[int]) -> None:
        msg = event.ClientMessage(
            window=win, client_type=d.intern_atom(atom), data=(32, data + [0] * (5 - len(data)))
        )
        root.send_event(msg, event_mask=mask)

    try:
        desktop = window.get_full_property(d.intern_atom("_NET_WM_DESKTOP"), X.AnyPropertyType)
        if desktop is not None and len(desktop.value) and int(desktop.value[0]) != 0xFFFFFFFF:
            send(root, "_NET_CURRENT_DESKTOP", [int(desktop.value[0]), X.CurrentTime])
    except Exception:
        pass
    send(window, "_NET_ACTIVE_WINDOW", [2, X.CurrentTime, active_window(d) or 0])  # 2 = a pager asks
    d.flush()


def activate_window(wid: int, timeout: float = ACTIVATE_TIMEOUT_S) -> bool:
    """Ask the window manager to raise and focus ``wid``; True once it is the active window."""
    disp = open_display()
    if disp is None:
        return False
    try:
        _ewmh_activate(disp, wid)
        deadline = time.monotonic() + timeout
        delay = 0.005
        while time.monotonic() < deadline:
            if active_window(disp) == wid:
                return True
            time.sleep(delay)
            delay = min(delay * 2, 0.1)
        return active_window(disp) == wid
    except Exception as exc:
        log.debug("activating window 0x%x failed: %s", wid, clean(exc, 200))
        return False
    finally:
        disp.close()


# ---- the X display for the window (Tk) ----


def lock_pid(text: str) -> int | None:
    """The pid an X server's lock file (``/tmp/.X<N>-lock``) holds: ten digits, space padded
    (wlroots writes a NUL after them)."""
    text = text.strip(" \n\x00")
    return number(text)


def xwayland_display(compositor: int | None, tmp: str = "/tmp") -> str | None:
    """The X display (":N") the Wayland compositor ``compositor`` (a pid) serves through
    XWayland: the lock file of a display held by it (wlroots starts XWayland on demand and holds
    the display itself; mutter writes its own pid too) or by an Xwayland it started (KWin)."""
    if compositor is None:
        return None
    for path in sorted(glob.glob(os.path.join(tmp, ".X*-lock"))):
        display = os.path.basename(path)[2:-5]
        try:
            with open(path) as fh:
                pid = lock_pid(fh.read(64))
        except OSError:
            continue
        if number(display) is None or pid is None:
            continue
        held = pid == compositor or _parent(pid) == compositor
        if held and os.path.exists(os.path.join(tmp, ".X11-unix", f"X{display}")):
            return f":{display}"
    return None


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return int(fh.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def window_display(env: dict[str, str] | None = None) -> tuple[dict[str, str] | None, str]:
    """Where the Tk window can open: (the environment variables to give it, what they are, in
    words), or (``None``, why it cannot, in one line)."""
    env = dict(os.environ) if env is None else env
    if env.get("DISPLAY"):
        return {}, f"X display {clean(env['DISPLAY'], 40)}"
    if not env.get("WAYLAND_DISPLAY"):
        return None, "no display to show the window on (DISPLAY and WAYLAND_DISPLAY are unset)"
    from notifier.system.swayipc import wayland_server_pid

    found = xwayland_display(wayland_server_pid(env))
    if found is None:
        return None, (
            "the window needs X (Tk) and this Wayland desktop offers no XWayland"
            " (sway: 'xwayland enable'); notifications and the tray still work"
        )
    extra = {"DISPLAY": found}
    runtime = glob.escape(env.get("XDG_RUNTIME_DIR") or "/nonexistent")
    auth = sorted(glob.glob(os.path.join(runtime, ".mutter-Xwaylandauth.*")))
    if auth and not env.get("XAUTHORITY"):
        extra["XAUTHORITY"] = auth[-1]  # GNOME's XWayland asks for its cookie
    return extra, f"XWayland display {found} of the Wayland compositor (DISPLAY was unset)"
