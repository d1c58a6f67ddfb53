"""Which tray hosts run on this desktop: an XEmbed system tray (the owner of the X selection
``_NET_SYSTEM_TRAY_S<screen>``: trayer, tint2, xfce4-panel, …) and a StatusNotifierItem watcher (the
owner of ``org.kde.StatusNotifierWatcher`` on the session bus: KDE, GNOME's AppIndicator extension,
waybar, …): asked once (:func:`look`, for ``doctor`` and the choice of backend), followed while the
app runs (:class:`HostFollower`: XFixes tells when the tray selection's owner changes, with no
wake-ups while nothing happens, a 2 s poll where the server lacks XFixes, read on the app's outputs
thread; the bus's ``NameOwnerChanged`` through the app's one bus client), and each change said
once in the log (:class:`HostLog`)."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

from notifier.core.text import clean
from notifier.outputs.dbus import BUS_NAME, Bus, BusError, name_owner, pid_of
from notifier.system.supervisor import Worker
from notifier.system.window_manager import open_display

log = logging.getLogger(__name__)

WATCHER = "org.kde.StatusNotifierWatcher"
KINDS = ("XEmbed system tray", "StatusNotifierItem watcher")  # (in the order of :class:`Hosts`)


class Hosts(NamedTuple):
    """What runs now: the program holding each kind of tray (its name), or None."""

    xembed: str | None = None
    sni: str | None = None

    @property
    def one(self) -> bool:
        """One program holds both trays (it draws XEmbed icons itself, e.g. XFCE's panel), not a
        relay of one into the other."""
        return self.xembed is not None and self.xembed == self.sni

    def describe(self) -> str:
        said = [f"{name} ({kind})" for name, kind in zip(self, KINDS, strict=True) if name]
        return " and ".join(said) or "none"


NO_HOST_WHY = "no program owns the XEmbed tray selection and no StatusNotifierWatcher is on the session bus"


def _program(pid: int) -> str | None:
    """The program name of ``pid`` (argv[0]'s base name, which comm may cut at 15 characters)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv0 = fh.read().split(b"\0", 1)[0].decode(errors="replace")
        if argv0:
            return clean(os.path.basename(argv0), 60)
        with open(f"/proc/{pid}/comm") as fh:
            return clean(fh.read().strip(), 60) or None
    except OSError:
        return None


# ---- XEmbed: the X selection ----


def tray_selection(disp: Any) -> Any:
    return disp.intern_atom(f"_NET_SYSTEM_TRAY_S{disp.get_default_screen()}")


def xembed_owner(disp: Any) -> str | None:
    """The program that owns this screen's system tray selection (its name, else its window's
    name, else the window id), or None when nothing owns it."""
    from Xlib import X

    owner = disp.get_selection_owner(tray_selection(disp))
    if owner is None or owner == X.NONE or not getattr(owner, "id", 0):
        return None
    with contextlib.suppress(Exception):  # (the owner went away while we looked: still "a tray", unnamed)
        prop = owner.get_full_property(disp.intern_atom("_NET_WM_PID"), X.AnyPropertyType)
        pid = int(prop.value[0]) if prop is not None and len(prop.value) else 0
        name = (_program(pid) if pid else None) or clean(owner.get_wm_name(), 60)
        if name:
            return name
    return f"window {owner.id:#x}"


# ---- StatusNotifierItem: the session bus ----


def sni_owner(bus: Bus, timeout: float = 2.0) -> str | None:
    """The program that owns the StatusNotifierWatcher name, or None."""
    unique = name_owner(bus, WATCHER, timeout)
    if unique is None:
        return None
    pid = pid_of(bus, unique, timeout)
    return (_program(pid) if pid else None) or clean(unique, 60)


# ---- one look, for doctor and the choice of backend ----


def look() -> tuple[Hosts, list[str]]:
    """What runs now, and what could not be asked (each one phrase), e.g. for ``doctor``."""
    unasked: list[str] = []

    def ask(who: str, connection: Any, owner: Callable[[Any], str | None]) -> str | None:
        """``owner(connection)``, the connection closed after."""
        try:
            return owner(connection)
        except Exception as exc:
            unasked.append(f"{who} did not answer ({clean(exc, 100)})")
            return None
        finally:
            connection.close()

    disp, bus = open_display(), None
    if disp is None:
        unasked.append("no X display (the XEmbed tray was not asked)")
    xembed = None if disp is None else ask("the X server", disp, xembed_owner)
    try:
        bus = Bus()
    except (BusError, ImportError) as exc:
        unasked.append(no_bus(exc))
    sni = None if bus is None else ask("the session bus", bus, sni_owner)
    return Hosts(xembed, sni), unasked


class HostLog:
    """Says what tray host there is once at start, then once per change."""

    def __init__(self) -> None:
        self.last: Hosts | None = None
        self._lock = threading.Lock()

    def __call__(self, hosts: Hosts) -> None:
        with self._lock:
            last, self.last = self.last, hosts
        if hosts == last:
            return
        if last is None:
            if hosts.xembed or hosts.sni:
                log.info("tray host: %s", hosts.describe())
            else:
                log.warning(
                    "no tray host (%s): the icon appears when one starts; notifications and the window work without it",
                    NO_HOST_WHY,
                )
            return
        for kind, was, now in zip(KINDS, last, hosts, strict=True):
            if was == now:
                continue
            if now and was:
                log.info("tray host: %s (%s) took over from %s", now, kind, was)
            elif now:
                log.info("tray host appeared: %s (%s)", now, kind)
            else:
                log.warning(
                    "tray host gone: %s (%s)%s",
                    was,
                    kind,
                    "" if hosts.xembed or hosts.sni else "; the icon comes back when a tray host starts",
                )


def no_bus(exc: Exception) -> str:
    """Why the StatusNotifierWatcher was not asked: no session bus (said once, whether or not the
    bus's own error says so already)."""
    said = clean(exc, 100)
    return said if said.startswith("no session bus") else f"no session bus ({said})"


# ---- followed while the app runs ----

POLL_WITHOUT_XFIXES_S = 2.0


class HostFollower:
    """Follows both kinds of tray host: :meth:`start` looks once, :meth:`follow` follows on a
    worker's thread (the app's outputs thread: XFIXES tells when the tray selection's owner
    changes, read when the X display's file is ready, else it is asked every 2 s; the bus's
    ``NameOwnerChanged`` through the one bus client, read there too). :meth:`wait` blocks until a
    condition on :attr:`hosts` holds; ``on_change(hosts)`` and each :meth:`listen`er run after
    each change."""

    def __init__(self, on_change: Callable[[Hosts], None] | None = None) -> None:
        self._listeners = [] if on_change is None else [on_change]
        self._cond = threading.Condition()
        self._hosts = Hosts()
        self._stopped = False
        self._bus: Bus | None = None
        self._disp: Any = None
        self._x_lock = threading.Lock()  # (the display: read on the worker, closed from anywhere)
        self._worker: Worker | None = None

    @property
    def hosts(self) -> Hosts:
        with self._cond:
            return self._hosts

    def start(self) -> Hosts:
        """Look once (``on_change`` is told); what runs now."""
        hosts, _ = look()
        self._set(**hosts._asdict(), force=True)
        return hosts

    def follow(self, worker: Worker) -> None:
        """Follow both from now on, read on ``worker``'s thread (the hosts are asked again)."""
        self._worker = worker
        disp = open_display()
        if disp is not None:
            try:
                told = disp.has_extension("XFIXES")
                if told:  # XFIXES tells when the tray selection's owner changes (else: asked every 2 s)
                    from Xlib.ext import xfixes  # (here: Xlib is Linux only)

                    disp.xfixes_query_version()
                    mask = (
                        xfixes.XFixesSetSelectionOwnerNotifyMask
                        | xfixes.XFixesSelectionWindowDestroyNotifyMask
                        | xfixes.XFixesSelectionClientCloseNotifyMask
                    )
                    disp.xfixes_select_selection_input(disp.screen().root, tray_selection(disp), mask)
                    disp.flush()
                self._set(xembed=xembed_owner(disp))
                self._disp = disp
                worker.watch(disp.fileno(), self.follow_x, every=None if told else POLL_WITHOUT_XFIXES_S)
            except Exception as exc:
                log.debug("cannot follow the XEmbed tray: %s", exc)
                disp.close()
        try:
            from jeepney.bus_messages import MatchRule, message_bus

            self._bus = Bus(self._on_signal, self._on_bus_lost, worker=worker)
            rule = MatchRule(type="signal", sender=BUS_NAME, interface=BUS_NAME, member="NameOwnerChanged")
            rule.add_arg_condition(0, WATCHER)
            self._bus.ask(message_bus.AddMatch(rule), 2.0)
            self._set(sni=sni_owner(self._bus))
        except Exception as exc:  # (no bus, or it does not answer)
            log.debug("cannot follow StatusNotifierItem watchers: %s", exc)

    def listen(self, on_change: Callable[[Hosts], None]) -> None:
        """Also call ``on_change(hosts)`` after each change (where the change is seen)."""
        self._listeners.append(on_change)

    def wait(self, until: Callable[[Hosts], bool], stop: threading.Event) -> bool:
        """Block until ``until(hosts)`` holds (True) or ``stop`` is set and :meth:`wake` called
        (False)."""
        with self._cond:
            while not stop.is_set() and not self._stopped:
                if until(self._hosts):
                    return True
                self._cond.wait()
            return False

    def wake(self) -> None:
        """Let every :meth:`wait` look at its stop event again."""
        with self._cond:
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        self._close_display()
        if self._bus is not None:
            self._bus.close()

    def follow_x(self) -> None:
        """(The worker: the X display's file is ready.) Read what the X server said and ask who
        owns the tray now."""
        with self._x_lock:
            disp = self._disp
            if disp is None:
                return
            try:
                while disp.pending_events():
                    disp.next_event()  # which event does not matter: the owner is asked again
                owner = xembed_owner(disp)
            except Exception as exc:  # the X server went away
                log.debug("stopped following the XEmbed tray: %s", exc)
                owner = None
                disp = None
        if disp is None:
            self._close_display()
        self._set(xembed=owner)

    def _close_display(self) -> None:
        with self._x_lock:
            disp, self._disp = self._disp, None
            if disp is None:
                return
            if self._worker is not None:
                self._worker.unwatch(disp.fileno())
            with contextlib.suppress(Exception):
                disp.close()

    def _set(self, force: bool = False, **change: str | None) -> None:
        with self._cond:
            new = self._hosts._replace(**change)
            if (new == self._hosts and not force) or self._stopped:
                return
            self._hosts = new
            self._cond.notify_all()
        for react in self._listeners:
            try:
                react(new)
            except Exception:
                log.exception("reacting to a tray host change failed")

    def _on_signal(self, message: Any) -> None:
        body = message.body
        if len(body) == 3 and body[0] == WATCHER:
            new_owner = clean(str(body[2]), 60) or None
            if new_owner and self._bus is not None:
                with contextlib.suppress(Exception):  # (named by its process where the bus says)
                    new_owner = sni_owner(self._bus) or new_owner
            self._set(sni=new_owner)

    def _on_bus_lost(self) -> None:
        log.debug("the session bus went away: StatusNotifierItem watchers are no longer followed")
        self._set(sni=None)
