"""Notifications over D-Bus (``org.freedesktop.Notifications``): finding the server and asking it
who it is and what it can do, then ids, replace and close, on a connection of :mod:`.bus`
(replies matched by serial: a server that answers twice, late or to no call is survived). What a
Notify call carries is in :mod:`.hints`, the server's signals in :mod:`.server_signals`, who owns its
name in :mod:`.name_owner`. The name changing owner is followed, so a server that starts late,
goes away or comes back (restarted: asked again) is reported instead of discovered by failing
notifications."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from notifier import APP_NAME
from notifier.core.text import clean
from notifier.resources import app_icon
from notifier.sinks.notify.backend import BackendError, ServerGone
from notifier.sinks.notify.bus import Bus, BusError
from notifier.sinks.notify.hints import notify_args
from notifier.sinks.notify.name_owner import BUS_NAME, NO_SERVER, NOTIFICATIONS, PATH, owner_of
from notifier.sinks.notify.render import Message
from notifier.sinks.notify.server_signals import Signals
from notifier.sinks.notify.servers import Server

# Lazy imports here: jeepney is a Linux-only dependency and this module loads on every OS.

_NO_OWNER = ("org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner")


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
        *,
        on_action: Callable[[int, str], None] | None = None,
        on_reply: Callable[[int, str], None] | None = None,
        on_server: Callable[[str], None] | None = None,
        expire: str | int = "never",
        sound: str = "default",
    ) -> None:
        """``on_action``, ``on_reply``, ``on_server``: the server's signals (:class:`Signals`)."""
        self.signals = Signals(on_action=on_action, on_reply=on_reply, on_server=on_server)
        self.sound = sound
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
        """Open the bus and listen; then :meth:`probe`. Raises BackendError when there is no bus,
        or off Linux (jeepney is a dependency on Linux only)."""
        if not sys.platform.startswith("linux"):
            raise BackendError("D-Bus notifications are for Linux")
        from jeepney import MatchRule, message_bus
        from jeepney.wrappers import unwrap_msg

        try:
            self._bus = Bus(lambda msg: self.signals.take(msg, self.owner), self._on_lost)
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
                return self._failed("none", NO_SERVER)
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
        """Who owns the server's name, asked of the bus (:func:`owner_of`), not of the server."""
        if self._bus is None:
            raise BusError("not connected")
        return owner_of(self._bus, timeout)

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

    def went_away(self) -> None:
        """The server (or the bus) is gone: offline until :meth:`probe` finds one."""
        self.online = False

    def _on_lost(self) -> None:
        self.online = False
        if self.signals.on_server:
            self.signals.on_server("lost")

    def show(self, message: Message, replaces: int) -> int:
        actions, hints, timeout = notify_args(message, self.shows, self.expire, self.sound)
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
