"""Who owns the notification server's name (``org.freedesktop.Notifications``), asked of the
session bus alone: the server itself is not called. Its unique bus name, the process behind it,
and whether a server is there at all (or the bus can start one) for the backends that deliver
through it without talking to it."""

from __future__ import annotations

from notifier.core.text import clean
from notifier.sinks.notify.bus import Bus, BusError

# Lazy imports here: jeepney is a Linux-only dependency and this module loads on every OS.

NOTIFICATIONS = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"  # the server's object
BUS_NAME = "org.freedesktop.DBus"
NO_SERVER = f"nothing owns {NOTIFICATIONS} on the session bus, and no server is set up to start for it"


def owner_of(bus: Bus, timeout: float) -> tuple[str, str]:
    """``BUS-ID/UNIQUE-NAME`` of the connection that owns the server's name ("" if none), and
    its process ("mako, pid 812"; "" if not known). Raises BusError when the bus is gone."""
    from jeepney import message_bus
    from jeepney.wrappers import DBusErrorResponse, unwrap_msg

    try:
        (bus_id,) = unwrap_msg(bus.call(message_bus.GetId(), timeout))
        (owner,) = unwrap_msg(bus.call(message_bus.GetNameOwner(NOTIFICATIONS), timeout))
    except (DBusErrorResponse, TimeoutError, ValueError):
        return "", ""
    if not (isinstance(bus_id, str) and isinstance(owner, str) and owner.startswith(":")):
        return "", ""
    return f"{clean(bus_id, 64)}/{clean(owner, 64)}", process_of(bus, owner, timeout)


def process_of(bus: Bus, unique: str, timeout: float) -> str:
    """The "NAME, pid N" of the process behind a bus connection (the bus knows its pid; its name is
    read from /proc where there is one), "" when the bus does not say."""
    from jeepney import message_bus
    from jeepney.wrappers import DBusErrorResponse, unwrap_msg

    try:
        (pid,) = unwrap_msg(bus.call(message_bus.GetConnectionUnixProcessID(unique), timeout))
    except (DBusErrorResponse, TimeoutError, ValueError, BusError):
        return ""
    if not isinstance(pid, int) or pid <= 0:
        return ""
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as fh:
            return f"{clean(fh.read().strip(), 40)}, pid {pid}"
    except OSError:
        return f"pid {pid}"


def server_owner(timeout: float = 3.0) -> tuple[bool, str]:
    """Whether a notification server owns ``org.freedesktop.Notifications`` (or the bus can start
    one for it). For plyer and notify-send, which deliver through that server on Linux (without
    one they show nothing). Returns (True, who: "mako, pid 812" / "" / "started by the bus on
    demand") or (False, why). Linux only (jeepney is a dependency there)."""
    from jeepney import message_bus
    from jeepney.wrappers import unwrap_msg

    try:
        bus = Bus()
    except BusError as exc:
        return False, clean(exc, 160)
    try:
        (owned,) = unwrap_msg(bus.call(message_bus.NameHasOwner(NOTIFICATIONS), timeout))
        if owned:
            (unique,) = unwrap_msg(bus.call(message_bus.GetNameOwner(NOTIFICATIONS), timeout))
            return True, process_of(bus, str(unique), timeout)
        (names,) = unwrap_msg(bus.call(message_bus.ListActivatableNames(), timeout))
        if NOTIFICATIONS in names:
            return True, "started by the bus on demand"
        return False, NO_SERVER
    except Exception as exc:
        return False, f"the session bus does not answer ({clean(exc, 120)})"
    finally:
        bus.close()
