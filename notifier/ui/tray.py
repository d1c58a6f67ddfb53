"""The tray icon (pystray): its loop runs on the main thread, the UI thread hands it immutable
states (``ui/state.py``: the snapshot and the user's choices); clicks and menu entries become
commands (``core/commands.py``) for the app to carry out.

Backends: `gtk` on X11 when PyGObject imports (menu + left-click action), `appindicator` where a
StatusNotifierItem host runs (KDE, GNOME with the AppIndicator extension, Wayland; no left-click
action, so the menu carries everything) unless that host also draws XEmbed icons itself (XFCE's
panel: `gtk`, so a click opens the window), `xorg` as the last resort (no menu: a click opens the
window; it runs only while an XEmbed tray host is there), native on macOS and Windows. No display
at all: no tray. Whatever needs pystray's private parts is in ``notifier/compat/pystray.py``.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from notifier.compat import pystray as compat
from notifier.core.commands import Command
from notifier.system.desktop import has_display
from notifier.ui import icons
from notifier.ui.menu import Entry, Shape, menu, shape, title
from notifier.ui.state import UiState

# Lazy imports here: gi is optional (PyGObject), pystray only once PYSTRAY_BACKEND is chosen.

log = logging.getLogger(__name__)
ICON_SIZE = 64
XORG_STOP_GRACE_S = 1.0  # then the window is destroyed from outside (compat.destroy_window)
LOOP_START_WAIT_S = 10.0  # a stop waits this long for the icon's loop to run (a stop before it is lost)


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


def tray_backend(preference: str, sni_host: bool = False, one_host: bool = False) -> tuple[str | None, str]:
    """(pystray backend or None for no tray, the reason in one line). ``sni_host``: a
    StatusNotifierItem watcher is on the session bus now; ``one_host``: one program holds both
    that watcher and the XEmbed tray (``app/tray_hosts.py`` looks). Such a host (XFCE's panel)
    draws an XEmbed icon itself and gives it the left click, which its StatusNotifierItems never
    get there: gtk. An XEmbed tray held by another program beside a watcher (KDE's
    xembedsniproxy) only relays into it: the watcher's own kind, appindicator."""
    if preference == "none":
        return None, "the tray is turned off (tray.backend = 'none')"
    if sys.platform == "darwin" or sys.platform.startswith("win"):
        return "native", "the native tray of this system"
    if not has_display():
        return None, "no display (DISPLAY and WAYLAND_DISPLAY are unset)"
    if preference != "auto":
        return preference, f"tray.backend = '{preference}'"
    gtk = _gi_gtk()
    has_x = bool(os.environ.get("DISPLAY"))
    if gtk and has_x and one_host:
        return "gtk", "X11 with PyGObject, and the tray host draws XEmbed icons itself: menu and left-click action"
    if gtk and sni_host and _ayatana():
        return "appindicator", "a StatusNotifierItem host is running (menu; no left-click action)"
    if gtk and has_x:
        return "gtk", "X11 with PyGObject: menu and left-click action"
    if has_x:
        why = "PyGObject is not installed (install the 'gtk' extra for a menu)" if not gtk else "no GTK"
        return "xorg", f"plain X11 tray ({why}); a click opens the window"
    return None, "Wayland without a StatusNotifierItem host"


def _import_pystray(backend: str) -> Any:
    """pystray, with ``backend`` (pystray reads PYSTRAY_BACKEND once, at its first import). The
    variable is set for that import only: the processes the app starts (the window, a terminal
    goto opens) must not inherit it."""
    before = os.environ.get("PYSTRAY_BACKEND")
    if backend != "native":
        os.environ["PYSTRAY_BACKEND"] = backend
    try:
        import pystray
    finally:
        if before is None:
            os.environ.pop("PYSTRAY_BACKEND", None)
        else:
            os.environ["PYSTRAY_BACKEND"] = before
    return pystray


class Hosts(Protocol):
    """The tray hosts followed while the app runs (``app/tray_follower.HostFollower``)."""

    def wait_xembed(self, there: bool, stop: threading.Event) -> bool:
        """Block until an XEmbed tray is there (or gone); False when ``stop`` is set first."""
        ...

    def wake(self) -> None:
        """Let :meth:`wait_xembed` see that ``stop`` is set."""
        ...

    def close(self) -> None: ...


class Tray:
    """The icon, on the UI thread's states. The xorg backend runs only while an XEmbed tray
    host is there (``hosts``): without one it would log a traceback at every change; when a host
    comes, a new icon docks in it, and when it goes, that icon's loop is ended. The GTK backends
    follow hosts themselves."""

    def __init__(
        self,
        backend: str,
        execute: Callable[[Command], object],
        state: Callable[[], UiState],
        hosts: Hosts | None = None,
    ) -> None:
        pystray = _import_pystray(backend)
        compat.keep_sigint()
        compat.quiet_dock_failures()
        self.backend = backend
        self.pystray = pystray
        self.execute = execute
        self.state = state  # what the menu shows when it opens
        self.hosts = hosts
        self._shown: tuple[icons.IconState, int] = ("idle", 0)
        self._title = "pi-notifier"
        self._drawn: tuple[tuple[icons.IconState, int], str] = (self._shown, self._title)  # by the icon
        self._entries: tuple[Entry, ...] | None = None  # the menu now (None: built from state())
        self._menu_drawn: Shape | None = None  # what the icon's menu shows (None: not known)
        self._lock = threading.Lock()
        self._live = backend != "xorg"  # may the icon be changed now (an xorg one: only while it runs)
        self.icon = self._new_icon()

    def _new_icon(self) -> Any:
        """(With the lock held, or before the loop runs.)"""
        self._drawn = (self._shown, self._title)
        self._menu_drawn = None if self._entries is None else shape(self._entries)
        icon = self.pystray.Icon(
            "pi-notifier",
            icon=icons.render(self._shown[0], self._shown[1], ICON_SIZE),
            title=self._title,
            menu=self.pystray.Menu(self._items),
        )
        if self.backend == "xorg":
            compat.dock_once(icon)
            compat.accept_clicks(icon)  # (before the loop runs: only its thread uses its connection)
            compat.calls_over_own_connection(icon)
        return icon

    # ---- menu ----

    def _items(self) -> Any:
        """(pystray calls it when it builds the menu: at the start, and at each update_menu.)"""
        entries = self._entries
        if entries is None:
            entries = menu(self.state(), time.time())
        return [self._item(e) for e in entries]

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

    def update(self, ui: UiState, quiet_hours: str = "") -> None:
        """Called from the UI thread with each new state (and when an age in the menu ticks
        over). An xorg icon whose loop does not run (no tray host) is not touched: the next one
        starts with what is shown now. ``quiet_hours``: the config's, said while in effect."""
        now, snapshot = time.time(), ui.snapshot
        pending = snapshot.pending_count
        snoozed = ui.snoozed_until(now) is not None
        recent = now - icons.WORKING_RECENT_S
        working = any(s.state == "working" and s.updated_at > recent for s in snapshot.sessions)
        state = icons.state_for(pending, len(snapshot.abandoned), working, snoozed)
        shown = (state, pending if state == "needs" else 0)
        new_title = title(ui, now, quiet_hours)
        entries = menu(ui, now)
        with self._lock:
            self._shown, self._title, self._entries = shown, new_title, entries
            if not self._live:
                return
            drawn, drawn_title = self._drawn
            self._drawn = (shown, new_title)
            if shown != drawn:
                self.icon.icon = icons.render(shown[0], shown[1], ICON_SIZE)
            if new_title != drawn_title:
                self.icon.title = new_title
            # The menu only when it reads differently: a host re-reads it whole (XFCE's panel
            # closes it if open), so an update with nothing new in it is never sent.
            if self.icon.HAS_MENU and shape(entries) != self._menu_drawn:
                self._menu_drawn = shape(entries)
                self.icon.update_menu()

    # ---- loop ----

    def run(self, on_ready: Callable[[], None], stop_event: threading.Event) -> None:
        """The icon's loop, on the main thread, until ``stop_event`` is set; then the hosts are
        no longer followed."""
        try:
            if self.backend == "xorg" and self.hosts is not None:
                self._run_xorg(on_ready, stop_event, self.hosts)
            else:
                self._run_gtk(on_ready, stop_event)
        finally:
            if self.hosts is not None:
                self.hosts.close()

    def _run_gtk(self, on_ready: Callable[[], None], stop_event: threading.Event) -> None:
        """Every backend but xorg (and xorg without hosts to follow): they dock by themselves."""
        running = threading.Event()

        def setup(icon: Any) -> None:
            icon.visible = True
            running.set()
            on_ready()

        def stop_when_asked() -> None:
            stop_event.wait()
            # Stopping a loop that has not started yet does nothing (and it would then run
            # forever): wait until it runs. If it never does, icon.run() has already failed.
            running.wait(LOOP_START_WAIT_S)
            self.stop()

        threading.Thread(target=stop_when_asked, name="pi-notifier-tray-stop", daemon=True).start()
        self.icon.run(setup=setup)

    def _run_xorg(self, on_ready: Callable[[], None], stop_event: threading.Event, hosts: Hosts) -> None:
        def wake_on_stop() -> None:
            stop_event.wait()
            hosts.wake()

        threading.Thread(target=wake_on_stop, name="pi-notifier-tray-stop", daemon=True).start()
        first = True
        while not stop_event.is_set():
            if not hosts.wait_xembed(True, stop_event):
                return
            if not first:
                with self._lock:
                    self.icon = self._new_icon()
            first = False
            self._run_xorg_icon(self.icon, on_ready, stop_event, hosts)

    def _run_xorg_icon(
        self, icon: Any, on_ready: Callable[[], None], stop_event: threading.Event, hosts: Hosts
    ) -> None:
        """One icon's loop: until the app stops or the tray host goes."""
        running, ended = threading.Event(), threading.Event()

        def setup(icon: Any) -> None:
            icon.visible = True
            with self._lock:
                self._live = True
            running.set()
            on_ready()  # (draws what changed before this icon ran)

        def stop_when_gone_or_asked() -> None:
            hosts.wait_xembed(False, stop_event)
            running.wait(LOOP_START_WAIT_S)
            with self._lock:  # no change is sent to a loop that is ending (it would wait forever)
                self._live = False
            self._stop_xorg(icon, ended)

        threading.Thread(target=stop_when_gone_or_asked, name="pi-notifier-tray-stop", daemon=True).start()
        try:
            icon.run(setup=setup)
        finally:
            ended.set()
            with self._lock:
                self._live = False

    @staticmethod
    def _stop_xorg(icon: Any, ended: threading.Event) -> None:
        wid = compat.window_id(icon)
        threading.Thread(target=icon.stop, name="pi-notifier-tray-stopping", daemon=True).start()
        if not ended.wait(XORG_STOP_GRACE_S) and wid is not None:
            log.debug("the xorg tray loop did not end %.0f s after stop: its window is destroyed", XORG_STOP_GRACE_S)
            compat.destroy_window(wid)

    def stop(self) -> None:
        try:
            self.icon.stop()
        except Exception:
            pass
