"""One client connection of the control channel, with its bounded output buffer.

:meth:`Connection.send` never blocks any thread: it queues into a buffer of at most
``MAX_OUTPUT`` bytes that the server thread writes out. Pushed snapshots supersede each other
(only the newest unsent one is kept), so a slow reader costs one snapshot of memory, never a
backlog; a client that lets ``MAX_OUTPUT`` pile up is dropped."""

from __future__ import annotations

import collections
import contextlib
import logging
import socket
import threading
import time
from typing import Any, Protocol

from notifier.control.wire import encode
from notifier.core.text import clean

log = logging.getLogger(__name__)

MAX_OUTPUT = 4 << 20  # bytes queued per connection (beyond the one message being written)


class Loop(Protocol):
    """The server thread, told when a connection has output to write or was closed."""

    def _notify(self, conn: Connection) -> None: ...


class Connection:
    """One client. :meth:`send` never blocks any thread: it queues (bounded) and the server
    thread writes. ``closed`` turns true for good when the peer hangs up or is dropped."""

    def __init__(self, sock: socket.socket, server: Loop | None = None) -> None:
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
