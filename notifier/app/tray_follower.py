"""The tray hosts (:mod:`.tray_hosts`) followed while the app runs, as they come and go, on threads
of their own. X: XFixes tells when the tray selection's owner changes (no wake-ups while nothing
happens; a 2 s poll where the server lacks XFixes). The bus: ``NameOwnerChanged`` through the app's
one bus client (``sinks/notify/bus.py``)."""

from __future__ import annotations

import contextlib
import logging
import os
import select
import threading
from collections.abc import Callable
from typing import Any

from notifier.app.tray_hosts import WATCHER, Hosts, bus_call, sni_owner, tray_selection, xembed_owner
from notifier.core.text import clean
from notifier.sinks.notify.bus import Bus, BusError
from notifier.system.desktop import open_display

log = logging.getLogger(__name__)

POLL_WITHOUT_XFIXES_S = 2.0
_WATCHER_OWNER_CHANGED = (
    "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
    f"member='NameOwnerChanged',arg0='{WATCHER}'"
)


class HostFollower:
    """Follows both kinds of tray host. :meth:`wait` blocks until a condition on :attr:`hosts`
    holds; ``on_change(hosts)`` runs after each change."""

    def __init__(self, on_change: Callable[[Hosts], None] | None = None) -> None:
        self.on_change = on_change
        self._cond = threading.Condition()
        self._hosts = Hosts()
        self._stopped = False
        self._wake_r, self._wake_w = os.pipe()  # (ends the X thread's select)
        self._bus: Any = None
        self._disp: Any = None
        self._x_thread: threading.Thread | None = None

    @property
    def hosts(self) -> Hosts:
        with self._cond:
            return self._hosts

    def start(self) -> Hosts:
        """Look once (both, before returning; ``on_change`` is told), then follow. Returns what
        runs now."""
        xembed = sni = None
        self._disp = open_display()
        if self._disp is not None:
            try:
                xembed = xembed_owner(self._disp)
            except Exception as exc:
                log.debug("cannot follow the XEmbed tray: %s", clean(exc, 200))
                self._close_display()
        try:
            self._bus = Bus(self._on_signal, self._on_bus_lost)
            bus_call(self._bus, "AddMatch", "s", (_WATCHER_OWNER_CHANGED,))
            sni = sni_owner(self._bus)
        except (BusError, ImportError, TimeoutError) as exc:
            log.debug("cannot follow StatusNotifierItem watchers: %s", clean(exc, 200))
        with self._cond:
            self._hosts = Hosts(xembed, sni)
        if self.on_change is not None:
            self.on_change(self.hosts)
        if self._disp is not None:
            self._x_thread = threading.Thread(target=self._follow_x, name="pi-notifier-tray-hosts", daemon=True)
            self._x_thread.start()
        return self.hosts

    def wait(self, until: Callable[[Hosts], bool], stop: threading.Event) -> bool:
        """Block until ``until(hosts)`` holds (True) or ``stop`` is set and :meth:`wake` called
        (False)."""
        with self._cond:
            while not stop.is_set() and not self._stopped:
                if until(self._hosts):
                    return True
                self._cond.wait()
            return False

    def wait_xembed(self, there: bool, stop: threading.Event) -> bool:
        return self.wait(lambda hosts: (hosts.xembed is not None) == there, stop)

    def wake(self) -> None:
        """Let every :meth:`wait` look at its stop event again."""
        with self._cond:
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")
        if self._x_thread is not None:
            self._x_thread.join(2)
        if self._bus is not None:
            self._bus.close()
        if self._x_thread is None or not self._x_thread.is_alive():
            self._close_display()
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _close_display(self) -> None:
        if self._disp is not None:
            with contextlib.suppress(Exception):
                self._disp.close()
            self._disp = None

    def _set(self, **change: str | None) -> None:
        with self._cond:
            new = self._hosts._replace(**change)
            if new == self._hosts or self._stopped:
                return
            self._hosts = new
            self._cond.notify_all()
        if self.on_change is not None:
            try:
                self.on_change(new)
            except Exception:
                log.exception("reacting to a tray host change failed")

    def _follow_x(self) -> None:
        disp = self._disp
        timeout: float | None = None
        try:
            if disp.has_extension("XFIXES"):
                from Xlib.ext import xfixes  # (here: Xlib is Linux only)

                disp.xfixes_query_version()
                mask = (
                    xfixes.XFixesSetSelectionOwnerNotifyMask
                    | xfixes.XFixesSelectionWindowDestroyNotifyMask
                    | xfixes.XFixesSelectionClientCloseNotifyMask
                )
                disp.xfixes_select_selection_input(disp.screen().root, tray_selection(disp), mask)
                disp.flush()
            else:
                timeout = POLL_WITHOUT_XFIXES_S
            self._set(xembed=xembed_owner(disp))  # a change between start() and the selection
            while not self._stopped:
                ready, _, _ = select.select([disp.fileno(), self._wake_r], [], [], timeout)
                if self._wake_r in ready or self._stopped:
                    return
                while disp.pending_events():
                    disp.next_event()  # which event does not matter: the owner is asked again
                self._set(xembed=xembed_owner(disp))
        except Exception as exc:  # the X server went away
            if not self._stopped:
                log.debug("stopped following the XEmbed tray: %s", clean(exc, 200))
                self._set(xembed=None)

    def _on_signal(self, message: Any) -> None:
        body = message.body
        if len(body) == 3 and body[0] == WATCHER:
            new_owner = clean(str(body[2]), 60)
            if not new_owner:
                self._set(sni=None)
                return
            try:
                self._set(sni=sni_owner(self._bus) or new_owner)
            except Exception:
                self._set(sni=new_owner)

    def _on_bus_lost(self) -> None:
        log.debug("the session bus went away: StatusNotifierItem watchers are no longer followed")
        self._set(sni=None)
