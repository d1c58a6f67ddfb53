"""Notifications over D-Bus (``org.freedesktop.Notifications``): ids, replace, close, actions,
urgency, on a connection of :mod:`.bus` (replies matched by serial: a server that answers twice,
late or to no call is survived). The server's name changing owner is followed, so a server that
starts late, goes away or comes back (restarted: asked again who it is and what it can do) is
reported instead of discovered by failing notifications."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

from notifier import APP_NAME
from notifier.core.text import clean
from notifier.resources import app_icon
from notifier.sinks.notify.backend import BackendError, ServerGone, expire_ms
from notifier.sinks.notify.bus import Bus, BusError, session_address
from notifier.sinks.notify.render import SOUND_NEEDS_ANSWER, Message
from notifier.sinks.notify.servers import REPLY, REPLY_HINTS, Server, choose

log = logging.getLogger("notifier.sinks.notify")

NOTIFICATIONS = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
BUS_NAME = "org.freedesktop.DBus"
_NO_OWNER = ("org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner")
ONE_CLICK_S = 1.0  # the same action of the same notification again within this long: the same click


class Once:
    """Lets each key through once within ``window_s`` seconds (one click that arrives twice is one
    action). Thread-safe; time from ``clock``."""

    def __init__(self, window_s: float = ONE_CLICK_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.window_s = window_s
        self.clock = clock
        self._seen: dict[Hashable, float] = {}
        self._lock = threading.Lock()

    def first(self, key: Hashable) -> bool:
        now = self.clock()
        with self._lock:
            self._seen = {k: t for k, t in self._seen.items() if now - t < self.window_s}
            if key in self._seen:
                return False
            self._seen[key] = now
            return True


def has_bus() -> bool:
    return session_address() is not None


class DBusBackend:
    """org.freedesktop.Notifications over jeepney (pure Python).

    The connection to the session bus outlives the server: it also listens for the server's name
    changing owner, so a server that starts late, goes away or comes back is reported through
    ``on_server`` ("up", "down"; "lost" when the bus itself is gone) instead of being discovered by
    notifications that fail one by one.

    After :meth:`probe`, :attr:`found` tells what it found: "server" (it answered), "none"
    (nothing owns the name, nothing is set up to start for it), "odd" (a server owns the name
    but its answers were no use: :attr:`problem` says which) or "bus" (the bus went away)."""

    name = "dbus"

    def __init__(
        self,
        on_action: Callable[[int, str], None] | None = None,
        on_closed: Callable[[int, int], None] | None = None,
        on_server: Callable[[str], None] | None = None,
        expire: str | int = "never",
        sound: str = "default",
        on_reply: Callable[[int, str], None] | None = None,
    ) -> None:
        """``on_action(id, action)``, ``on_reply(id, text)`` (an inline reply), ``on_closed(id,
        reason)``: the current server's signals, each click once."""
        self.on_action = on_action
        self.on_reply = on_reply
        self._once = Once()
        self.sound = sound
        self.on_closed = on_closed
        self.on_server = on_server
        self.expire = expire
        self.server: tuple[str, ...] = ()
        # The server's unique bus name (":1.42"), after the bus's own id (a new one each time a
        # bus starts): never given to another connection, so a notification id recorded with it
        # names this very server's notification, never one of a later server (ids restart at 1).
        self.owner = ""
        self.process = ""  # the owning process, for people ("mako, pid 812"; "" if not known)
        self.capabilities: tuple[str, ...] = ()
        self.markup = False
        self.online = False
        self.found = ""
        self.problem = ""
        self._bus: Bus | None = None

    @property
    def shows(self) -> Server:
        """The server as it described itself: what it shows decides the actions sent."""
        return Server.of(self.server, self.capabilities)

    @property
    def connected(self) -> bool:
        """The session bus connection is up (the server may still be missing)."""
        return self._bus is not None and self._bus.alive

    def connect(self, timeout: float = 3.0) -> bool:
        """Open the bus and listen; then :meth:`probe`. Raises BackendError when there is no bus."""
        try:
            from jeepney import MatchRule, message_bus
            from jeepney.wrappers import unwrap_msg
        except ImportError as exc:
            raise BackendError("jeepney is not installed") from exc
        try:
            self._bus = Bus(self._on_signal, self._on_lost)
        except BusError as exc:
            raise BackendError(clean(exc, 160)) from exc
        # sender = the well-known name: the bus passes on only signals of its owner at the time
        ours = MatchRule(type="signal", sender=NOTIFICATIONS, interface=NOTIFICATIONS, path=PATH)
        owner = MatchRule(
            type="signal",
            sender=BUS_NAME,
            interface=BUS_NAME,
            member="NameOwnerChanged",
            path="/org/freedesktop/DBus",
        )
        owner.add_arg_condition(0, NOTIFICATIONS)
        try:
            for rule in (ours, owner):
                unwrap_msg(self._bus.call(message_bus.AddMatch(rule), timeout))
        except Exception as exc:
            self.shutdown()
            raise BackendError(f"the session bus does not answer ({clean(exc, 120)})") from exc
        return self.probe(timeout)

    def probe(self, timeout: float = 3.0) -> bool:
        """Real round trips to the server (``GetServerInformation`` — the bus starts an activatable
        server for it — and ``GetCapabilities``): who it is and what it can do, asked again after
        each restart. Sets :attr:`online`, :attr:`found` and, unless it answered, :attr:`problem`."""
        from jeepney.wrappers import DBusErrorResponse

        self.online = False
        step = "GetServerInformation"
        try:
            info = self._send(step, "", (), timeout)
            step = "GetCapabilities"
            (caps,) = self._send(step, "", (), timeout)
            if not (len(info) >= 3 and all(isinstance(x, str) for x in info)):
                raise ValueError(f"GetServerInformation gave {clean(repr(info), 80)}")
            if not (isinstance(caps, list) and all(isinstance(c, str) for c in caps)):
                raise ValueError(f"GetCapabilities gave {clean(repr(caps), 80)}")
        except BusError as exc:
            return self._failed("bus", f"the session bus went away ({clean(exc, 120)})")
        except DBusErrorResponse as exc:
            if exc.name in _NO_OWNER:
                return self._failed(
                    "none",
                    f"nothing owns {NOTIFICATIONS} on the session bus, and no server is set up to start for it",
                )
            return self._odd(f"answered {step} with the error {clean(exc.name, 80)}", timeout)
        except TimeoutError:
            return self._odd(f"did not answer {step} within {timeout:g} s", timeout)
        except (ValueError, TypeError) as exc:  # a reply of the wrong shape
            return self._odd(f"answered oddly: {clean(exc, 120)}", timeout)
        self.owner, self.process = self._owner(timeout)
        # what the server says about itself is shown in logs and doctor: sanitize it here
        self.server = tuple(clean(x, 60) for x in info)
        self.capabilities = tuple(clean(c, 60) for c in caps)
        self.markup = "body-markup" in self.capabilities
        self.online = True
        self.found = "server"
        self.problem = ""
        return True

    def _failed(self, found: str, problem: str) -> bool:
        self.found, self.problem = found, problem
        return False

    def _odd(self, what: str, timeout: float) -> bool:
        """A call failed: tell a server that answered oddly from no server at all."""
        try:
            self.owner, self.process = self._owner(timeout)
        except BusError as exc:
            return self._failed("bus", f"the session bus went away ({clean(exc, 120)})")
        if not self.owner:
            return self._failed(
                "none",
                f"nothing owns {NOTIFICATIONS} on the session bus (a server set up to start for it {what})",
            )
        return self._failed("odd", f"{self.who()} {what}")

    def who(self) -> str:
        """The server as people can find it: its process, else its bus name."""
        unique = self.owner.rsplit("/", 1)[-1]
        return f"the notification server ({self.process or unique}, owner of {NOTIFICATIONS})"

    def _owner(self, timeout: float) -> tuple[str, str]:
        """``BUS-ID/UNIQUE-NAME`` of the connection that owns the server's name ("" if none), and
        its process ("mako, pid 812"; "" if not known), from the bus (not from the server)."""
        from jeepney import message_bus
        from jeepney.wrappers import DBusErrorResponse, unwrap_msg

        bus = self._bus
        if bus is None:
            raise BusError("not connected")
        try:
            (bus_id,) = unwrap_msg(bus.call(message_bus.GetId(), timeout))
            (owner,) = unwrap_msg(bus.call(message_bus.GetNameOwner(NOTIFICATIONS), timeout))
        except (DBusErrorResponse, TimeoutError, ValueError):
            return "", ""
        if not (isinstance(bus_id, str) and isinstance(owner, str) and owner.startswith(":")):
            return "", ""
        return f"{clean(bus_id, 64)}/{clean(owner, 64)}", _process_of(bus, owner, timeout)

    def describe(self) -> str:
        server = " ".join(self.server[:3]) or "unknown server"
        return f"D-Bus notification server {server} (capabilities: {', '.join(self.capabilities)})"

    def _send(
        self, method: str, signature: str, body: tuple[Any, ...], timeout: float = 3.0
    ) -> tuple[Any, ...]:
        from jeepney import DBusAddress, new_method_call
        from jeepney.wrappers import unwrap_msg

        if self._bus is None:
            raise BusError("not connected")
        address = DBusAddress(PATH, bus_name=NOTIFICATIONS, interface=NOTIFICATIONS)
        reply = self._bus.call(new_method_call(address, method, signature, body), timeout)
        return tuple(unwrap_msg(reply))

    def _request(self, method: str, signature: str, body: tuple[Any, ...]) -> tuple[Any, ...]:
        from jeepney.wrappers import DBusErrorResponse

        try:
            return self._send(method, signature, body)
        except DBusErrorResponse as exc:
            if exc.name in _NO_OWNER:
                self.online = False
                raise ServerGone("server", clean(exc, 160)) from exc
            raise BackendError(clean(exc, 160)) from exc
        except BusError as exc:
            self.online = False
            raise ServerGone("bus", clean(exc, 160)) from exc
        except TimeoutError as exc:
            raise BackendError(f"{method}: {clean(exc, 120)}") from exc

    # ---- signals (the bus connection's signal thread) ----

    def _on_signal(self, msg: Any) -> None:
        from jeepney import HeaderFields

        fields = msg.header.fields
        interface, member, body = (
            fields.get(HeaderFields.interface),
            fields.get(HeaderFields.member),
            msg.body,
        )
        if interface == NOTIFICATIONS and fields.get(HeaderFields.path) == PATH:
            # Only the server's own: a signal sent to us directly passes every match rule, and
            # GNOME's shell broadcasts each click that its notification service (the owner) sends
            # us again. Ids are the owner's.
            sender = fields.get(HeaderFields.sender)
            if not self.owner or sender != self.owner.rsplit("/", 1)[-1]:
                log.debug("ignored %s from %s (not the server)", clean(member, 40), clean(sender, 40))
                return
            if member == "ActionInvoked" and self.on_action and len(body) >= 2:
                if self._once.first(("action", body[0], body[1])):
                    self.on_action(int(body[0]), str(body[1]))
            elif member == "NotificationReplied" and self.on_reply and len(body) >= 2:
                if self._once.first(("reply", body[0], body[1])):
                    self.on_reply(int(body[0]), str(body[1]))
            elif member == "NotificationClosed" and self.on_closed and len(body) >= 2:
                self.on_closed(int(body[0]), int(body[1]))
        elif (
            member == "NameOwnerChanged"
            and fields.get(HeaderFields.sender) == BUS_NAME
            and len(body) == 3
            and body[0] == NOTIFICATIONS
            and self.on_server
        ):
            self.on_server("up" if body[2] else "down")

    def _on_lost(self) -> None:
        self.online = False
        if self.on_server:
            self.on_server("lost")

    def show(self, message: Message, replaces: int) -> int:
        chosen = choose(message.actions, self.shows, message.takes_text)
        actions = [x for pair in chosen for x in pair]
        timeout = -1  # the server's default for what needs no answer
        hints: dict[str, tuple[str, Any]] = {
            "category": ("s", "im.received"),
            "desktop-entry": ("s", APP_NAME),
        }
        if any(a == REPLY for a, _ in chosen):
            hints.update({k: ("s", v) for k, v in REPLY_HINTS.items()})
        critical = message.critical
        if message.sticky:
            timeout = expire_ms(self.expire)
            if timeout == 0:
                # stays until answered: servers that ignore expire_timeout (GNOME) keep only critical
                # notifications on screen, and 'resident' keeps it there after an action
                hints["resident"] = ("b", True)
                critical = True
        hints["urgency"] = ("y", 2 if critical else 1)
        if message.sticky:  # needs an answer: its own sound (notifications.sound)
            hints.update(sound_hints(self.sound))
        (server_id,) = self._request(
            "Notify",
            "susssasa{sv}i",
            (APP_NAME, replaces, app_icon(), message.title, message.body, actions, hints, timeout),
        )
        return int(server_id)

    def close(self, server_id: int) -> None:
        try:
            self._request("CloseNotification", "u", (server_id,))
        except ServerGone:
            raise
        except BackendError:
            pass  # already closed (by the user, or it expired): nothing to withdraw

    def shutdown(self) -> None:
        self.online = False
        bus, self._bus = self._bus, None
        if bus is not None:
            bus.close()


def sound_hints(sound: str) -> dict[str, tuple[str, Any]]:
    """The freedesktop sound hints for ``notifications.sound``: "default" → the sound theme's
    "message-new-instant"; "none" → silence (``suppress-sound``); a path → ``sound-file``;
    anything else → that ``sound-name``. Servers that play no sounds ignore them."""
    if sound == "none":
        return {"suppress-sound": ("b", True)}
    if sound == "default":
        return {"sound-name": ("s", SOUND_NEEDS_ANSWER)}
    if sound.startswith(("/", "~")):
        return {"sound-file": ("s", os.path.expanduser(sound))}
    return {"sound-name": ("s", sound)}


def _process_of(bus: Bus, unique: str, timeout: float) -> str:
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
    one for it), asked of the bus alone: the server itself is not called. For plyer and
    notify-send, which deliver through that server on Linux (without one they show nothing).
    Returns (True, who: "mako, pid 812" / "" / "started by the bus on demand") or (False, why)."""
    try:
        from jeepney import message_bus
        from jeepney.wrappers import unwrap_msg
    except ImportError:
        return _owner_cli(timeout)
    try:
        bus = Bus()
    except BusError as exc:
        return False, clean(exc, 160)
    try:
        (owned,) = unwrap_msg(bus.call(message_bus.NameHasOwner(NOTIFICATIONS), timeout))
        if owned:
            (unique,) = unwrap_msg(bus.call(message_bus.GetNameOwner(NOTIFICATIONS), timeout))
            return True, _process_of(bus, str(unique), timeout)
        (names,) = unwrap_msg(bus.call(message_bus.ListActivatableNames(), timeout))
        if NOTIFICATIONS in names:
            return True, "started by the bus on demand"
        return (
            False,
            f"nothing owns {NOTIFICATIONS} on the session bus, and no server is set up to start for it",
        )
    except Exception as exc:
        return False, f"the session bus does not answer ({clean(exc, 120)})"
    finally:
        bus.close()


def _owner_cli(timeout: float) -> tuple[bool, str]:
    """:func:`server_owner` without jeepney: ``dbus-send`` asks the bus."""
    tool = shutil.which("dbus-send")
    if not has_bus():
        return False, "no session bus (DBUS_SESSION_BUS_ADDRESS is not set)"
    if tool is None:
        return False, "cannot check for a notification server (jeepney and dbus-send are both missing)"
    cmd = [
        tool, "--session", "--print-reply", f"--dest={BUS_NAME}", "/org/freedesktop/DBus",
        f"{BUS_NAME}.NameHasOwner", f"string:{NOTIFICATIONS}",
    ]  # fmt: skip
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 2)
    except (OSError, subprocess.SubprocessError) as exc:
        return False, clean(exc, 120)
    if done.returncode != 0:
        return False, f"the session bus does not answer ({clean(done.stderr, 120)})"
    if "boolean true" not in done.stdout:
        return False, f"nothing owns {NOTIFICATIONS} on the session bus"
    return True, ""
