"""The user-only local channel of the running app: one JSON object per line over a Unix socket
(permissions 0600, in a 0700 runtime folder, and the peer's uid checked on every connection).
A second `pi-notifier`, `pi-notifier show` and `pi-notifier status` use it to reach the running
app; the window subscribes to live snapshots.

Nothing a client does may stop the app from telling (the tray, notifications, other clients):

- one server thread multiplexes every connection with :mod:`selectors`; sockets are
  non-blocking, so a client that stops reading can hold up nobody;
- :meth:`Connection.send` never blocks: it queues into a bounded per-connection buffer that the
  server thread writes out. Pushed snapshots supersede each other (only the newest unsent one is
  kept), so a slow reader costs one snapshot of memory, never a backlog; a client that reads
  nothing for ``STALL_TIMEOUT`` while output waits, or lets ``MAX_OUTPUT`` pile up, is dropped;
- at most ``MAX_CONNECTIONS`` connections: beyond it the oldest idle one is evicted, or the new
  one is told ``busy`` (``request`` retries that) and closed at once; connections that send no
  complete request within ``IDLE_TIMEOUT`` are closed;
- every request line is parsed with bounds (size and nesting depth); a bad one gets
  ``{"ok": false, "error": …}`` and the connection carries on; handlers run on a few worker
  threads, so a slow ``status`` does not stall the loop for other clients.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import json
import logging
import os
import queue
import selectors
import socket
import stat
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from notifier.core import jsonbound
from notifier.core.text import clean

log = logging.getLogger(__name__)
Handler = Callable[[dict[str, Any], "Connection"], dict[str, Any] | None]

MAX_REQUEST = 1 << 20  # one request line (requests are a few hundred bytes)
MAX_REQUEST_DEPTH = 16  # requests nest two or three levels
MAX_REPLY = 64 << 20  # one reply or pushed message, as a client reads it (status of many sessions)
MAX_CONNECTIONS = 64
MAX_OUTPUT = 4 << 20  # bytes queued per connection (beyond the one message being written)
READ_PAUSE = 256 << 10  # with this much of its answers unread, a client's next requests wait
IDLE_TIMEOUT = 10.0  # seconds a connection that is not subscribed may sit without a request
STALL_TIMEOUT = 5.0  # seconds queued output may wait for a peer that reads nothing at all
EVICT_GRACE = 0.5  # a connection this young is never evicted (its request is on the way)
WORKERS = 4  # threads running handlers
BUSY = "busy"  # the error a connection over the cap gets before it is closed

SOCKET_ENV = "PI_NOTIFIER_SOCKET"  # set for a window spawned by an app on another channel (demo)


def socket_path() -> str:
    from notifier.system import paths

    return os.environ.get(SOCKET_ENV) or os.path.join(paths.runtime_dir(), "control.sock")


def encode(obj: dict[str, Any]) -> bytes:
    """One message on the wire."""
    # ASCII: a lone surrogate from a badly encoded file name still travels (as an escape).
    return (json.dumps(obj, separators=(",", ":"), allow_nan=False) + "\n").encode("ascii")


# ---- bad requests ----


class BadRequest(ValueError):
    """A request that cannot be read, or a field of the wrong type or shape (a handler may raise
    it); the client gets the message as its error."""


# ---- the server ----


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of a Unix socket; None where it cannot be known."""
    try:
        if hasattr(socket, "SO_PEERCRED"):  # Linux: struct ucred {pid, uid, gid}
            creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            return int(struct.unpack("3i", creds)[1])
        if sys.platform == "darwin" or "bsd" in sys.platform:
            # getpeereid(3) is LOCAL_PEERCRED at SOL_LOCAL: struct xucred {u_int version; uid_t uid; …}
            data = sock.getsockopt(0, 0x001, 76)
            return int(struct.unpack_from("2I", data)[1])
    except (OSError, struct.error):
        return None
    return None


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
        now = time.monotonic()
        self.opened = now
        self.active = now  # the last request (or its answer): for the idle timeout and eviction
        self.busy = False  # a request is with a handler (the next one waits)
        self.eof = False  # the peer will send nothing more (or is being finished off)
        self.inbuf = bytearray()
        self.events = 0  # what the server's selector watches for
        self._queue: collections.deque[tuple[str | None, bytes]] = collections.deque()
        self._queued = 0
        self._head = memoryview(b"")  # the message being written
        self._waiting_since: float | None = None  # output pending with no progress since

    def send(self, obj: dict[str, Any] | bytes, kind: str | None = None) -> bool:
        """Queue one message; False if the connection is gone (or just got dropped for not
        reading). A message with a ``kind`` replaces an unsent one of the same kind (a newer
        snapshot supersedes the older)."""
        data = obj if isinstance(obj, bytes) else encode(obj)
        reason = None
        with self._lock:
            if self.closed:
                return False
            if kind is not None:
                for i, (k, old) in enumerate(self._queue):
                    if k == kind:
                        del self._queue[i]
                        self._queued -= len(old)
                        break
            if self._queued and self._queued + len(data) > MAX_OUTPUT:
                reason = "its output buffer is full"
            else:
                self._queue.append((kind, data))
                self._queued += len(data)
                if self._waiting_since is None:
                    self._waiting_since = time.monotonic()
        if reason is not None:
            self.drop(reason)
            return False
        if self._server is not None:
            self._server._notify(self)
        return True

    @property
    def queued_bytes(self) -> int:
        """Bytes waiting for the socket (not counting the message being written)."""
        with self._lock:
            return self._queued

    def pending(self) -> bool:
        """Output not yet written to the socket."""
        with self._lock:
            return bool(self._head) or bool(self._queue)

    def flush(self) -> bool:
        """Write what the socket takes now (server thread). False: the peer is gone."""
        with self._lock:
            if self.closed:
                return False
            progress = False
            try:
                while True:
                    if not self._head:
                        if not self._queue:
                            break
                        _, data = self._queue.popleft()
                        self._queued -= len(data)
                        self._head = memoryview(data)
                    sent = self.sock.send(self._head)
                    self._head = self._head[sent:]
                    progress = progress or sent > 0
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                return False
            if progress:
                self._waiting_since = time.monotonic()
            if not self._head and not self._queue:
                self._waiting_since = None
            return True

    def stalled_since(self) -> float | None:
        with self._lock:
            return self._waiting_since

    def drop(self, reason: str) -> None:
        log.info("dropped a control client: %s", clean(reason, 200))
        self.close()

    def close(self) -> None:
        """Forget everything queued; the server thread closes the socket."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            self._queue.clear()
            self._queued = 0
            self._head = memoryview(b"")
        if self._server is not None:
            self._server._notify(self)
        else:
            with contextlib.suppress(OSError):
                self.sock.close()


class Server:
    """Serves the control channel on one thread; each request is answered by ``handler`` (on a
    worker thread), which may keep the connection for pushing (return None: a subscribed window)."""

    def __init__(
        self,
        path: str,
        handler: Handler,
        max_connections: int = MAX_CONNECTIONS,
        idle_timeout: float = IDLE_TIMEOUT,
        workers: int = WORKERS,
    ) -> None:
        self.path = path
        self.handler = handler
        self.max_connections = max_connections
        self.idle_timeout = idle_timeout
        self.workers = workers
        self.sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._selector: selectors.BaseSelector | None = None
        self._wake_r: socket.socket | None = None
        self._wake_w: socket.socket | None = None
        self._conns: dict[int, Connection] = {}  # by file descriptor
        self._pending: set[Connection] = set()
        self._plock = threading.Lock()
        self._jobs: queue.SimpleQueue[tuple[Connection, dict[str, Any]] | None] = queue.SimpleQueue()
        self._worker_threads: list[threading.Thread] = []
        self._idle_workers = 0
        self._wlock = threading.Lock()
        self._stopping = False
        self._accept_paused_until = 0.0
        self._warned: set[str] = set()

    # ---- lifecycle ----

    def start(self) -> None:
        folder = os.path.dirname(self.path)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        st = os.stat(folder)
        if st.st_uid != os.getuid() or stat.S_IMODE(st.st_mode) & 0o077:
            os.chmod(folder, 0o700)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            sock.bind(self.path)
        except OSError:
            sock.close()
            raise
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        sock.listen(socket.SOMAXCONN)
        sock.setblocking(False)
        self.sock = sock
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(sock, selectors.EVENT_READ, "listen")
        self._selector.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._thread = threading.Thread(target=self._loop, name="pi-notifier-ipc", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping = True
        self._wake()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(0.5)  # it stops at once when woken
        for _ in self._worker_threads:
            self._jobs.put(None)
        if self.sock is not None:
            with contextlib.suppress(OSError):
                self.sock.close()
            self.sock = None
        with contextlib.suppress(FileNotFoundError, OSError):
            os.unlink(self.path)

    @property
    def connections(self) -> int:
        return len(self._conns)

    # ---- cross-thread wake-ups ----

    def _wake(self) -> None:
        if self._wake_w is not None:
            with contextlib.suppress(OSError):  # full: a wake-up is already pending
                self._wake_w.send(b"x")

    def _notify(self, conn: Connection) -> None:
        """``conn`` has output to write, was closed, or finished a request."""
        with self._plock:
            first = not self._pending
            self._pending.add(conn)
        if first and threading.current_thread() is not self._thread:
            self._wake()

    # ---- the server thread ----

    def _loop(self) -> None:
        assert self._selector is not None
        try:
            while not self._stopping:
                timeout = self._next_deadline(time.monotonic())
                try:
                    ready = self._selector.select(timeout)
                except InterruptedError:
                    continue
                for key, mask in ready:
                    try:
                        self._event(key.data, mask)
                    except Exception:  # a bug in here must not end the channel for everyone
                        log.exception("control channel: an event failed")
                        if isinstance(key.data, Connection):
                            self._close(key.data)
                self._service()
                self._expire(time.monotonic())
        except Exception:
            log.exception("the control channel stopped")
        finally:
            for conn in list(self._conns.values()):
                self._close(conn)
            self._selector.close()
            for s in (self._wake_r, self._wake_w):
                if s is not None:
                    with contextlib.suppress(OSError):
                        s.close()

    def _event(self, what: Any, mask: int) -> None:
        if what == "listen":
            self._accept()
        elif what == "wake":
            assert self._wake_r is not None
            with contextlib.suppress(OSError):
                while self._wake_r.recv(4096):
                    pass
        elif isinstance(what, Connection):
            if mask & selectors.EVENT_READ:
                self._read(what)
            if mask & selectors.EVENT_WRITE and not what.closed:
                self._notify(what)

    def _warn_once(self, key: str, message: str, *args: Any) -> None:
        if key not in self._warned:
            self._warned.add(key)
            log.warning(message, *args)

    def _accept(self) -> None:
        assert self.sock is not None and self._selector is not None
        for _ in range(64):  # then give the connections a turn
            try:
                client, _ = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    # Out of descriptors: stop watching the socket for a moment instead of
                    # spinning on a connection that cannot be taken.
                    self._warn_once("fds", "control channel: cannot accept (%s)", clean(exc, 100))
                    self._selector.unregister(self.sock)
                    self._accept_paused_until = time.monotonic() + 0.2
                return
            uid = peer_uid(client)
            if uid is not None and uid != os.getuid():
                self._warn_once(f"uid{uid}", "control channel: refused a connection from uid %d", uid)
                with contextlib.suppress(OSError):
                    client.close()
                continue
            client.setblocking(False)
            if len(self._conns) >= self.max_connections and not self._evict(time.monotonic()):
                with contextlib.suppress(OSError):
                    client.send(encode({"ok": False, "error": BUSY}))
                with contextlib.suppress(OSError):
                    client.close()
                continue
            conn = Connection(client, self)
            self._conns[conn.fd] = conn
            self._watch(conn)

    def _evict(self, now: float) -> bool:
        """Make room for a new connection: the longest idle one that is neither subscribed nor
        being answered, or, when subscriptions hold over half the places, the oldest of them."""
        idle = [
            c
            for c in self._conns.values()
            if not c.kept and not c.busy and not c.inbuf and now - c.active >= EVICT_GRACE and not c.pending()
        ]
        if not idle:
            kept = [c for c in self._conns.values() if c.kept]
            if len(kept) <= self.max_connections // 2:
                return False
            idle = kept
        victim = min(idle, key=lambda c: c.active)
        log.info("control channel: %d connections, closing the longest idle", len(self._conns))
        self._close(victim)
        return True

    def _watch(self, conn: Connection) -> None:
        """Watch for what ``conn`` can do next: read unless a request is being answered or the
        peer is done; write while output is queued."""
        assert self._selector is not None
        events = 0
        if not conn.busy and not conn.eof and conn.queued_bytes < READ_PAUSE:
            events |= selectors.EVENT_READ
        if conn.pending():
            events |= selectors.EVENT_WRITE
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
        if conn.events and self._selector is not None:
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
        if not chunk:
            conn.eof = True
            if conn.inbuf and len(conn.inbuf) <= MAX_REQUEST:
                conn.inbuf += b"\n"  # the end of the stream ends the last request too
        else:
            conn.inbuf += chunk
        self._notify(conn)

    def _dispatch(self, conn: Connection) -> None:
        """Hand the next complete request line to a worker (one at a time per connection; none
        while the client leaves its earlier answers unread)."""
        while not conn.busy and not conn.closed and conn.queued_bytes < READ_PAUSE:
            end = conn.inbuf.find(b"\n")
            if end < 0:
                if len(conn.inbuf) > MAX_REQUEST:
                    conn.inbuf.clear()
                    conn.eof = True  # answered, then closed: what follows is the same request
                    conn.send({"ok": False, "error": f"request longer than {MAX_REQUEST} bytes"})
                return
            line = bytes(conn.inbuf[:end])
            del conn.inbuf[: end + 1]
            if not line.strip():
                continue
            try:
                request = parse_request(line)
            except BadRequest as exc:
                conn.send({"ok": False, "error": clean(exc, 160)})
                continue
            conn.busy = True
            conn.active = time.monotonic()
            self._submit(conn, request)

    def _service(self) -> None:
        """Act on what other threads (and this one) flagged: output, closes, finished requests."""
        while True:
            with self._plock:
                todo, self._pending = self._pending, set()
            if not todo:
                return
            for conn in todo:
                try:
                    self._serve_one(conn)
                except Exception:
                    log.exception("control channel: a connection failed")
                    self._close(conn)

    def _serve_one(self, conn: Connection) -> None:
        if conn.closed:
            self._close(conn)
            return
        if self._conns.get(conn.fd) is not conn:
            return  # already gone
        self._dispatch(conn)
        if not conn.flush():
            self._close(conn)
            return
        if conn.eof and not conn.busy and not conn.pending():
            self._close(conn)  # the peer is done and has everything it asked for
            return
        self._watch(conn)

    def _expire(self, now: float) -> None:
        assert self._selector is not None
        if self._accept_paused_until and now >= self._accept_paused_until and self.sock is not None:
            self._accept_paused_until = 0.0
            self._selector.register(self.sock, selectors.EVENT_READ, "listen")
        for conn in list(self._conns.values()):
            waiting = conn.stalled_since()
            if waiting is not None and now - waiting > STALL_TIMEOUT:
                conn.drop(f"it read nothing for {STALL_TIMEOUT:g} s")
                self._close(conn)
            elif (
                not conn.kept and not conn.busy and waiting is None and now - conn.active > self.idle_timeout
            ):
                log.debug("control channel: closing a connection idle for %.0f s", now - conn.active)
                self._close(conn)

    def _next_deadline(self, now: float) -> float | None:
        """Seconds until a timeout could fire; None (sleep until something happens) when none can."""
        deadlines = [self._accept_paused_until] if self._accept_paused_until else []
        for conn in self._conns.values():
            waiting = conn.stalled_since()
            if waiting is not None:
                deadlines.append(waiting + STALL_TIMEOUT)
            elif not conn.kept and not conn.busy:
                deadlines.append(conn.active + self.idle_timeout)
        if not deadlines:
            return None
        return max(min(deadlines) - now, 0.0) + 0.01

    # ---- workers ----

    def _submit(self, conn: Connection, request: dict[str, Any]) -> None:
        self._jobs.put((conn, request))
        with self._wlock:
            if self._jobs.qsize() <= self._idle_workers or len(self._worker_threads) >= self.workers:
                return
            t = threading.Thread(target=self._work, name="pi-notifier-ipc-worker", daemon=True)
            self._worker_threads.append(t)
        t.start()

    def _work(self) -> None:
        while True:
            with self._wlock:
                self._idle_workers += 1
            job = self._jobs.get()
            with self._wlock:
                self._idle_workers -= 1
            if job is None:
                return
            conn, request = job
            try:
                self._answer(conn, request)
            finally:
                conn.active = time.monotonic()
                conn.busy = False
                self._notify(conn)

    def _answer(self, conn: Connection, request: dict[str, Any]) -> None:
        reply = answer(self.handler, request, conn)
        if reply is None:  # the handler keeps the connection to push to it
            conn.kept = True
            return
        try:
            data = encode(reply)
        except (TypeError, ValueError) as exc:
            log.warning("control reply not serializable: %s", clean(exc, 200))
            data = encode({"ok": False, "error": "internal error"})
        conn.send(data)


def parse_request(line: bytes) -> dict[str, Any]:
    """One request line (without its newline) → the request object, or :class:`BadRequest`."""
    try:
        request = jsonbound.loads(line, max_bytes=MAX_REQUEST, max_depth=MAX_REQUEST_DEPTH)
    except ValueError as exc:  # BoundedJSONError, UnicodeDecodeError
        raise BadRequest("bad request: " + clean(exc, 120)) from None
    if not isinstance(request, dict):
        raise BadRequest("bad request: not a JSON object")
    return request


def answer(handler: Handler, request: dict[str, Any], conn: Connection) -> dict[str, Any] | None:
    """The reply to send for ``request``: what ``handler`` returns (None: it keeps ``conn``), or
    ``{"ok": false, "error": …}`` whatever it raised."""
    try:
        reply = handler(request, conn)
    except BadRequest as exc:
        return {"ok": False, "error": clean(exc, 200)}
    except Exception as exc:  # a bad request never takes the app down
        log.warning("control request failed: %s", clean(repr(exc), 200))
        return {"ok": False, "error": clean(exc, 200) or type(exc).__name__}
    return reply


# ---- clients ----


def _failure(message: str) -> dict[str, Any]:
    """The app is there but the request did not go through (as opposed to None: no app)."""
    return {"ok": False, "error": message}


class _Reader:
    """The objects the app sends, one per line. Iterating ends at EOF; raises OSError
    (TimeoutError once ``deadline`` passes) and ValueError for a line over ``limit``."""

    def __init__(self, sock: socket.socket, deadline: float | None, limit: int = MAX_REPLY) -> None:
        self.sock = sock
        self.deadline = deadline  # None: wait as long as it takes
        self.limit = limit
        self.buf = bytearray()

    def __iter__(self) -> Iterator[dict[str, Any]]:
        while True:
            end = self.buf.find(b"\n")
            while end >= 0:
                line = bytes(self.buf[:end])
                del self.buf[: end + 1]
                try:
                    obj = jsonbound.loads(line, max_bytes=self.limit)
                except ValueError:
                    obj = None
                if isinstance(obj, dict):
                    yield obj
                end = self.buf.find(b"\n")
            if len(self.buf) > self.limit:
                raise ValueError(f"a message longer than {self.limit} bytes")
            if self.deadline is None:
                self.sock.settimeout(None)
            else:
                left = self.deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("timed out")
                self.sock.settimeout(left)
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                return
            self.buf += chunk


class _Busy(Exception):
    """The app's listen queue is full (its connection limit, or a burst): try again shortly."""


def _connect(target: str, deadline: float) -> socket.socket | None:
    """A socket connected to the app, or None when no app listens there. Raises TimeoutError
    when the app does not accept in time, :class:`_Busy` when its queue is full."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(max(deadline - time.monotonic(), 0.001))
    try:
        sock.connect(target)
    except BlockingIOError:  # EAGAIN: a Unix socket's full backlog (not "nobody listens")
        sock.close()
        raise _Busy() from None
    except TimeoutError:
        sock.close()
        raise
    except OSError:  # no such file, refused (a stale socket), not a socket, not ours
        sock.close()
        return None
    return sock


def _exchange(obj: dict[str, Any], target: str, deadline: float) -> dict[str, Any] | None:
    try:
        sock = _connect(target, deadline)
    except _Busy:
        return _failure(BUSY)
    except TimeoutError:
        return _failure("the app does not accept connections (timed out)")
    if sock is None:
        return None
    try:
        try:
            sock.sendall(encode(obj))
        except OSError:
            pass  # it may have answered (busy) and hung up already: read what it said
        try:
            for reply in _Reader(sock, deadline):
                return reply
        except TimeoutError:
            return _failure("the app did not answer in time")
        except (OSError, ValueError) as exc:
            return _failure(f"the connection failed: {clean(exc, 100)}")
        return _failure("the app closed the connection without answering")
    finally:
        sock.close()


def request(obj: dict[str, Any], path: str | None = None, timeout: float = 3.0) -> dict[str, Any] | None:
    """Send one request to the running app and return its reply.

    ``None`` means no app is listening. An app that is there but cannot answer (busy past
    ``timeout``, hung up, too slow) gives ``{"ok": False, "error": …}``."""
    target = path or socket_path()
    if not hasattr(socket, "AF_UNIX") or not os.path.exists(target):
        return None
    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        reply = _exchange(obj, target, deadline)
        if reply is None or reply.get("error") != BUSY or time.monotonic() + delay >= deadline:
            return reply
        time.sleep(delay)  # the app is at its connection limit: try again in a moment
        delay = min(delay * 2, 0.25)


def subscribe(
    obj: dict[str, Any], path: str | None = None, timeout: float = 10.0
) -> Iterator[dict[str, Any]]:
    """Open a subscription; yields pushed objects until the app goes away (or drops us)."""
    target = path or socket_path()
    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        try:
            sock = _connect(target, deadline)
        except _Busy:
            sock = None
        except TimeoutError:
            return
        else:
            if sock is None:
                return  # no app
        if sock is not None:
            try:
                with contextlib.suppress(OSError):  # it may have said busy and hung up already
                    sock.sendall(encode(obj))
                reader = _Reader(sock, deadline)  # for the first message; then no limit
                for message in reader:
                    if reader.deadline is not None:
                        if message.get("error") == BUSY:
                            break
                        reader.deadline = None
                    yield message
                else:
                    return
            except (OSError, ValueError):
                return
            finally:
                sock.close()
        if time.monotonic() + delay >= deadline:
            return
        time.sleep(delay)  # the app is at its connection limit: try again in a moment
        delay = min(delay * 2, 0.25)
