"""The focus method here: what can list the desktop's windows by process, tell which one is
focused and focus one. The compositor where it offers an interface (sway IPC), X11 EWMH where
there is an X display; elsewhere :class:`Missing` says in one line what is missing (GNOME Shell
on Wayland offers no public interface for it; KWin's scripting is not used yet). Hyprland's IPC
is used where its socket is found (not tried against a running Hyprland here); KWin on Wayland
through its scripting interface on the session bus (:mod:`notifier.system.kwin`)."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from notifier.core.text import clean
from notifier.system import x11

# (swayipc, which imports socket, hyprland and kwin are imported where they are used: `status`
# locates sessions through this module and imports no more than it needs, about 3 ms less;
# tests/processes/test_imports.py)

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Window:
    """A window as a focus method knows it: ``via`` "sway" (a con id), "hyprland" (a window
    address), "kwin" (the window's pid) or "x11" (an X11 window id)."""

    via: str
    id: int

    def obj(self) -> dict[str, Any]:
        return {"via": self.via, "id": self.id}

    def describe(self) -> str:
        if self.via == "kwin":
            return f"KWin window of pid {self.id}"
        return f"{self.via} window {self.id}" if self.via != "x11" else f"window 0x{self.id:x}"


class Missing:
    """No focus method: ``reason`` says what is missing, in a clause ("GNOME Shell on Wayland
    offers no public interface to focus a window")."""

    name = "none"

    def __init__(self, reason: str) -> None:
        self.reason = reason


class Sway:
    """sway through its IPC socket."""

    via = "sway"
    name = "sway IPC"

    def __init__(self, path: str) -> None:
        self.path = path
        self.limits: str | None = None

    def _tree(self) -> dict[str, Any]:
        from notifier.system import swayipc

        with swayipc.Connection(self.path) as conn:
            return conn.tree()

    def windows(self) -> dict[int, int]:
        from notifier.system import swayipc

        return swayipc.views_by_pid(self._tree())

    def focused(self) -> tuple[int, int] | None:
        from notifier.system import swayipc

        return swayipc.focused_view(self._tree())

    def activate(self, wid: int, timeout: float = x11.ACTIVATE_TIMEOUT_S) -> bool:
        """``[con_id=N] focus`` (a command: unlike an X11 client's request, never only "urgent"),
        then checked in the tree."""
        from notifier.system import swayipc

        with swayipc.Connection(self.path, timeout) as conn:
            if not conn.command(f"[con_id={int(wid)}] focus"):
                return False
            now = swayipc.focused_view(conn.tree())
        return now is not None and now[0] == wid


class Hyprland:
    """Hyprland through its request socket (:mod:`notifier.system.hyprland`)."""

    via = "hyprland"
    name = "Hyprland IPC"

    def __init__(self, path: str) -> None:
        self.path = path
        self.limits: str | None = None

    def windows(self) -> dict[int, int]:
        from notifier.system import hyprland

        return hyprland.clients_by_pid(hyprland.request(self.path, "j/clients"))

    def focused(self) -> tuple[int, int] | None:
        from notifier.system import hyprland

        return hyprland.active_window(hyprland.request(self.path, "j/activewindow"))

    def activate(self, wid: int, timeout: float = x11.ACTIVATE_TIMEOUT_S) -> bool:
        from notifier.system import hyprland

        if hyprland.request(self.path, hyprland.focus_command(wid), timeout).strip() != "ok":
            return False
        now = self.focused()
        return now is not None and now[0] == wid


class KWin:
    """KWin through scripts it runs (:mod:`notifier.system.kwin`): a window is named by its pid."""

    via = "kwin"
    name = "KWin scripting"
    path = "org.kde.KWin on the session bus"

    def __init__(self) -> None:
        self.limits: str | None = None

    def windows(self) -> dict[int, int]:
        from notifier.system import kwin

        return kwin.windows_by_pid(kwin.run_script())

    def focused(self) -> tuple[int, int] | None:
        from notifier.system import kwin

        return kwin.active_window(kwin.run_script())

    def activate(self, wid: int, timeout: float = x11.ACTIVATE_TIMEOUT_S) -> bool:
        """``workspace.activeClient = …`` in a script, then checked until ``timeout``."""

        from notifier.system import kwin

        deadline = time.monotonic() + timeout
        if not kwin.run_script(int(wid), timeout)["asked"]:
            return False  # (no window of that process)
        while True:
            now = kwin.active_window(kwin.run_script(timeout=max(0.5, deadline - time.monotonic())))
            if now == (wid, wid):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)


class X11:
    """EWMH: ``_NET_CLIENT_LIST`` / ``_NET_WM_PID``, ``_NET_ACTIVE_WINDOW``."""

    via = "x11"
    name = "X11 EWMH"

    def __init__(self, limits: str | None = None) -> None:
        self.limits = limits  # what it cannot see (a Wayland desktop's own windows)

    def _with(self, fn: Callable[[Any], Any]) -> Any:
        disp = x11.open_display()
        if disp is None:
            raise OSError("cannot open the X display")
        try:
            return fn(disp)
        finally:
            disp.close()

    def windows(self) -> dict[int, int]:
        found: dict[int, int] = self._with(x11.x_windows_by_pid)
        return found

    def focused(self) -> tuple[int, int] | None:
        def get(disp: Any) -> tuple[int, int] | None:
            wid = x11.active_window(disp)
            pid = x11.window_pid(disp, wid) if wid else None
            return (wid, pid) if wid and pid else None

        found: tuple[int, int] | None = self._with(get)
        return found

    def activate(self, wid: int, timeout: float = x11.ACTIVATE_TIMEOUT_S) -> bool:
        return x11.activate_window(wid, timeout)


Method = Sway | Hyprland | KWin | X11


def _wayland_desktop(env: dict[str, str]) -> str:
    desktops = (env.get("XDG_CURRENT_DESKTOP") or "").lower()
    if env.get("HYPRLAND_INSTANCE_SIGNATURE") or "hyprland" in desktops:
        return "Hyprland's IPC socket was not found"
    if "gnome" in desktops:
        return "GNOME Shell on Wayland offers no public interface to focus a window"
    name = clean(env.get("XDG_CURRENT_DESKTOP") or "this Wayland compositor", 40)
    return f"{name} offers no interface pi-notifier knows to focus a window (it knows sway's IPC)"


def _is_kde(env: dict[str, str]) -> bool:
    desktops = (env.get("XDG_CURRENT_DESKTOP") or "").lower().split(":")
    return "kde" in desktops or bool(env.get("KDE_FULL_SESSION"))


def has_display(env: Mapping[str, str] | None = None) -> bool:
    """Whether there is a display (X11 or Wayland) in ``env`` (default: ours) for a window, a tray
    or a terminal to show on."""
    env = os.environ if env is None else env
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def focus_method(env: dict[str, str] | None = None) -> Method | Missing:
    """The best focus method here (cheap: an environment look-up and a glob)."""
    from notifier.system import swayipc

    env = dict(os.environ) if env is None else env
    path = swayipc.socket_path(env)
    if path is not None:
        return Sway(path)
    from notifier.system import hyprland

    hypr = hyprland.socket_path(env)
    if hypr is not None:
        return Hyprland(hypr)
    wayland = bool(env.get("WAYLAND_DISPLAY"))
    if wayland and _is_kde(env):
        return KWin()
    if env.get("DISPLAY"):
        return X11(f"{_wayland_desktop(env)}: only X11 windows (XWayland) can be" if wayland else None)
    if wayland:
        return Missing(_wayland_desktop(env))
    return Missing("no display here to raise a terminal on (DISPLAY and WAYLAND_DISPLAY are unset)")


def describe(method: Method | Missing) -> tuple[bool | None, str]:
    """For ``doctor``: (ok, detail) of the focus method, after asking it which window is focused
    (OK only when it answered)."""
    if isinstance(method, Missing):
        return None, f"none: {method.reason}; goto selects the tmux pane and says so"
    try:
        front = method.focused()
        windows = method.windows()
    except Exception as exc:
        return False, f"{method.name} did not answer ({clean(exc, 120)})"
    if isinstance(method, X11):
        where = f"display {clean(os.environ.get('DISPLAY'), 20)}"
    else:
        where = method.path if isinstance(method, KWin) else f"socket {clean(method.path, 120)}"
    said = f"{method.name} ({where}): {len(windows)} window(s) by process, "
    said += f"focused: pid {front[1]}" if front else "focused: none"
    if method.limits:
        said += f"; {method.limits}"
    return True, said
