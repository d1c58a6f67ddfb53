"""The control channel of the running app (server and client), over the one JSON-lines
channel (:mod:`notifier.channel`: framing, bounds, limits, who may talk).

A second ``pi-notifier``, ``pi-notifier show`` and ``pi-notifier status`` use it to reach the
running app (:func:`request`); the window subscribes to live snapshots (:func:`subscribe`).
Nothing a client does may stop the app from telling (the tray, notifications, other clients):
one server thread multiplexes every connection with :mod:`selectors` (non-blocking sockets,
bounded output buffers, caps and timeouts); a request line is parsed with bounds, a bad one is
answered with an error and the connection carries on; handlers run on a few worker threads,
started as requests come and ended once idle, so an idle app keeps none."""

from __future__ import annotations

import collections
import contextlib
import errno
import logging
import math
import os
import selectors
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

from notifier.channel import (
    EVICT_GRACE,
    IDLE_TIMEOUT,
    MAX_CONNECTIONS,
    MAX_DEPTH,
    MAX_LINE,
    MAX_OUTPUT,
    MAX_REPLY,
    READ_PAUSE,
    STALL_TIMEOUT,
    BadLine,
    Lines,
    dial,
    encode,
    listen_private,
    parse_object,
    peer_uid,
)
from notifier.core.text import clean
from notifier.system import paths
from notifier.system.log import LogOnce
from notifier.system.paths import NotOurs
from notifier.system.supervisor import Backoff

if TYPE_CHECKING:
    import socket

log = logging.getLogger(__name__)
say_once = LogOnce(log)

BUSY = "busy"  # the error a connection over the cap gets before it is closed
WORKERS = 4  # threads running handlers
SOCKET_ENV = "PI_NOTIFIER_SOCKET"  # set for a window spawned by an app on another channel (demo)

__all__ = ["Connection", "Server", "request", "subscribe", "socket_path"]


def socket_path() -> str:
    return os.environ.get(SOCKET_ENV) or os.path.join(paths.runtime_dir(), "control.sock")


# ---- one client connection (server side) ----


class Connection:
    """One client. :meth:`send` never blocks any thread: it queues (bounded) and the server
    thread writes. ``closed`` turns true for good when the peer hangs up or is dropped."""

    def __init__(self, sock: socket.socket, server: Server | None = None) -> None:
        self.sock = sock
        self.fd = sock.fileno()
        self._server = server
        self._lock = threading.Lock()
        self.closed = False
        self.kept = False  # the handler keeps it for pushing (a subscribed window)
        self.active = time.monotonic()  # the last request (or its answer): idle timeout, eviction
        self.busy = False  # a request is with a handler (the next one waits)
        self.eof = False  # the peer will send nothing more (or is being finished off)
        self.lines = Lines()  # what it sent, cut into requests
        self.events = 0  # what the server's selector watches for
        self._queue: collections.deque[tuple[str | None, bytes]] = collections.deque()
        self.queued_bytes = 0  # waiting for the socket (not counting the message being written)
        self._head = memoryview(b"")  # the message being written
        self.waiting_since: float | None = None  # output pending with no progress since

    def send(self, obj: dict[str, Any] | bytes, kind: str | None = None) -> bool:
        """Queue one message; False if the connection is gone (or just got dropped for not
        reading). A message with a ``kind`` replaces an unsent one of the same kind (a newer
        snapshot supersedes the older)."""
        data = obj if isinstance(obj, bytes) else encode(obj)
        with self._lock:
            if self.closed:
                return False
            for old in [m for m in self._queue if kind is not None and m[0] == kind]:
                self._queue.remove(old)
                self.queued_bytes -= len(old[1])
            full = self.queued_bytes > 0 and self.queued_bytes + len(data) > MAX_OUTPUT
            if not full:
                self._queue.append((kind, data))
                self.queued_bytes += len(data)
                self.waiting_since = self.waiting_since or time.monotonic()
        if full:
            self.close("its output buffer is full")
            return False
        if self._server is not None:
            self._server.wake()
        return True

    def pending(self) -> bool:
        """Output not yet written to the socket."""
        return bool(self._head or self._queue)

    def flush(self) -> bool:
        """Write what the socket takes now (server thread). False: the peer is gone."""
        with self._lock:
            if self.closed:
                return False
            try:
                while self._head or self._queue:
                    if not self._head:
                        data = self._queue.popleft()[1]
                        self.queued_bytes -= len(data)
                        self._head = memoryview(data)
                    sent = self.sock.send(self._head)
                    self._head = self._head[sent:]
                    self.waiting_since = time.monotonic() if sent else self.waiting_since
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                return False
            if not self.pending():
                self.waiting_since = None
            return True

    def close(self, reason: str | None = None) -> None:
        """Forget everything queued (``reason``: it is dropped); the server thread closes the
        socket."""
        if reason is not None:
            log.info("dropped a control client: %s", reason)
        with self._lock:
            if self.closed:
                return
            self.closed = True
            self._queue.clear()
            self.queued_bytes = 0
            self._head = memoryview(b"")
        if self._server is not None:
            self._server.wake()
        else:
            with contextlib.suppress(OSError):
                self.sock.close()

    def idle(self) -> bool:
        """Unsubscribed, unanswered, with nothing to write (since ``active``)."""
        return not (self.kept or self.busy or self.waiting_since is not None)


# ---- the handler threads ----

# Answers one request; returns the reply, or None to keep the connection for pushing to it.
Handler = Callable[[dict[str, Any], Connection], "dict[str, Any] | None"]


def answer(handler: Handler, request: dict[str, Any], conn: Connection) -> dict[str, Any] | None:
    """The reply to send for ``request``: what ``handler`` returns (None: it keeps ``conn``), or
    ``{"ok": false, "error": …}`` whatever it raised."""
    try:
        return handler(request, conn)
    except BadLine as exc:
        return {"ok": False, "error": clean(exc, 200)}
    except Exception as exc:  # a bad request never takes the app down
        log.warning("control request failed: %s", repr(exc))
        return {"ok": False, "error": clean(exc, 200) or type(exc).__name__}


def _encoded(reply: dict[str, Any]) -> bytes:
    try:
        return encode(reply)
    except (TypeError, ValueError) as exc:
        log.warning("control reply not serializable: %s", exc)
        return encode({"ok": False, "error": "internal error"})


# ---- the server thread ----


class Server:
    """Serves the control channel on one thread; each request is answered by ``handler`` (on a
    worker thread), which may keep the connection for pushing (return None: a subscribed window)."""

    def __init__(self, path: str, handler: Handler, max_connections: int = MAX_CONNECTIONS,
                 idle_timeout: float = IDLE_TIMEOUT, stall_timeout: float = STALL_TIMEOUT) -> None:
        import socket

        self.path = path
        self.max_connections = max_connections
        self.idle_timeout = idle_timeout
        self.stall_timeout = stall_timeout
        self.sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()  # (wakes the server thread)
        for end in (self._wake_r, self._wake_w):
            end.setblocking(False)
        self._conns: dict[int, Connection] = {}  # by file descriptor
        self.handler = handler
        self._jobs: collections.deque[tuple[Connection, dict[str, Any]]] = collections.deque()  # (for a worker)
        self._workers = 0  # threads answering requests: up to WORKERS, started as requests come
        self._jobs_lock = threading.Lock()
        self._stopping = False
        self._accept_paused_until = 0.0
        self._bound: tuple[int, int] | None = None  # the socket file this server made
        self.watch_pipe(self._wake_r.fileno(), lambda: None)

    # ---- lifecycle ----

    def start(self) -> None:
        try:
            self.sock = listen_private(self.path)
        except BaseException:
            self._close_selector()
            raise
        st = os.lstat(self.path)
        self._bound = (st.st_dev, st.st_ino)
        self._selector.register(self.sock, selectors.EVENT_READ, self._accept)
        self._thread = threading.Thread(target=self._loop, name="pi-notifier-ipc", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping = True
        self.wake()
        if self._thread is None:
            self._close_selector()
        elif self._thread is not threading.current_thread():
            self._thread.join(0.5)  # it stops at once when woken
        with self._jobs_lock:  # (each worker ends after the request it is answering)
            self._jobs.clear()
        if self.sock is not None:
            with contextlib.suppress(OSError):
                self.sock.close()
            self.sock = None
        with contextlib.suppress(OSError):  # only the socket it made (never what replaced it)
            st = os.lstat(self.path)
            if self._bound == (st.st_dev, st.st_ino):
                os.unlink(self.path)

    def watch_pipe(self, fd: int, on_readable: Callable[[], None]) -> None:
        """Call ``on_readable`` on the server thread when the pipe ``fd`` has something to read
        (what is there is read and dropped): the app's signals wake this thread, not one more."""
        self._selector.register(fd, selectors.EVENT_READ, partial(drain, fd, on_readable))

    @property
    def connections(self) -> int:
        return len(self._conns)

    def wake(self) -> None:
        """Have the server thread look at every connection (output queued, one closed, a request
        answered)."""
        with contextlib.suppress(OSError):  # full: a wake-up is already pending
            self._wake_w.send(b"x")

    # ---- the server thread ----

    def _loop(self) -> None:
        try:
            while not self._stopping:
                try:
                    ready = self._selector.select(self._next_deadline(time.monotonic()))
                except InterruptedError:
                    continue
                for key, mask in ready:
                    try:
                        if not isinstance(key.data, Connection):
                            key.data()
                        elif mask & selectors.EVENT_READ:
                            self._read(key.data)
                    except Exception:  # a bug in here must not end the channel for everyone
                        log.exception("control channel: an event failed")
                        if isinstance(key.data, Connection):
                            self._close(key.data)
                for conn in list(self._conns.values()):  # (output, closes, requests answered)
                    try:
                        self._serve(conn)
                    except Exception:
                        log.exception("control channel: a connection failed")
                        self._close(conn)
                self._expire(time.monotonic())
        except Exception:
            log.exception("the control channel stopped")
        finally:
            for conn in list(self._conns.values()):
                self._close(conn)
            self._close_selector()

    def _close_selector(self) -> None:
        self._selector.close()
        for s in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                s.close()

    def _accept(self) -> None:
        assert self.sock is not None
        for _ in range(64):  # then give the connections a turn
            try:
                client, _ = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    # Out of descriptors: stop watching the socket for a moment instead of
                    # spinning on a connection that cannot be taken.
                    say_once("control channel", "fds", "cannot accept (%s)", clean(exc, 100))
                    self._selector.unregister(self.sock)
                    self._accept_paused_until = time.monotonic() + 0.2
                return
            uid = peer_uid(client)
            if uid is not None and uid != os.getuid():
                say_once("control channel", f"uid{uid}", "refused a connection from uid %d", uid)
            elif len(self._conns) < self.max_connections or self._evict():
                client.setblocking(False)
                conn = Connection(client, self)
                self._conns[conn.fd] = conn
                self._watch(conn)
                continue
            else:  # (the client retries)
                with contextlib.suppress(OSError):
                    client.send(encode({"ok": False, "error": BUSY}))
            with contextlib.suppress(OSError):
                client.close()

    def _evict(self) -> bool:
        """Make room for a new connection: close the longest idle one that is neither subscribed
        nor being answered (one that has sent only part of a request is idle too: a request comes
        whole at once, so half lines cannot hold every place), or, when subscriptions hold over
        half the places, the oldest of them; False when nobody should go."""
        now = time.monotonic()
        conns = [c for c in self._conns.values() if c.idle() and now - c.active >= EVICT_GRACE]
        kept = [c for c in self._conns.values() if c.kept]
        if not conns and len(kept) > self.max_connections // 2:
            conns = kept
        if not conns:
            return False
        log.info("control channel: %d connections, closing the longest idle", len(self._conns))
        self._close(min(conns, key=lambda c: c.active))
        return True

    def _watch(self, conn: Connection) -> None:
        """Watch for what ``conn`` can do next: read unless a request is being answered, the peer
        is done or too much of its answers is unread; write while output is queued."""
        reading = not conn.busy and not conn.eof and conn.queued_bytes < READ_PAUSE
        events = (selectors.EVENT_READ if reading else 0) | (selectors.EVENT_WRITE if conn.pending() else 0)
        if events == conn.events:
            return
        if conn.events == 0:
            self._selector.register(conn.sock, events, conn)
        elif events == 0:
            self._selector.unregister(conn.sock)
        else:
            self._selector.modify(conn.sock, events, conn)
        conn.events = events

    def _close(self, conn: Connection) -> None:
        conn.close()
        if self._conns.get(conn.fd) is conn:
            del self._conns[conn.fd]
        if conn.events:
            with contextlib.suppress(KeyError, ValueError, OSError):
                self._selector.unregister(conn.sock)
            conn.events = 0
        with contextlib.suppress(OSError):
            conn.sock.close()

    def _read(self, conn: Connection) -> None:
        try:
            chunk = conn.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._close(conn)
            return
        conn.lines.feed(chunk or b"\n")  # the end of the stream ends the last request too (a blank line is none)
        conn.eof = not chunk  # (read only until then)

    def _dispatch(self, conn: Connection) -> None:
        """Hand the next complete request line to a worker (one at a time per connection; none
        while the client leaves its earlier answers unread); a bad line, or one too long (skipped
        to its end), is answered with an error and the next line is read as usual."""

        def ready() -> bool:
            return not conn.busy and not conn.closed and conn.queued_bytes < READ_PAUSE

        if not ready():
            return
        for line in conn.lines:  # (each line is taken as it is given: none is lost by stopping)
            try:
                if line is None:
                    raise BadLine(f"a line longer than {MAX_LINE} bytes")
                request = parse_object(line, MAX_LINE, MAX_DEPTH) if line.strip() else None
            except BadLine as exc:
                conn.send({"ok": False, "error": f"bad request: {clean(exc, 160)}"})
            else:
                if request is not None:
                    conn.busy = True
                    conn.active = time.monotonic()
                    self._submit(conn, request)
            if not ready():
                return

    def _submit(self, conn: Connection, request: dict[str, Any]) -> None:
        with self._jobs_lock:
            self._jobs.append((conn, request))
            if self._workers >= WORKERS:
                return
            self._workers += 1
        threading.Thread(target=self._work, name="pi-notifier-ipc-worker", daemon=True).start()

    def _work(self) -> None:
        """A worker: answers requests until none waits (an idle app keeps no worker)."""
        while True:
            with self._jobs_lock:
                if not self._jobs:
                    self._workers -= 1
                    return
                conn, request = self._jobs.popleft()
            try:
                reply = answer(self.handler, request, conn)
                if reply is None:  # the handler keeps the connection to push to it
                    conn.kept = True
                else:
                    conn.send(_encoded(reply))
            finally:
                conn.active = time.monotonic()
                conn.busy = False
                self.wake()

    def _serve(self, conn: Connection) -> None:
        """Hand it its next request, write what it can take; close it when it is done."""
        if not conn.closed:
            self._dispatch(conn)
            if conn.flush() and not (conn.eof and not conn.busy and not conn.pending()):  # (else done)
                self._watch(conn)
                return
        self._close(conn)

    def _closing_at(self, conn: Connection) -> float | None:
        """When ``conn`` is closed unless something happens first (None: not for that): its output
        stalled (nothing read) past the stall timeout, or it sat idle past the idle timeout."""
        if conn.waiting_since is not None:
            return conn.waiting_since + self.stall_timeout
        return conn.active + self.idle_timeout if conn.idle() else None

    def _next_deadline(self, now: float) -> float | None:
        """Seconds until a connection is due to close (or accepting resumes); None (sleep until
        something happens) when none is."""
        deadlines = [self._accept_paused_until] if self._accept_paused_until else []
        deadlines += [at for conn in self._conns.values() if (at := self._closing_at(conn)) is not None]
        return max(min(deadlines) - now, 0.0) + 0.01 if deadlines else None

    def _expire(self, now: float) -> None:
        """Resume accepting when due; close who is past its closing time."""
        if self._accept_paused_until and now >= self._accept_paused_until and self.sock is not None:
            self._accept_paused_until = 0.0
            self._selector.register(self.sock, selectors.EVENT_READ, self._accept)
        for conn in list(self._conns.values()):
            at = self._closing_at(conn)
            if at is None or now <= at:
                continue
            if conn.waiting_since is not None:
                conn.close(f"it read nothing for {self.stall_timeout:g} s")
            else:
                log.debug("control channel: closing a connection idle for %.0f s", now - conn.active)
            self._close(conn)


def drain(fd: int, then: Callable[[], None]) -> None:
    """A pipe (:meth:`Server.watch_pipe`, the wake-up socket): read what is there, then act."""
    with contextlib.suppress(OSError):
        os.read(fd, 4096)
    then()


# ---- the client side ----


class _Failure(dict):  # type: ignore[type-arg]
    """The app is there but the request did not go through (said here, not by the app).
    ``sent``: it was sent, and the app may carry it out all the same (it did not answer)."""


def _conversation(obj: dict[str, Any], path: str | None, timeout: float) -> Iterator[dict[str, Any]]:
    """Send ``obj`` and yield what the app sends back, retrying while it says it is busy (at its
    connection limit) until ``timeout``. The first message must come by then; later ones may
    take as long as they take. Yields nothing when no app of ours listens (none at all, or one
    of another user: the socket file must be ours, and so must the process that accepted the
    connection); an app that is there but does not answer gives one :class:`_Failure`."""
    try:
        target = path or socket_path()
    except OSError:  # no runtime folder of our own (said where it was looked for): no app
        return
    deadline = time.monotonic() + timeout
    backoff = Backoff(0.01, 0.25, healthy_s=math.inf)
    while True:
        try:
            peer = dial(target, max(deadline - time.monotonic(), 0.001), MAX_REPLY)
        except BlockingIOError:  # EAGAIN: a Unix socket's full backlog (not "nobody listens")
            first: dict[str, Any] = _Failure(ok=False, error=BUSY)
        except NotOurs as exc:
            say_once(f"control socket {target}", str(exc), "not used: %s (not this user's app)", exc)
            return
        except TimeoutError:
            yield _Failure(ok=False, error="the app does not accept connections (timed out)")
            return
        except OSError:  # no such file, refused (a stale socket), not a socket
            return
        else:
            with peer:
                sent = False  # (once sent, a request the app did not answer may still be carried out)
                with contextlib.suppress(OSError):  # it may have answered (busy) and hung up already
                    peer.send(obj)
                    sent = True
                messages = peer.objects()
                try:
                    first = next(messages, _Failure(ok=False, error="the app closed the connection without answering",
                                                    sent=sent))
                except TimeoutError:
                    first = _Failure(ok=False, error="the app did not answer in time", sent=sent)
                except (OSError, BadLine) as exc:
                    first = _Failure(ok=False, error=f"the connection failed: {clean(exc, 100)}", sent=sent)
                if first.get("error") != BUSY:
                    yield first
                    peer.deadline = None  # the first message came: the rest may take their time
                    with contextlib.suppress(OSError, BadLine):  # (a subscription the app ended)
                        yield from messages
                    return
        delay = backoff.next()
        if time.monotonic() + delay >= deadline:
            yield _Failure(first)
            return
        time.sleep(delay)  # the app is at its connection limit: try again in a moment


def request(obj: dict[str, Any], path: str | None = None, timeout: float = 3.0) -> dict[str, Any] | None:
    """Send one request to the running app and return its reply.

    ``None`` means no app is listening. An app that is there but cannot answer (busy past
    ``timeout``, hung up, too slow) gives ``{"ok": False, "error": …}``, with ``"sent": True``
    where the request reached it unanswered (it may carry it out all the same)."""
    return next(_conversation(obj, path, timeout), None)


def subscribe(obj: dict[str, Any], path: str | None = None, timeout: float = 10.0) -> Iterator[dict[str, Any]]:
    """Open a subscription; yields pushed objects until the app goes away (or drops us)."""
    for message in _conversation(obj, path, timeout):
        if isinstance(message, _Failure):
            return
        yield message
