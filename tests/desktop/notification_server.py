"""A notification server written for the tests, on a real session bus: it answers the way mako 1.7
does on sway (a method return and then an ``UnknownMethod`` error with the same reply serial) and
worse: a reply to a serial the client never used and a late second reply to an earlier call
come with every answer, and an answer can be held back past the client's timeout. A test ends it
and starts another one to see a client follow a server restart."""

from __future__ import annotations

import threading
from typing import Any

from jeepney import (
    DBusAddress,
    HeaderFields,
    MessageType,
    message_bus,
    new_error,
    new_method_return,
    new_signal,
)
from jeepney.io.threading import DBusConnection, ReceiveStopped, open_dbus_connection

NOTIFICATIONS = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
UNKNOWN = "org.freedesktop.DBus.Error.UnknownMethod"
STRAY_SERIAL = 0x7FFF0000  # far from any serial a client uses


class HostileServer:
    """``name``: what GetServerInformation says; ``duplicate``: every answer is followed by an
    UnknownMethod error with the same reply serial (mako 1.7); ``stray``: a reply to a serial
    never sent comes first; ``late``: the previous call's answer is sent again afterwards;
    ``hold``: method → seconds its answer is held back (late replies after a client's timeout);
    ``errors``: method → the D-Bus error it answers with instead."""

    def __init__(
        self,
        address: str,
        name: str = "hostile",
        duplicate: bool = True,
        stray: bool = True,
        late: bool = True,
    ) -> None:
        self.address = address
        self.name = name
        self.duplicate = duplicate
        self.stray = stray
        self.late = late
        self.hold: dict[str, float] = {}
        self.errors: dict[str, str] = {}
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.lock = threading.Lock()
        self.next_id = 0
        self.unique_name = ""
        self._previous: Any = None
        self._conn: DBusConnection | None = None
        self._thread: threading.Thread | None = None
        self._serial = iter(range(1, 1 << 30))

    # ---- life ----

    def start(self, take_over: bool = False) -> HostileServer:
        """Connect and take the name (``take_over``: from the server that has it, which lets it
        go: the name passes straight from one owner to the other); returns once it owns it."""
        conn = open_dbus_connection(bus=self.address)
        self._conn = conn
        self.unique_name = str(conn.unique_name)
        # ALLOW_REPLACEMENT 1, REPLACE_EXISTING 2, DO_NOT_QUEUE 4
        reply = self._call_bus(message_bus.RequestName(NOTIFICATIONS, 2 | 4 if take_over else 1 | 4))
        if reply.body != (1,):  # PRIMARY_OWNER
            conn.close()
            raise RuntimeError(f"could not own {NOTIFICATIONS}: {reply.body}")
        self._thread = threading.Thread(target=self._serve, name=f"server-{self.name}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Disconnect (the bus then says the name has no owner)."""
        conn = self._conn
        if conn is None:
            return
        self._conn = None
        conn.close()
        if self._thread is not None:
            self._thread.join(5)

    def _call_bus(self, msg: Any) -> Any:
        assert self._conn is not None
        serial = next(self._serial) + (1 << 30)  # (open_dbus_connection used the low ones)
        self._conn.send(msg, serial=serial)
        while True:
            reply = self._conn.receive(timeout=5)
            if reply.header.fields.get(HeaderFields.reply_serial) == serial:
                return reply

    # ---- what a test does with it ----

    def of(self, member: str) -> list[tuple[Any, ...]]:
        with self.lock:
            return [body for m, body in self.calls if m == member]

    def invoke(self, nid: int, action: str) -> None:
        """The user clicked an action of notification ``nid``."""
        self.emit("ActionInvoked", "us", (nid, action))

    def emit(self, member: str, signature: str, body: tuple[Any, ...]) -> None:
        assert self._conn is not None
        emitter = DBusAddress(PATH, interface=NOTIFICATIONS)
        self._send(new_signal(emitter, member, signature, body))

    def _send(self, msg: Any) -> None:
        conn = self._conn
        if conn is not None:
            try:
                conn.send(msg, serial=next(self._serial) + (1 << 30))
            except OSError:
                pass  # stopped meanwhile

    # ---- serving ----

    def _serve(self) -> None:
        conn = self._conn
        assert conn is not None
        while True:
            try:
                msg = conn.receive()
            except (ReceiveStopped, OSError, ValueError):
                return
            if msg.header.message_type is MessageType.method_call:
                self._answer(msg)

    def _answer(self, call: Any) -> None:
        member = str(call.header.fields.get(HeaderFields.member, ""))
        with self.lock:
            self.calls.append((member, tuple(call.body)))
        if self.stray:
            bogus = new_method_return(call, "s", ("stray",))
            bogus.header.fields[HeaderFields.reply_serial] = STRAY_SERIAL + len(self.calls)
            self._send(bogus)
        reply = self._reply(call, member)
        delay = self.hold.get(member, 0.0)
        if delay:
            timer = threading.Timer(delay, self._finish, (call, reply))
            timer.daemon = True
            timer.start()
        else:
            self._finish(call, reply)

    def _finish(self, call: Any, reply: Any) -> None:
        self._send(reply)
        if self.duplicate and reply.header.message_type is MessageType.method_return:
            self._send(new_error(call, UNKNOWN, "s", ("Unknown method",)))
        if self.late and self._previous is not None:
            self._send(self._previous)  # an answer the client had long ago, again
        self._previous = reply

    def _reply(self, call: Any, member: str) -> Any:
        body = call.body
        if member in self.errors:
            return new_error(call, self.errors[member], "s", (f"{member} fails here",))
        if member == "GetCapabilities":
            return new_method_return(call, "as", (["actions", "body", "body-markup"],))
        if member == "GetServerInformation":
            return new_method_return(call, "ssss", (self.name, "tests", "1.0", "1.2"))
        if member == "Notify":
            replaces = int(body[1])
            if replaces:
                nid = replaces
            else:
                with self.lock:
                    self.next_id += 1
                    nid = self.next_id
            return new_method_return(call, "u", (nid,))
        if member == "CloseNotification":
            reply = new_method_return(call)
            self.emit("NotificationClosed", "uu", (int(body[0]), 3))
            return reply
        return new_error(call, UNKNOWN, "s", (f"no method {member}",))
