"""Which tray hosts run on this desktop: an XEmbed system tray (the owner of the X selection
``_NET_SYSTEM_TRAY_S<screen>``: trayer, tint2, xfce4-panel, …) and a StatusNotifierItem watcher (the
owner of ``org.kde.StatusNotifierWatcher`` on the session bus: KDE, GNOME's AppIndicator extension,
waybar, …), asked once (:func:`look`), and how a change of them is said in the log (:class:`HostLog`,
once per change). Followed while the app runs: :mod:`.tray_follower`."""

from __future__ import annotations

import logging
import os
import threading
from typing import Any, NamedTuple

from notifier.core.text import clean

log = logging.getLogger(__name__)

WATCHER = "org.kde.StatusNotifierWatcher"
_DBUS = ("/org/freedesktop/DBus", "org.freedesktop.DBus", "org.freedesktop.DBus")


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
        said = []
        if self.xembed:
            said.append(f"{self.xembed} (XEmbed system tray)")
        if self.sni:
            said.append(f"{self.sni} (StatusNotifierItem watcher)")
        return " and ".join(said) if said else "none"


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
    try:
        prop = owner.get_full_property(disp.intern_atom("_NET_WM_PID"), X.AnyPropertyType)
        if prop is not None and len(prop.value):
            name = _program(int(prop.value[0]))
            if name:
                return name
        wm_name = owner.get_wm_name()
        if wm_name:
            return clean(str(wm_name), 60)
    except Exception:  # the owner went away while we looked: still "a tray", unnamed
        pass
    return f"window {owner.id:#x}"


# ---- StatusNotifierItem: the session bus ----


def bus_call(bus: Any, member: str, signature: str, body: tuple[Any, ...], timeout: float = 2.0) -> Any:
    """A call to the bus itself through the app's bus client; the error name or the body."""
    from jeepney import DBusAddress, MessageType, new_method_call

    path, name, interface = _DBUS
    reply = bus.call(new_method_call(DBusAddress(path, name, interface), member, signature, body), timeout)
    if reply.header.message_type == MessageType.error:
        return None
    return reply.body


def sni_owner(bus: Any) -> str | None:
    """The program that owns the StatusNotifierWatcher name, or None."""
    body = bus_call(bus, "GetNameOwner", "s", (WATCHER,))
    if not body:
        return None
    unique = clean(str(body[0]), 60)
    pid = bus_call(bus, "GetConnectionUnixProcessID", "s", (unique,))
    return (_program(int(pid[0])) if pid else None) or unique


# ---- one look, for doctor and the choice of backend ----


def look() -> tuple[Hosts, list[str]]:
    """What runs now, and what could not be asked (each one phrase), e.g. for ``doctor``."""
    from notifier.sinks.notify.bus import Bus, BusError
    from notifier.system.desktop import open_display

    unasked: list[str] = []
    xembed = sni = None
    disp = open_display()
    if disp is None:
        unasked.append("no X display (the XEmbed tray was not asked)")
    else:
        try:
            xembed = xembed_owner(disp)
        except Exception as exc:
            unasked.append(f"the X server did not answer ({clean(exc, 100)})")
        finally:
            disp.close()
    try:
        bus = Bus()
    except (BusError, ImportError) as exc:
        unasked.append(no_bus(exc))
    else:
        try:
            sni = sni_owner(bus)
        except Exception as exc:
            unasked.append(f"the session bus did not answer ({clean(exc, 100)})")
        finally:
            bus.close()
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
                    "no tray host (%s): the icon appears when one starts; notifications and the window"
                    " work without it",
                    NO_HOST_WHY,
                )
            return
        for kind, was, now in (("XEmbed system tray", last.xembed, hosts.xembed),
                               ("StatusNotifierItem watcher", last.sni, hosts.sni)):
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
