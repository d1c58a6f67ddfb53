"""The one D-Bus client: the process's one connection to the session bus, and the notification
server's side of it (``org.freedesktop.Notifications``): Notify, CloseNotification, its signals
(ActionInvoked, NotificationReplied, NameOwnerChanged), who owns its name, what it says it is and
can do.

One connection, no thread: every :class:`Bus` made in the process (the notifications, the tray
host follower, one look for ``doctor``) is a handle on the same connection to the same bus
address; it closes when the last handle does. It is read on the worker a handle gives (the app's
outputs thread, while nothing calls; signals are handed out there) and by a call on its own
thread; one thread reads at a time. A reply goes to the call that waits for its serial, and every
other reply is dropped — a second reply to the same call, a reply to a serial never sent, a reply
that comes after its call gave up.

Why not jeepney's ``DBusRouter``: in jeepney 0.9 its receiver thread dies on a second reply with
the same reply serial (it sets the finished call's future again: ``InvalidStateError``, or
``KeyError`` when the call has just gone), and every later call then fails. mako 1.7 answers
``GetCapabilities`` with a method return and then an ``UnknownMethod`` error with the same reply
serial; gdbus and libdbus drop the second one, as this does. Only jeepney's public API is used:
``open_dbus_connection``, ``DBusConnection.send/receive/close/sock`` and its message constructors.

The server's name changing owner is followed, so a server that starts late, goes away or comes
back (restarted: asked again) is reported instead of discovered by failing notifications."""

from __future__ import annotations

import contextlib
import itertools
import logging
import queue
import sys
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

from notifier import APP_NAME
from notifier.core.text import clean
from notifier.outputs.render import Message, Server, notify_args
from notifier.resources import app_icon
from notifier.system.paths import session_address
from notifier.system.supervisor import Worker

# Lazy imports here: jeepney is a Linux-only dependency and this module loads on every OS.

log = logging.getLogger(__name__)

UNKNOWN_METHOD = "org.freedesktop.DBus.Error.UnknownMethod"
NOTIFICATIONS = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"  # the server's object
BUS_NAME = "org.freedesktop.DBus"
NO_SERVER = f"nothing owns {NOTIFICATIONS} on the session bus, and no server is set up to start for it"
_NO_OWNER = ("org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner")
BY_SERVER = (1, 2)  # NotificationClosed's reasons "expired" and "dismissed by the user" (3: we closed it)
ONE_CLICK_S = 1.0  # the same action of the same notification again within this long: the same click


class BusError(Exception):
    """No session bus, or it went away."""


class BackendError(Exception):
    """A notification could not be shown or withdrawn."""


class ServerGone(BackendError):
    """The notification server (``what == "server"``) or the whole session bus (``"bus"``) is gone."""

    def __init__(self, what: str, detail: str) -> None:
        super().__init__(detail)
        self.what = what


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


class _Link:
    """The connection to one bus address, shared by the handles on it. No thread of its own: it
    is read by the :class:`Worker` one of its handles gave (when the socket is ready; signals are
    handed out there), and a call reads on its caller's thread while no other thread reads; one
    thread reads at a time (its turn), routing every reply to the call that waits for it. A call
    waiting for the turn wakes when its reply was routed to it, or when the turn is free."""

    def __init__(self, address: str) -> None:
        from jeepney.io.threading import open_dbus_connection

        try:
            self._conn = open_dbus_connection(bus=address, auth_timeout=3.0)
        except Exception as exc:  # no socket, refused, authentication
            raise BusError(f"no session bus ({exc})") from exc
        self.address = address
        self.unique_name = str(self._conn.unique_name)
        # our own serials (the connection's Hello had 1): a reply is matched to its call by these
        self._serials = itertools.count(2)
        self.replies = Replies()
        self.handles: list[Bus] = []
        self.worker: Worker | None = None  # reads while nobody calls; signals are handed out there
        self._fd = self._conn.sock.fileno()
        self._turn = threading.Condition()  # who reads the socket now; notified as the turn ends or a reply comes
        self._reading = False  # (a thread reads the socket now)
        self._signals: queue.SimpleQueue[Any] = queue.SimpleQueue()  # read, not yet handed out

    def read_on(self, worker: Worker) -> None:
        if self.worker is None:
            self.worker = worker
            worker.watch(self._fd, self._ready)

    def call(self, message: Any, timeout: float) -> Any:
        serial = next(self._serials)
        slot = self.replies.expect(serial)
        deadline = time.monotonic() + timeout
        try:
            self.send(message, serial)
            while slot.empty():  # read here, or wait while another thread reads (it routes ours)
                if not self._take_turn(slot, deadline):
                    break
                try:
                    self._read(slot, deadline)
                finally:
                    self._end_turn()
                if time.monotonic() >= deadline:
                    break
        finally:
            self.replies.forget(serial)  # a reply after this is dropped as late
            self._hand_out()
        if slot.empty():
            raise TimeoutError(f"no reply within {timeout:g} s")
        reply = slot.get()
        if reply is None:
            raise BusError("the session bus went away")
        return reply

    def _take_turn(self, slot: queue.SimpleQueue[Any], deadline: float) -> bool:
        """Wait for the turn to read: True once it is this thread's; False if the reply came
        meanwhile (another thread's read routed it) or the deadline passed."""
        with self._turn:
            while self._reading and slot.empty():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._turn.wait(left)
            if not slot.empty():
                return False
            self._reading = True
            return True

    def _end_turn(self) -> None:
        with self._turn:
            self._reading = False
            self._turn.notify_all()

    def _read(self, slot: queue.SimpleQueue[Any] | None, deadline: float) -> None:
        """(This thread's turn.) Route what comes until ``slot`` has its reply or the deadline;
        then what the connection holds already, without waiting."""
        try:
            while True:
                left = 0.0 if slot is None or not slot.empty() else deadline - time.monotonic()
                try:
                    message = self._conn.receive(timeout=max(0.0, left))
                except TimeoutError:
                    return
                try:
                    self._route(message)
                except Exception:  # never lose the connection to one odd message
                    log.debug("could not route a D-Bus message", exc_info=True)
        except Exception as exc:  # closed, or the socket went away
            self._lost(exc)
            raise BusError(f"the session bus went away ({exc})") from exc

    def _ready(self) -> None:
        """(The worker: the socket is ready.) Read what came, unless a caller reads it."""
        with self._turn:
            if self._reading:
                return
            self._reading = True
        try:
            self._read(None, 0.0)
        except BusError:
            pass
        finally:
            self._end_turn()
        self._hand_out()

    def _hand_out(self) -> None:
        """The signals read so far, to every handle's callback: on the worker if there is one."""
        if self._signals.empty():
            return
        if self.worker is not None and not self.worker.on_thread:
            self.worker.put(self._hand_out)
            return
        while not self._signals.empty():
            message = self._signals.get()
            for handle in list(self.handles):
                if handle.on_signal is not None:
                    try:
                        handle.on_signal(message)
                    except Exception:
                        log.exception("a D-Bus signal handler failed")

    def _lost(self, exc: Exception) -> None:
        if not self.replies.open:
            return
        self.close()
        log.debug("the session bus connection ended: %r", exc)
        for handle in list(self.handles):
            handle.lost()

    def close(self) -> None:
        self.replies.close()
        with self._turn:  # (the calls waiting for the turn have their None)
            self._turn.notify_all()
        if self.worker is not None:
            self.worker.unwatch(self._fd)
        with contextlib.suppress(Exception):
            self._conn.close()

    def _route(self, message: Any) -> None:
        from jeepney import HeaderFields, MessageFlag, MessageType, new_error

        kind, fields = message.header.message_type, message.header.fields
        if kind in (MessageType.method_return, MessageType.error):
            serial = fields.get(HeaderFields.reply_serial)
            if not self.replies.deliver(serial, message):
                log.debug("dropped a D-Bus reply to serial %r that nothing waits for", serial)
            with self._turn:  # (its call may wait for the turn: it has its reply)
                self._turn.notify_all()
        elif kind is MessageType.signal:
            self._signals.put(message)
        elif kind is MessageType.method_call and not message.header.flags & MessageFlag.no_reply_expected:
            # nothing is served here: say so at once rather than leave the caller waiting
            member = fields.get(HeaderFields.member)
            self.send(new_error(message, UNKNOWN_METHOD, "s", (f"{member} is not served here",)))

    def send(self, message: Any, serial: int | None = None) -> None:
        try:
            self._conn.send(message, serial=serial or next(self._serials))
        except OSError as exc:
            raise BusError(f"the session bus went away ({exc})") from exc


_links_lock = threading.Lock()
_links: dict[str, _Link] = {}  # the process's connection to each bus address


class Bus:
    """A handle on the process's one connection to the session bus (``address``: another bus,
    "SYSTEM" for the system bus). ``on_signal(message)``: every signal that arrives (each handle
    takes what is its own), on ``worker``'s thread — the connection is read there while no call
    reads it (without a worker, signals come only with the replies of calls, after them, on the
    caller's thread); ``on_lost()`` once when the bus goes away (not after :meth:`close`). A
    method call sent to this connection is answered ``UnknownMethod`` at once."""

    def __init__(
        self,
        on_signal: Callable[[Any], None] | None = None,
        on_lost: Callable[[], None] | None = None,
        address: str | None = None,
        worker: Worker | None = None,
    ) -> None:
        address = address or session_address()
        if address is None:
            raise BusError("no session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
        self.on_signal = on_signal
        self.on_lost = on_lost
        self._closed = False
        with _links_lock:
            link = _links.get(address)
            if link is None or not link.replies.open:
                link = _links[address] = _Link(address)
            self._link = link
            link.handles.append(self)
            if worker is not None:
                link.read_on(worker)
        self.unique_name = link.unique_name

    def ask(self, message: Any, timeout: float = 3.0) -> tuple[Any, ...]:
        """Send a method call and return its reply's body. Raises TimeoutError when none comes
        within ``timeout`` s, BusError when the bus is gone, jeepney's ``DBusErrorResponse`` for
        an error reply."""
        from jeepney.wrappers import unwrap_msg

        if self._closed:
            raise BusError("the session bus connection is closed")
        return tuple(unwrap_msg(self._link.call(message, timeout)))

    @property
    def alive(self) -> bool:
        """The connection is up (False once the bus went away or :meth:`close` was called)."""
        return not self._closed and self._link.replies.open

    @property
    def dropped(self) -> int:
        """Replies that nothing waited for: duplicates, strays, late ones."""
        return self._link.replies.dropped

    def lost(self) -> None:
        if not self._closed and self.on_lost is not None:
            try:
                self.on_lost()
            except Exception:
                log.exception("a D-Bus handler failed")

    def close(self) -> None:
        """Let go of this handle; the connection closes with the last one."""
        with _links_lock:
            if self._closed:
                return
            self._closed = True
            link = self._link
            link.handles.remove(self)
            if link.handles:
                return
            if _links.get(link.address) is link:
                del _links[link.address]
        link.close()


def ask(address: str | None, message: Any, timeout: float = 2.0) -> tuple[Any, ...]:
    """One call on the process's connection to a bus (opened for it if none is): its reply's body.
    Raises BusError (no bus), TimeoutError, or jeepney's ``DBusErrorResponse``."""
    bus = Bus(address=address)
    try:
        return bus.ask(message, timeout)
    finally:
        bus.close()


# ---- who owns the notification server's name (asked of the bus, not of the server) ----

def name_owner(bus: Bus, name: str, timeout: float) -> str | None:
    """The unique name of the connection that owns ``name``, None when nothing does."""
    from jeepney import message_bus
    from jeepney.wrappers import DBusErrorResponse

    try:
        (owner,) = bus.ask(message_bus.GetNameOwner(name), timeout)
    except (DBusErrorResponse, ValueError):
        return None
    return owner if isinstance(owner, str) and owner.startswith(":") else None


def pid_of(bus: Bus, unique: str, timeout: float) -> int | None:
    """The pid of the process behind a bus connection, None when the bus does not say."""
    from jeepney import message_bus
    from jeepney.wrappers import DBusErrorResponse

    try:
        (pid,) = bus.ask(message_bus.GetConnectionUnixProcessID(unique), timeout)
    except (DBusErrorResponse, TimeoutError, ValueError, BusError):
        return None
    return pid if isinstance(pid, int) and pid > 0 else None


def owner_of(bus: Bus, timeout: float) -> tuple[str, str]:
    """``BUS-ID/UNIQUE-NAME`` of the connection that owns the server's name ("" if none), and
    its process ("mako, pid 812"; "" if not known). Raises BusError when the bus is gone."""
    from jeepney import message_bus
    from jeepney.wrappers import DBusErrorResponse

    try:
        (bus_id,) = bus.ask(message_bus.GetId(), timeout)
        owner = name_owner(bus, NOTIFICATIONS, timeout)
    except (DBusErrorResponse, TimeoutError, ValueError):
        return "", ""
    if owner is None or not isinstance(bus_id, str):
        return "", ""
    pid = pid_of(bus, owner, timeout)
    process = "" if pid is None else f"pid {pid}"
    if pid is not None:  # (named from /proc where there is one)
        with contextlib.suppress(OSError), open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as fh:
            process = f"{clean(fh.read().strip(), 40)}, pid {pid}"
    return f"{clean(bus_id, 64)}/{clean(owner, 64)}", process


def server_available(timeout: float = 3.0) -> tuple[bool, str]:
    """Whether a notification server owns ``org.freedesktop.Notifications`` (or the bus can start
    one for it). For plyer and notify-send, which deliver through that server on Linux (without
    one they show nothing). Returns (True, who: "mako, pid 812" / "" / "started by the bus on
    demand") or (False, why). Linux only (jeepney is a dependency there)."""
    from jeepney import message_bus

    try:
        bus = Bus()
    except BusError as exc:
        return False, clean(exc, 160)
    try:
        owner, process = owner_of(bus, timeout)
        if owner:
            return True, process
        (names,) = bus.ask(message_bus.ListActivatableNames(), timeout)
        return (True, "started by the bus on demand") if NOTIFICATIONS in names else (False, NO_SERVER)
    except Exception as exc:
        return False, f"the session bus does not answer ({clean(exc, 120)})"
    finally:
        bus.close()


# ---- the server's signals ----

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


# ---- the notification server ----

class Backend:
    """What every backend answers; as it is, the one that shows nothing. One that does not follow
    a server has no bus name, looks for nothing and gives no ids (nothing can be withdrawn)."""

    name = "none"
    markup = False
    online = False  # can deliver right now
    # The server's unique bus name (":1.42"), after the bus's own id (a new one each time a bus
    # starts): never given to another connection, so a notification id recorded with it names
    # this very server's notification, never one of a later server (ids restart at 1).
    server_key = ""
    found = ""  # what looking for the server found (:class:`DBusBackend`)

    @property
    def connected(self) -> bool:
        """A session-bus connection is up that reports the server coming and going."""
        return False

    def show(self, message: Message, replaces: int) -> int:
        return 0

    def close(self, server_id: int) -> None:
        pass  # (no ids: nothing to withdraw)

    def shutdown(self) -> None:
        pass

    def probe(self) -> bool:
        """Ask the server who it is again (a new owner of its name); True if it answered."""
        return self.online

    def describe(self) -> str:
        return self.name


class DBusBackend(Backend):
    """org.freedesktop.Notifications over jeepney (pure Python).

    The connection to the session bus outlives the server: it also listens for the server's name
    changing owner, so a server that starts late, goes away or comes back is reported through
    ``on_server`` ("up", "down"; "lost" when the bus itself is gone) instead of being discovered by
    notifications that fail one by one.

    After :meth:`probe`, :attr:`found` tells what it found: "server" (it answered), "none"
    (nothing owns the name, nothing is set up to start for it), "odd" (a server owns the name
    but its answers were no use: :attr:`problem` says which) or "bus" (the bus went away).

    ``on_action(id, action)``, ``on_reply(id, text)`` (an inline reply), ``on_closed(id)`` (the
    user dismissed it, or it expired): the current server's signals, each click once, read on
    ``worker``'s thread. A dismissed bubble stays dismissed (a change to it does not bring it
    back; a reminder raises a new one), and its record stays so that a restart never pops it up
    again; on servers where any button closes the bubble (xfce4-notifyd) the click's
    ``ActionInvoked`` still finds its question."""

    name = "dbus"

    def __init__(
        self,
        *,
        on_action: Callable[[int, str], None] | None = None,
        on_reply: Callable[[int, str], None] | None = None,
        on_closed: Callable[[int], None] | None = None,
        on_server: Callable[[str], None] | None = None,
        expire: str | int = "never",
        sound: str = "default",
        worker: Worker | None = None,
    ) -> None:
        self.worker = worker
        self.on_action, self.on_reply, self.on_closed, self.on_server = on_action, on_reply, on_closed, on_server
        self._once = Once()
        self.sound, self.expire = sound, expire
        self.icon = app_icon()  # (its path, found once: every Notify sends it)
        self.server_info: tuple[str, ...] = ()
        self.process = ""  # the owning process, for people ("mako, pid 812"; "" if not known)
        self.capabilities: tuple[str, ...] = ()
        self.problem = ""
        self._bus: Bus | None = None

    @property
    def description(self) -> Server:
        """The server as it described itself: what it can show decides the actions sent."""
        return Server.of(self.server_info, self.capabilities)

    @property
    def bus(self) -> Bus:
        if self._bus is None:
            raise BusError("not connected")
        return self._bus

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

        try:
            self._bus = Bus(self._signal, self._on_lost, worker=self.worker)
        except BusError as exc:
            raise BackendError(clean(exc, 160)) from exc
        # sender = the well-known name: the bus passes on only signals of its owner at the time
        ours = MatchRule(type="signal", sender=NOTIFICATIONS, interface=NOTIFICATIONS, path=PATH)
        owner = MatchRule(type="signal", sender=BUS_NAME, interface=BUS_NAME, member="NameOwnerChanged",
                          path="/org/freedesktop/DBus")
        owner.add_arg_condition(0, NOTIFICATIONS)
        try:
            for rule in (ours, owner):
                self.bus.ask(message_bus.AddMatch(rule), timeout)
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
            info = self._call_raw(step, "", (), timeout)
            step = "GetCapabilities"
            (caps,) = self._call_raw(step, "", (), timeout)
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
        self.server_key, self.process = owner_of(self.bus, timeout)
        # what the server says about itself is shown in logs and doctor: sanitize it here
        self.server_info = tuple(clean(x, 60) for x in info)
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
            self.server_key, self.process = owner_of(self.bus, timeout)
        except BusError as exc:
            return self._failed("bus", f"the session bus went away ({clean(exc, 120)})")
        if not self.server_key:
            why = f"nothing owns {NOTIFICATIONS} on the session bus (a server set up to start for it {what})"
            return self._failed("none", why)
        who = self.process or self.server_key.rsplit("/", 1)[-1]  # (as people can find it)
        return self._failed("odd", f"the notification server ({who}, owner of {NOTIFICATIONS}) {what}")

    def describe(self) -> str:
        server = " ".join(self.server_info[:3]) or "unknown server"
        return f"D-Bus notification server {server} (capabilities: {', '.join(self.capabilities)})"

    def _call_raw(self, method: str, signature: str, body: tuple[Any, ...], timeout: float = 3.0) -> tuple[Any, ...]:
        """Call ``method`` of the server; its errors as they come (:meth:`_call` maps them)."""
        from jeepney import DBusAddress, new_method_call

        address = DBusAddress(PATH, bus_name=NOTIFICATIONS, interface=NOTIFICATIONS)
        return self.bus.ask(new_method_call(address, method, signature, body), timeout)

    def _call(self, method: str, signature: str, body: tuple[Any, ...]) -> tuple[Any, ...]:
        """Call ``method`` of the server: a server or bus gone is :class:`ServerGone`, any other
        error :class:`BackendError`."""
        from jeepney.wrappers import DBusErrorResponse

        try:
            return self._call_raw(method, signature, body)
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

    def _signal(self, msg: Any) -> None:
        """One signal the bus passed on (read on the worker)."""
        from jeepney import HeaderFields

        fields = msg.header.fields
        interface, member, body = fields.get(HeaderFields.interface), fields.get(HeaderFields.member), msg.body
        if interface == NOTIFICATIONS and fields.get(HeaderFields.path) == PATH:
            # Only the server's own: a signal sent to us directly passes every match rule, and
            # GNOME's shell broadcasts each click that its notification service (the owner) sends
            # us again. Ids are the owner's.
            sender = fields.get(HeaderFields.sender)
            if not self.server_key or sender != self.server_key.rsplit("/", 1)[-1]:
                log.debug("ignored %s from %s (not the server)", member, sender)
                return
            then = {"ActionInvoked": self.on_action, "NotificationReplied": self.on_reply}.get(member)
            if then is not None and len(body) >= 2 and self._once.first((member, body[0], body[1])):
                then(int(body[0]), str(body[1]))
            elif member == "NotificationClosed" and self.on_closed and len(body) >= 2 and body[1] in BY_SERVER:
                self.on_closed(int(body[0]))
        elif member == "NameOwnerChanged" and fields.get(HeaderFields.sender) == BUS_NAME:
            about_server = len(body) == 3 and body[0] == NOTIFICATIONS
            if about_server and self.on_server:
                self.on_server("up" if body[2] else "down")

    def _on_lost(self) -> None:
        self.online = False
        if self.on_server:
            self.on_server("lost")

    def show(self, message: Message, replaces: int) -> int:
        actions, hints, timeout = notify_args(message, self.description, self.expire, self.sound)
        body = (APP_NAME, replaces, self.icon, message.title, message.body, actions, hints, timeout)
        (server_id,) = self._call("Notify", "susssasa{sv}i", body)
        return int(server_id)

    def close(self, server_id: int) -> None:
        try:
            self._call("CloseNotification", "u", (server_id,))
        except ServerGone:
            raise
        except BackendError:
            pass  # already closed (by the user, or it expired): nothing to withdraw

    def shutdown(self) -> None:
        self.online = False
        bus, self._bus = self._bus, None
        if bus is not None:
            bus.close()
