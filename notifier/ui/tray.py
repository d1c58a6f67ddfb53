"""The tray icon (pystray, in the main thread). It only reads immutable snapshots; clicks and menu
entries become commands (``core/commands.py``) for the app to carry out.

Backends: `gtk` on X11 when PyGObject imports (menu + left-click action), `appindicator` where a
StatusNotifierItem host runs (KDE, GNOME with the AppIndicator extension, Wayland; no left-click
action, so the menu carries everything), `xorg` as the last resort (no menu: a click opens the
window), native on macOS and Windows. No display at all: no tray.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from notifier.core.commands import Command
from notifier.core.model import Snapshot
from notifier.system.config import Config
from notifier.ui import icons
from notifier.ui.view import Entry, menu, title

log = logging.getLogger(__name__)
ICON_SIZE = 64


def _gi_gtk() -> bool:
    if importlib.util.find_spec("gi") is None:
        return False
    try:
        import gi

        gi.require_version("Gtk", "3.0")
        return True
    except (ImportError, ValueError):
        return False


def _ayatana() -> bool:
    try:
        import gi

        for name in ("AyatanaAppIndicator3", "AppIndicator3"):
            try:
                gi.require_version(name, "0.1")
                return True
            except ValueError:
                continue
    except ImportError:
        pass
    return False


def _sni_host() -> bool:
    """Is a StatusNotifierItem watcher (KDE, GNOME AppIndicator extension, …) on the session bus?"""
    try:
        from jeepney import DBusAddress, new_method_call
        from jeepney.io.blocking import open_dbus_connection
        from jeepney.wrappers import unwrap_msg
    except ImportError:
        return False
    try:
        with open_dbus_connection(bus="SESSION") as conn:
            bus = DBusAddress(
                "/org/freedesktop/DBus", bus_name="org.freedesktop.DBus", interface="org.freedesktop.DBus"
            )
            reply = conn.send_and_get_reply(
                new_method_call(bus, "NameHasOwner", "s", ("org.kde.StatusNotifierWatcher",)), timeout=2
            )
            return bool(unwrap_msg(reply)[0])
    except Exception:
        return False


def choose_backend(preference: str) -> tuple[str | None, str]:
    """(pystray backend or None for no tray, the reason in one line)."""
    if preference == "none":
        return None, "the tray is turned off (tray.backend = 'none')"
    if sys.platform == "darwin" or sys.platform.startswith("win"):
        return "native", "the native tray of this system"
    has_x = bool(os.environ.get("DISPLAY"))
    wayland = bool(os.environ.get("WAYLAND_DISPLAY"))
    if not has_x and not wayland:
        return None, "no display (DISPLAY and WAYLAND_DISPLAY are unset)"
    if preference != "auto":
        return preference, f"tray.backend = '{preference}'"
    gtk = _gi_gtk()
    if gtk and _ayatana() and _sni_host():
        return "appindicator", "a StatusNotifierItem host is running (menu; no left-click action)"
    if gtk and has_x:
        return "gtk", "X11 with PyGObject: menu and left-click action"
    if has_x:
        why = "PyGObject is not installed (install the 'gtk' extra for a menu)" if not gtk else "no GTK"
        return "xorg", f"plain X11 tray ({why}); a click opens the window"
    return None, "Wayland without a StatusNotifierItem host"


def doctor_line(config: Config) -> str:
    backend, why = choose_backend(config["tray.backend"])
    return f"[{'ok  ' if backend else 'note'}] tray: {backend or 'none'} — {why}"


class _SignalWithoutSigintReset:
    """Stands in for the ``signal`` module inside pystray's GTK helper, which sets SIGINT back to
    the default action (kill at once) when its loop starts. The app handles SIGINT itself, to
    withdraw its notifications and close its socket on the way out."""

    SIGINT = signal.SIGINT
    SIG_DFL = signal.SIG_DFL

    @staticmethod
    def signal(signum: int, handler: Any) -> Any:
        if signum == signal.SIGINT and handler == signal.SIG_DFL:
            return signal.getsignal(signal.SIGINT)
        return signal.signal(signum, handler)


def _keep_our_sigint() -> None:
    try:
        from pystray._util import gtk as pystray_gtk  # only present with the GTK backends
    except Exception:
        return
    pystray_gtk.signal = _SignalWithoutSigintReset


class Tray:
    def __init__(
        self, backend: str, execute: Callable[[Command], object], snapshot: Callable[[], Snapshot]
    ) -> None:
        if backend != "native":
            os.environ["PYSTRAY_BACKEND"] = backend
        import pystray

        _keep_our_sigint()
        self.backend = backend
        self.pystray = pystray
        self.execute = execute
        self.snapshot = snapshot
        self._shown: tuple[str, int] = ("idle", 0)
        self._title = "pi-notifier"
        self._lock = threading.Lock()
        self.icon = pystray.Icon(
            "pi-notifier",
            icon=icons.render("idle", 0, ICON_SIZE),
            title=self._title,
            menu=pystray.Menu(self._items),
        )

    # ---- menu ----

    def _items(self) -> Any:
        return [self._item(e) for e in menu(self.snapshot(), time.time())]

    def _item(self, entry: Entry) -> Any:
        p = self.pystray
        if entry.separator:
            return p.Menu.SEPARATOR
        if entry.children:
            return p.MenuItem(entry.label, p.Menu(*[self._item(c) for c in entry.children]))
        action = entry.action
        if action is None:
            return p.MenuItem(entry.label, None, enabled=False)
        return p.MenuItem(
            entry.label, lambda icon, item: self.execute(action(time.time())), default=entry.default
        )

    # ---- state ----

    def update(self, snapshot: Snapshot) -> None:
        """Called from the engine thread with each new snapshot."""
        now = time.time()
        pending = snapshot.pending_count
        snoozed = bool(snapshot.snoozed_until and snapshot.snoozed_until > now)
        working = any(s.state == "working" for s in snapshot.sessions if now - s.updated_at < 600)
        state = icons.state_for(pending, len(snapshot.abandoned), working, snoozed)
        shown = (state, pending if state == "needs" else 0)
        new_title = title(snapshot, now)
        with self._lock:
            if shown != self._shown:
                self._shown = shown
                self.icon.icon = icons.render(shown[0], shown[1], ICON_SIZE)
            if new_title != self._title:
                self._title = new_title
                self.icon.title = new_title
            if self.icon.HAS_MENU:
                self.icon.update_menu()

    @property
    def shown(self) -> tuple[str, int]:
        return self._shown

    # ---- loop ----

    def run(self, on_ready: Callable[[], None], stop_event: threading.Event) -> None:
        running = threading.Event()

        def setup(icon: Any) -> None:
            icon.visible = True
            if self.backend == "xorg":
                self._xorg_click_fix()
            running.set()
            on_ready()

        def stop_when_asked() -> None:
            stop_event.wait()
            # Stopping a loop that has not started yet does nothing (and it would then run
            # forever): wait until it runs. If it never does, icon.run() has already failed.
            running.wait(10)
            self.stop()

        threading.Thread(target=stop_when_asked, name="pi-notifier-tray-stop", daemon=True).start()
        self.icon.run(setup=setup)

    def stop(self) -> None:
        try:
            self.icon.stop()
        except Exception:
            pass

    def _xorg_click_fix(self) -> None:
        """pystray's xorg icon window does not ask for button presses, so clicks never arrive."""
        try:
            from Xlib import X

            window = self.icon._window  # noqa: SLF001
            window.change_attributes(event_mask=X.ExposureMask | X.StructureNotifyMask | X.ButtonPressMask)
            self.icon._display.flush()  # noqa: SLF001
        except Exception as exc:
            log.debug("xorg click fix not applied: %s", exc)
