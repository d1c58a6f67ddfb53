"""The client side of the control channel: one request and its reply (:func:`request`), or a
subscription to what the app pushes (:func:`subscribe`). Both retry while the app says it is
at its connection limit, and never wait past their deadline for an app that does not answer."""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from notifier.control.peer import server_not_ours, socket_not_ours
from notifier.control.wire import BUSY, MAX_REPLY, encode, socket_path
from notifier.core import jsonbound
from notifier.core.text import clean
from notifier.system.log import LogOnce

if TYPE_CHECKING:
    import socket

log = logging.getLogger(__name__)
_distrusted = LogOnce(log)  # (socket, why): each said once


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


def _distrust(target: str, why: str) -> None:
    """What answers at ``target`` is not this user's app: said once, never listened to."""
    _distrusted(f"control socket {target}", why, "not used: %s (not this user's app)", why)


def _connect(target: str, deadline: float) -> socket.socket | None:
    """A socket connected to this user's app, or None when no app of ours listens there (none
    at all, or one of another user: the socket file must be ours, and so must the process that
    accepted the connection). Raises TimeoutError when the app does not accept in time,
    :class:`_Busy` when its queue is full."""
    try:
        why = socket_not_ours(target)
    except OSError:
        return None  # nothing there
    if why is not None:
        _distrust(target, why)
        return None
    import socket  # (imported once there is an app to talk to: ``status`` without one needs none)

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
    why = server_not_ours(sock)
    if why is not None:  # (a socket of ours, served by another user's process)
        sock.close()
        _distrust(target, why)
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
    try:
        target = path or socket_path()
    except OSError:  # no runtime folder of our own (said where it was looked for): no app
        return None
    if not os.path.exists(target):
        return None
    import socket

    if not hasattr(socket, "AF_UNIX"):
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
    try:
        target = path or socket_path()
    except OSError:
        return
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
