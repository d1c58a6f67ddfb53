"""The user-only local channel of the running app: one JSON object per line over a Unix socket
(permissions 0600, in a 0700 runtime folder). A second `pi-notifier`, `pi-notifier show` and
`pi-notifier status` use it to reach the running app; the window subscribes to live snapshots."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import stat
import threading
from collections.abc import Callable, Iterator
from typing import Any

from notifier.core.text import clean

log = logging.getLogger(__name__)
Handler = Callable[[dict[str, Any], "Connection"], dict[str, Any] | None]
MAX_REQUEST = 1 << 20


SOCKET_ENV = "PI_NOTIFIER_SOCKET"  # set for a window spawned by an app on another channel (demo)


def socket_path() -> str:
    from notifier import paths

    return os.environ.get(SOCKET_ENV) or os.path.join(paths.runtime_dir(), "control.sock")


class Connection:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._lock = threading.Lock()
        self.closed = False

    def send(self, obj: dict[str, Any]) -> bool:
        data = (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8", "backslashreplace")
        with self._lock:
            if self.closed:
                return False
            try:
                self.sock.sendall(data)
                return True
            except OSError:
                self.close()
                return False

    def close(self) -> None:
        self.closed = True
        with contextlib.suppress(OSError):
            self.sock.close()


def _lines(sock: socket.socket) -> Iterator[dict[str, Any]]:
    buf = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except OSError:
            return
        if not chunk:
            return
        buf += chunk
        if len(buf) > MAX_REQUEST and b"\n" not in buf:
            return
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict):
                yield obj


class Server:
    """Accepts connections on a thread; each request is answered by ``handler`` (which may keep
    the connection for pushing, e.g. a subscribed window)."""

    def __init__(self, path: str, handler: Handler) -> None:
        self.path = path
        self.handler = handler
        self.sock: socket.socket | None = None
        self._thread: threading.Thread | None = None

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
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        sock.listen(8)
        self.sock = sock
        self._thread = threading.Thread(target=self._accept, name="pi-notifier-ipc", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        assert self.sock is not None
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        conn = Connection(client)
        try:
            for request in _lines(client):
                try:
                    reply = self.handler(request, conn)
                except Exception as exc:  # a bad request never takes the app down
                    log.warning("control request failed: %s", clean(exc, 200))
                    reply = {"ok": False, "error": clean(exc, 200)}
                if reply is not None:  # None: the handler keeps the connection to push to it
                    conn.send(reply)
        finally:
            conn.close()  # the peer hung up (a subscribed window closed): it is gone for good

    def stop(self) -> None:
        if self.sock is not None:
            with contextlib.suppress(OSError):
                self.sock.close()
            self.sock = None
        with contextlib.suppress(FileNotFoundError, OSError):
            os.unlink(self.path)


def request(obj: dict[str, Any], path: str | None = None, timeout: float = 3.0) -> dict[str, Any] | None:
    """Send one request to the running app; ``None`` if no app is listening."""
    target = path or socket_path()
    if not hasattr(socket, "AF_UNIX") or not os.path.exists(target):
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(target)
        sock.sendall((json.dumps(obj) + "\n").encode())
        for reply in _lines(sock):
            return reply
    except OSError:
        return None
    finally:
        sock.close()
    return None


def subscribe(obj: dict[str, Any], path: str | None = None) -> Iterator[dict[str, Any]]:
    """Open a subscription; yields pushed objects until the app goes away."""
    target = path or socket_path()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(target)
        sock.sendall((json.dumps(obj) + "\n").encode())
        yield from _lines(sock)
    except OSError:
        return
    finally:
        sock.close()
