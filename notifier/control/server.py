"""The server side of the control channel: one thread multiplexes every connection with
:mod:`selectors`; sockets are non-blocking, so a client that stops reading can hold up nobody.
Output waits in each connection's bounded buffer (:mod:`.connection`); caps and timeouts are
decided in :mod:`.limits`; a request line is parsed with bounds, a bad one is answered with an
error and the connection carries on; handlers run on a few worker threads (:mod:`.workers`)."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import selectors
import socket
import threading
import time
from typing import Any

from notifier.control import limits
from notifier.control.connection import Connection
from notifier.control.fields import BadRequest
from notifier.control.peer import listen_private, peer_uid
from notifier.control.wire import BUSY, MAX_REQUEST, encode, parse_request
from notifier.control.workers import WORKERS, Handler, WorkerPool
from notifier.core.text import clean
from notifier.system.log import LogOnce

log = logging.getLogger(__name__)


class Server:
    """Serves the control channel on one thread; each request is answered by ``handler`` (on a
    worker thread), which may keep the connection for pushing (return None: a subscribed window)."""

    def __init__(self, path: str, handler: Handler, max_connections: int = limits.MAX_CONNECTIONS,
                 idle_timeout: float = limits.IDLE_TIMEOUT, workers: int = WORKERS,
                 stall_timeout: float = limits.STALL_TIMEOUT) -> None:
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
        self._pending: set[Connection] = set()
        self._plock = threading.Lock()
        self._pool = WorkerPool(handler, workers, self._notify)
        self._stopping = False
        self._accept_paused_until = 0.0
        self._once = LogOnce(log)
        self._bound: tuple[int, int] | None = None  # the socket file this server made

    # ---- lifecycle ----

    def start(self) -> None:
        try:
            sock = listen_private(self.path)
        except BaseException:
            self._close_selector()
            raise
        self.sock = sock
        st = os.lstat(self.path)
        self._bound = (st.st_dev, st.st_ino)
        self._selector.register(sock, selectors.EVENT_READ, "listen")
        self._selector.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._thread = threading.Thread(target=self._loop, name="pi-notifier-ipc", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping = True
        self._wake()
        if self._thread is None:
            self._close_selector()
        elif self._thread is not threading.current_thread():
            self._thread.join(0.5)  # it stops at once when woken
        self._pool.stop()
        if self.sock is not None:
            with contextlib.suppress(OSError):
                self.sock.close()
            self.sock = None
        with contextlib.suppress(OSError):  # only the socket it made (never what replaced it)
            st = os.lstat(self.path)
            if self._bound == (st.st_dev, st.st_ino):
                os.unlink(self.path)

    @property
    def connections(self) -> int:
        return len(self._conns)

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # full: a wake-up is already pending
            self._wake_w.send(b"x")

    def _notify(self, conn: Connection) -> None:
        """``conn`` has output to write, was closed, or finished a request. Only the first of a
        batch wakes the server thread (the others find it flagged already), and on the server
        thread itself nothing does: so the loop must not sleep while anything is flagged."""
        with self._plock:
            first = not self._pending
            self._pending.add(conn)
        if first and threading.current_thread() is not self._thread:
            self._wake()

    # ---- the server thread ----

    def _loop(self) -> None:
        try:
            while not self._stopping:
                with self._plock:
                    flagged = bool(self._pending)
                # Flagged and not served yet (what _expire just closed: that flagged it with no
                # wake-up): serve it first, or a push from another thread, finding it flagged,
                # would wake nobody and wait unsent until some client happened to connect.
                timeout = 0.0 if flagged else limits.next_deadline(
                    self._conns.values(), time.monotonic(), self.idle_timeout,
                    self._accept_paused_until, self.stall_timeout,
                )
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
            self._close_selector()

    def _close_selector(self) -> None:
        self._selector.close()
        for s in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                s.close()

    def _event(self, what: Any, mask: int) -> None:
        if what == "listen":
            self._accept()
        elif what == "wake":
            with contextlib.suppress(OSError):
                while self._wake_r.recv(4096):
                    pass
        elif isinstance(what, Connection):
            if mask & selectors.EVENT_READ:
                self._read(what)
            if mask & selectors.EVENT_WRITE and not what.closed:
                self._notify(what)

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
                    self._once("control channel", "fds", "cannot accept (%s)", clean(exc, 100))
                    self._selector.unregister(self.sock)
                    self._accept_paused_until = time.monotonic() + 0.2
                return
            uid = peer_uid(client)
            if uid is not None and uid != os.getuid():
                self._once("control channel", f"uid{uid}", "refused a connection from uid %d", uid)
                with contextlib.suppress(OSError):
                    client.close()
                continue
            client.setblocking(False)
            if len(self._conns) >= self.max_connections:
                victim = limits.eviction_victim(self._conns.values(), time.monotonic(), self.max_connections)
                if victim is None:  # (the client retries)
                    with contextlib.suppress(OSError):
                        client.send(encode({"ok": False, "error": BUSY}))
                    with contextlib.suppress(OSError):
                        client.close()
                    continue
                log.info("control channel: %d connections, closing the longest idle", len(self._conns))
                self._close(victim)
            conn = Connection(client, self)
            self._conns[conn.fd] = conn
            self._watch(conn)

    def _watch(self, conn: Connection) -> None:
        """Watch for what ``conn`` can do next: read unless a request is being answered or the
        peer is done; write while output is queued."""
        events = limits.wanted_events(conn)
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
        conn.inbuf += chunk
        if not chunk:
            conn.eof = True
            if conn.inbuf and len(conn.inbuf) <= MAX_REQUEST:
                conn.inbuf += b"\n"  # the end of the stream ends the last request too
        self._notify(conn)

    def _dispatch(self, conn: Connection) -> None:
        """Hand the next complete request line to a worker (one at a time per connection; none
        while the client leaves its earlier answers unread)."""
        while not conn.busy and not conn.closed and conn.queued_bytes < limits.READ_PAUSE:
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
            self._pool.submit(conn, request)

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
        ours = self._conns.get(conn.fd) is conn  # (else gone already)
        if ours and not conn.closed:
            self._dispatch(conn)
            if conn.flush() and not (conn.eof and not conn.busy and not conn.pending()):  # (else done)
                self._watch(conn)
                return
        if ours or conn.closed:
            self._close(conn)

    def _expire(self, now: float) -> None:
        if self._accept_paused_until and now >= self._accept_paused_until and self.sock is not None:
            self._accept_paused_until = 0.0
            self._selector.register(self.sock, selectors.EVENT_READ, "listen")
        for conn in list(self._conns.values()):
            why = limits.timed_out(conn, now, self.idle_timeout, self.stall_timeout)
            if why == "stalled":
                conn.drop(f"it read nothing for {self.stall_timeout:g} s")
            elif why == "idle":
                log.debug("control channel: closing a connection idle for %.0f s", now - conn.active)
            if why is not None:
                self._close(conn)

