"""The few threads that run request handlers, so a slow ``status`` does not stall the server
thread (and so every other client). Whatever a handler raises becomes ``{"ok": false, "error": …}``."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from notifier.control.connection import Connection
from notifier.control.fields import BadRequest
from notifier.control.wire import encode
from notifier.core.text import clean

log = logging.getLogger(__name__)

# Answers one request; returns the reply, or None to keep the connection for pushing to it.
Handler = Callable[[dict[str, Any], Connection], "dict[str, Any] | None"]

WORKERS = 4  # threads running handlers


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


class WorkerPool:
    """Up to ``size`` threads, started as requests come; ``done(conn)`` is called (on the
    worker) once a request of ``conn`` is answered and its reply queued."""

    def __init__(self, handler: Handler, size: int, done: Callable[[Connection], None]) -> None:
        self.handler = handler
        self.size = size
        self._done = done
        self._jobs: queue.SimpleQueue[tuple[Connection, dict[str, Any]] | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._lock = threading.Lock()

    def submit(self, conn: Connection, request: dict[str, Any]) -> None:
        self._jobs.put((conn, request))
        with self._lock:
            if self._jobs.qsize() <= self._idle or len(self._threads) >= self.size:
                return
            t = threading.Thread(target=self._work, name="pi-notifier-ipc-worker", daemon=True)
            self._threads.append(t)
        t.start()

    def stop(self) -> None:
        """Each worker ends after the request it is answering (none wait for them)."""
        for _ in self._threads:
            self._jobs.put(None)

    def _work(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            job = self._jobs.get()
            with self._lock:
                self._idle -= 1
            if job is None:
                return
            conn, request = job
            try:
                self._answer(conn, request)
            finally:
                conn.active = time.monotonic()
                conn.busy = False
                self._done(conn)

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
