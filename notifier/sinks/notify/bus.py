"""One connection to the session bus, read by one thread of ours: a reply goes to the call that
waits for its serial, and every other reply is dropped — a second reply to the same call, a reply
to a serial never sent, a reply that comes after its call gave up. Signals are handed to a
callback on a thread of their own, so a slow callback never holds up a reply.

Why not jeepney's ``DBusRouter``: in jeepney 0.9 its receiver thread dies on a second reply with
the same reply serial (it sets the finished call's future again: ``InvalidStateError``, or
``KeyError`` when the call has just gone), and every later call then fails. mako 1.7 answers
``GetCapabilities`` with a method return and then an ``UnknownMethod`` error with the same reply
serial; gdbus and libdbus drop the second one, as this does. Only jeepney's public API is used:
``open_dbus_connection``, ``DBusConnection.send/receive/close`` and its message constructors."""

from __future__ import annotations

import itertools
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

from notifier.system.paths import session_address

# Lazy imports here: jeepney is a Linux-only dependency and this module loads on every OS.

log = logging.getLogger(__name__)

UNKNOWN_METHOD = "org.freedesktop.DBus.Error.UnknownMethod"
_LOST = object()  # (on the signal queue: the bus went away)


class BusError(Exception):
    """No session bus, or it went away."""


class Replies:
    """The calls waiting for a reply, by serial: the first reply to a waiting serial is handed
    over, every other one dropped (and counted). Thread-safe: calls wait on their own threads,
    the reader delivers."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[int, queue.SimpleQueue[Any]] = {}
        self.open = True
        self.dropped = 0  # replies nobody waited for (duplicates, strays, late ones)

    def expect(self, serial: int) -> queue.SimpleQueue[Any]:
        """Wait for the reply to ``serial`` (before the call is sent, so no reply can be early)."""
        slot: queue.SimpleQueue[Any] = queue.SimpleQueue()
        with self._lock:
            if not self.open:
                raise BusError("the session bus connection is closed")
            self._waiting[serial] = slot
        return slot

    def forget(self, serial: int) -> None:
        """The call is over (answered, or gave up): a reply to it from now on is dropped."""
        with self._lock:
            self._waiting.pop(serial, None)

    def deliver(self, serial: Any, reply: Any) -> bool:
        with self._lock:
            slot = self._waiting.pop(serial, None)
            if slot is None:
                self.dropped += 1
                return False
        slot.put(reply)
        return True

    def close(self) -> None:
        """No more replies: every waiting call gets None (the bus is gone)."""
        with self._lock:
            self.open = False
            waiting, self._waiting = self._waiting, {}
        for slot in waiting.values():
            slot.put(None)


class Bus:
    """``on_signal(message)`` runs on the signal thread for every signal that arrives;
    ``on_lost()`` runs there once when the bus goes away (not after :meth:`close`)."""

    def __init__(
        self,
        on_signal: Callable[[Any], None] | None = None,
        on_lost: Callable[[], None] | None = None,
        auth_timeout: float = 3.0,
    ) -> None:
        from jeepney import HeaderFields, MessageFlag, MessageType, new_error
        from jeepney.io.threading import open_dbus_connection

        address = session_address()
        if address is None:
            raise BusError("no session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
        try:
            self._conn = open_dbus_connection(bus=address, auth_timeout=auth_timeout)
        except Exception as exc:  # no socket, refused, authentication
            raise BusError(f"no session bus ({exc})") from exc
        self.unique_name = str(self._conn.unique_name)
        self._fields = HeaderFields
        self._types = MessageType
        self._no_reply = MessageFlag.no_reply_expected
        self._new_error = new_error
        self.on_signal = on_signal
        self.on_lost = on_lost
        # our own serials (the connection's Hello had 1): a reply is matched to its call by these
        self._serials = itertools.count(2)
        self._replies = Replies()
        self._lock = threading.Lock()
        self._closing = False
        self._signals: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._reader = threading.Thread(target=self._read, name="pi-notifier-dbus-reader", daemon=True)
        self._dispatcher = threading.Thread(
            target=self._dispatch_signals, name="pi-notifier-dbus-signals", daemon=True
        )
        self._reader.start()
        self._dispatcher.start()

    def call(self, message: Any, timeout: float = 3.0) -> Any:
        """Send a method call and return its reply (a method return or an error message).
        Raises TimeoutError when none comes within ``timeout`` s, BusError when the bus is gone."""
        serial = next(self._serials)
        slot = self._replies.expect(serial)
        try:
            try:
                self._conn.send(message, serial=serial)
            except OSError as exc:
                raise BusError(f"the session bus went away ({exc})") from exc
            try:
                reply = slot.get(timeout=timeout)
            except queue.Empty:
                raise TimeoutError(f"no reply within {timeout:g} s") from None
        finally:
            self._replies.forget(serial)  # a reply after this is dropped as late
        if reply is None:
            raise BusError("the session bus went away")
        return reply

    @property
    def alive(self) -> bool:
        """The connection is up (False once the bus went away or :meth:`close` was called)."""
        return self._replies.open

    @property
    def dropped(self) -> int:
        """Replies that nothing waited for: duplicates, strays, late ones."""
        return self._replies.dropped

    def close(self) -> None:
        with self._lock:
            if self._closing:
                return
            self._closing = True
        try:
            self._conn.close()
        except Exception:
            pass
        self._signals.put(None)
        for thread in (self._reader, self._dispatcher):
            if thread is not threading.current_thread():
                thread.join(2)

    # ---- reader thread ----

    def _read(self) -> None:
        try:
            while True:
                message = self._conn.receive()
                try:
                    self._route(message)
                except Exception:  # never lose the reader to one odd message
                    log.debug("could not route a D-Bus message", exc_info=True)
        except Exception as exc:  # ReceiveStopped (closed by us), or the socket went away
            if not self._closing:
                log.debug("the session bus connection ended: %r", exc)
        finally:
            self._replies.close()
            with self._lock:
                lost = not self._closing
            if lost:
                self._signals.put(_LOST)

    def _route(self, message: Any) -> None:
        kind = message.header.message_type
        if kind in (self._types.method_return, self._types.error):
            serial = message.header.fields.get(self._fields.reply_serial)
            if not self._replies.deliver(serial, message):
                log.debug("dropped a D-Bus reply to serial %r that nothing waits for", serial)
        elif kind is self._types.signal:
            self._signals.put(message)
        elif kind is self._types.method_call and not message.header.flags & self._no_reply:
            # nothing is served here: say so at once rather than leave the caller waiting
            member = message.header.fields.get(self._fields.member)
            error = self._new_error(message, UNKNOWN_METHOD, "s", (f"{member} is not served here",))
            self._conn.send(error, serial=next(self._serials))

    # ---- signal thread ----

    def _dispatch_signals(self) -> None:
        while True:
            item = self._signals.get()
            if item is None:
                return
            try:
                if item is _LOST:
                    if self.on_lost is not None:
                        self.on_lost()
                    return
                if self.on_signal is not None:
                    self.on_signal(item)
            except Exception:
                log.exception("a D-Bus signal handler failed")
