"""Notifications over D-Bus (``org.freedesktop.Notifications``) through jeepney: ids, replace,
close, actions, urgency; the server's name changing owner is followed, so a server that starts
late, goes away or comes back is reported instead of discovered by failing notifications."""

from __future__ import annotations

import logging
import os
import queue
import shutil
import subprocess
import threading
from collections.abc import Callable
from typing import Any

from notifier import APP_NAME
from notifier.core.text import clean
from notifier.resources import app_icon
from notifier.sinks.notify.backend import BackendError, ServerGone, expire_ms
from notifier.sinks.notify.render import SOUND_NEEDS_ANSWER, Message

log = logging.getLogger("notifier.sinks.notify")

NOTIFICATIONS = "org.freedesktop.Notifications"
_NO_OWNER = ("org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner")


def has_bus() -> bool:
    return bool(os.environ.get("DBUS_SESSION_BUS_ADDRESS")) or os.path.exists(f"/run/user/{os.getuid()}/bus")


class DBusBackend:
    """org.freedesktop.Notifications over jeepney (pure Python).

    The connection to the session bus outlives the server: it also listens for the server's name
    changing owner, so a server that starts late, goes away or comes back is reported through
    ``on_server`` ("up", "down"; "lost" when the bus itself is gone) instead of being discovered by
    notifications that fail one by one."""

    name = "dbus"

    def __init__(
        self,
        on_action: Callable[[int, str], None] | None = None,
        on_closed: Callable[[int, int], None] | None = None,
        on_server: Callable[[str], None] | None = None,
        expire: str | int = "never",
        sound: str = "default",
    ) -> None:
        self.on_action = on_action
        self.sound = sound
        self.on_closed = on_closed
        self.on_server = on_server
        self.expire = expire
        self.server: tuple[str, ...] = ()
        # The server's unique bus name (":1.42"), after the bus's own id (a new one each time a
        # bus starts): never given to another connection, so a notification id recorded with it
        # names this very server's notification, never one of a later server (ids restart at 1).
        self.owner = ""
        self.capabilities: tuple[str, ...] = ()
        self.markup = False
        self.online = False
        self.problem = ""
        self._conn: Any = None
        self._router: Any = None
        self._signals: queue.Queue[Any] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._closed = threading.Event()

    def connect(self, timeout: float = 3.0) -> bool:
        """Open the bus and listen; then :meth:`probe`. Raises BackendError when there is no bus."""
        try:
            from jeepney import DBusAddress, MatchRule, message_bus, new_method_call
            from jeepney.io.threading import DBusRouter, open_dbus_connection
            from jeepney.low_level import HeaderFields
        except ImportError as exc:
            raise BackendError("jeepney is not installed") from exc
        if not has_bus():
            raise BackendError("no session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
        try:
            self._conn = open_dbus_connection(bus="SESSION")
        except Exception as exc:  # no socket, refused
            raise BackendError(f"no session bus ({clean(exc, 120)})") from exc

        class Router(DBusRouter):  # type: ignore[misc]
            def _receiver(self) -> None:
                try:
                    super()._receiver()
                except (OSError, ValueError):
                    pass  # the bus went away: the signal listener reports it, once, without a traceback

        self._router = Router(self._conn)
        self._addr = DBusAddress(
            "/org/freedesktop/Notifications", bus_name=NOTIFICATIONS, interface=NOTIFICATIONS
        )
        self._call = new_method_call
        self._member_field = HeaderFields.member
        ours = MatchRule(type="signal", interface=NOTIFICATIONS, path="/org/freedesktop/Notifications")
        owner = MatchRule(
            type="signal",
            sender="org.freedesktop.DBus",
            interface="org.freedesktop.DBus",
            member="NameOwnerChanged",
            path="/org/freedesktop/DBus",
        )
        owner.add_arg_condition(0, NOTIFICATIONS)
        try:
            for rule in (ours, owner):
                self._router.filter(rule, queue=self._signals, bufsize=0)
                self._router.send_and_get_reply(message_bus.AddMatch(rule), timeout=timeout)
        except Exception as exc:
            self.shutdown()
            raise BackendError(f"the session bus does not answer ({clean(exc, 120)})") from exc
        self._thread = threading.Thread(target=self._listen, name="pi-notifier-dbus-signals", daemon=True)
        self._thread.start()
        return self.probe(timeout)

    def probe(self, timeout: float = 3.0) -> bool:
        """A real round trip to the server (``GetServerInformation``; the bus starts an activatable
        server for it). Sets :attr:`online`, and :attr:`problem` when nothing answered."""
        try:
            info = self._send("GetServerInformation", "", (), timeout)
            caps = self._send("GetCapabilities", "", (), timeout)[0]
        except Exception as exc:
            self.online = False
            if getattr(exc, "name", None) in _NO_OWNER:
                self.problem = f"nothing owns {NOTIFICATIONS} on the session bus, and no server is set up to start for it"
            else:
                self.problem = f"nothing answers as {NOTIFICATIONS} on the session bus ({clean(exc, 120)})"
            return False
        self.owner = self._owner(timeout)
        # what the server says about itself is shown in logs and doctor: sanitize it here
        self.server = tuple(clean(x, 60) for x in info)
        self.capabilities = tuple(clean(c, 60) for c in caps)
        self.markup = "body-markup" in self.capabilities
        self.online = True
        self.problem = ""
        return True

    def _owner(self, timeout: float) -> str:
        """``BUS-ID/UNIQUE-NAME`` of the connection that owns the server's name ("" if unknown)."""
        try:
            from jeepney import message_bus
            from jeepney.wrappers import unwrap_msg

            send = self._router.send_and_get_reply
            (bus,) = unwrap_msg(send(message_bus.GetId(), timeout=timeout))
            (owner,) = unwrap_msg(send(message_bus.GetNameOwner(NOTIFICATIONS), timeout=timeout))
        except Exception:
            return ""
        if not (isinstance(bus, str) and isinstance(owner, str) and owner.startswith(":")):
            return ""
        return f"{clean(bus, 64)}/{clean(owner, 64)}"

    def describe(self) -> str:
        server = " ".join(self.server[:3]) or "unknown server"
        return f"D-Bus notification server {server} (capabilities: {', '.join(self.capabilities)})"

    def _bus_alive(self) -> bool:
        thread = getattr(self._router, "_rcv_thread", None)  # jeepney's receiver: it ends with the bus
        return self._router is not None and (thread is None or thread.is_alive())

    def _send(
        self, method: str, signature: str, body: tuple[Any, ...], timeout: float = 3.0
    ) -> tuple[Any, ...]:
        from jeepney.wrappers import unwrap_msg

        msg = self._call(self._addr, method, signature, body)
        reply = self._router.send_and_get_reply(msg, timeout=timeout)
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
        except Exception as exc:
            if not self._bus_alive():
                self.online = False
                raise ServerGone("bus", clean(exc, 160)) from exc
            raise BackendError(clean(exc, 160)) from exc

    def _listen(self) -> None:
        while not self._closed.is_set():
            try:
                msg = self._signals.get(timeout=0.5)
            except queue.Empty:
                if not self._closed.is_set() and not self._bus_alive():
                    self.online = False
                    if self.on_server:
                        self.on_server("lost")
                    return
                continue
            member = msg.header.fields.get(self._member_field)
            try:
                if member == "ActionInvoked" and self.on_action:
                    self.on_action(int(msg.body[0]), str(msg.body[1]))
                elif member == "NotificationClosed" and self.on_closed:
                    self.on_closed(int(msg.body[0]), int(msg.body[1]))
                elif member == "NameOwnerChanged" and self.on_server:
                    self.on_server("up" if msg.body[2] else "down")
            except Exception:
                log.exception("a notification signal failed")

    def show(self, message: Message, replaces: int) -> int:
        actions = [x for pair in message.actions for x in pair] if "actions" in self.capabilities else []
        timeout = -1  # the server's default for what needs no answer
        hints: dict[str, tuple[str, Any]] = {
            "category": ("s", "im.received"),
            "desktop-entry": ("s", APP_NAME),
        }
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
        self._closed.set()
        self.online = False
        for obj in (self._router, self._conn):
            if obj is not None:
                try:
                    obj.close()
                except Exception:
                    pass
        self._router = self._conn = None


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


def server_answers(timeout: float = 3.0) -> tuple[bool, str]:
    """Whether a notification server answers a real round trip on the session bus, and if not why.
    notify-send and plyer deliver through that same server on Linux, so without one they show
    nothing (and notify-send prints 'Cannot autolaunch D-Bus' where there is no bus at all)."""
    probe = DBusBackend()
    try:
        ok = probe.connect(timeout)
    except BackendError as exc:
        if "jeepney" not in str(exc):
            return False, str(exc)
        return _server_answers_cli(timeout)
    finally:
        probe.shutdown()
    return ok, probe.problem


def _server_answers_cli(timeout: float) -> tuple[bool, str]:
    tool = shutil.which("gdbus") or shutil.which("dbus-send")
    if not has_bus():
        return False, "no session bus (DBUS_SESSION_BUS_ADDRESS is not set)"
    if tool is None:
        return False, "cannot check for a notification server (jeepney, gdbus and dbus-send are all missing)"
    if os.path.basename(tool) == "gdbus":
        cmd = [
            tool,
            "call",
            "--session",
            "--dest",
            NOTIFICATIONS,
            "--object-path",
            "/org/freedesktop/Notifications",
            "--method",
            f"{NOTIFICATIONS}.GetServerInformation",
        ]
    else:
        cmd = [
            tool,
            "--session",
            "--print-reply",
            f"--dest={NOTIFICATIONS}",
            "/org/freedesktop/Notifications",
            f"{NOTIFICATIONS}.GetServerInformation",
        ]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 2)
    except (OSError, subprocess.SubprocessError) as exc:
        return False, clean(exc, 120)
    if done.returncode != 0:
        return False, f"nothing answers as {NOTIFICATIONS} ({clean(done.stderr, 120)})"
    return True, ""
