"""The user-only local channel of the running app: one JSON object per line over a Unix socket
(permissions 0600, in a 0700 runtime folder, and the peer's uid checked on every connection).
A second `pi-notifier`, `pi-notifier show` and `pi-notifier status` use it to reach the running
app; the window subscribes to live snapshots.

Nothing a client does may stop the app from telling (the tray, notifications, other clients):
one server thread multiplexes every connection with bounded buffers, caps and timeouts
(:mod:`.server`, :mod:`.connection`, :mod:`.limits`), handlers run on a few worker threads (:mod:`.workers`).

- :mod:`.wire`: framing, ``encode``, the bounded request parse, where the socket lives;
- :mod:`.peer`: the private socket and the peer's uid;
- :mod:`.connection`: one client and its bounded output buffer;
- :mod:`.server`: the selector loop;
- :mod:`.limits`: the caps and timeouts, and who is evicted or timed out;
- :mod:`.workers`: the handler threads;
- :mod:`.client`: :func:`request` and :func:`subscribe`;
- :mod:`.fields`: the error a handler raises for a request it cannot read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from notifier.system.lazy import lazy_names

if TYPE_CHECKING:
    from notifier.system.ipc.client import request, subscribe
    from notifier.system.ipc.connection import MAX_OUTPUT, Connection
    from notifier.system.ipc.fields import BadRequest
    from notifier.system.ipc.limits import (
        EVICT_GRACE,
        IDLE_TIMEOUT,
        MAX_CONNECTIONS,
        READ_PAUSE,
        STALL_TIMEOUT,
    )
    from notifier.system.ipc.peer import peer_uid
    from notifier.system.ipc.server import Server
    from notifier.system.ipc.wire import (
        BUSY,
        MAX_REPLY,
        MAX_REQUEST,
        MAX_REQUEST_DEPTH,
        SOCKET_ENV,
        encode,
        parse_request,
        socket_path,
    )
    from notifier.system.ipc.workers import WORKERS, Handler, answer

# Each name → the module it is from, imported when the name is first used: a client (``status``
# asking the running app) does not import the server's selector loop and worker threads.
_FROM = {
    "request": "client",
    "subscribe": "client",
    "MAX_OUTPUT": "connection",
    "Connection": "connection",
    "BadRequest": "fields",
    "EVICT_GRACE": "limits",
    "IDLE_TIMEOUT": "limits",
    "MAX_CONNECTIONS": "limits",
    "READ_PAUSE": "limits",
    "STALL_TIMEOUT": "limits",
    "peer_uid": "peer",
    "Server": "server",
    "BUSY": "wire",
    "MAX_REPLY": "wire",
    "MAX_REQUEST": "wire",
    "MAX_REQUEST_DEPTH": "wire",
    "SOCKET_ENV": "wire",
    "encode": "wire",
    "parse_request": "wire",
    "socket_path": "wire",
    "WORKERS": "workers",
    "Handler": "workers",
    "answer": "workers",
}

__getattr__ = lazy_names(__name__, _FROM, globals())

__all__ = [
    "BUSY",
    "EVICT_GRACE",
    "IDLE_TIMEOUT",
    "MAX_CONNECTIONS",
    "MAX_OUTPUT",
    "MAX_REPLY",
    "MAX_REQUEST",
    "MAX_REQUEST_DEPTH",
    "READ_PAUSE",
    "SOCKET_ENV",
    "STALL_TIMEOUT",
    "WORKERS",
    "BadRequest",
    "Connection",
    "Handler",
    "Server",
    "answer",
    "encode",
    "parse_request",
    "peer_uid",
    "request",
    "socket_path",
    "subscribe",
]
